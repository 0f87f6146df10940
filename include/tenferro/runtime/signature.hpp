#pragma once
// Value-free descriptions of inputs: what an engine may specialise a plan on.

#include <span>
#include <vector>

#include "tenferro/tensor/tensor.hpp"

namespace tenferro {

enum class LayoutClass : unsigned char {
  Contiguous,  // compact column-major
  Strided,     // any other layout without zero strides
  Broadcast,   // has a zero stride on an axis of extent > 1
};

std::string_view name(LayoutClass c);

struct TensorSignature {
  DType dtype = DType::F64;
  Shape shape;
  Placement placement;
  LayoutClass layout = LayoutClass::Contiguous;
  Strides strides;
  /// Largest power of two (<= 64) dividing the data address.
  std::uint8_t alignment = 64;

  static TensorSignature of(const Tensor& t);
  friend bool operator==(const TensorSignature&, const TensorSignature&) = default;
};

/// The detail an engine may ask for with NeedsSpecialization; a request starts
/// with dtype, shape and placement only.
enum SignatureDetail : unsigned {
  kDetailNone = 0,
  kDetailLayout = 1,
  kDetailStrides = 2,
  kDetailAlignment = 4,
  kDetailAll = 7,
};

class InputSignature {
 public:
  InputSignature() = default;
  explicit InputSignature(std::vector<TensorSignature> entries);
  static InputSignature of(std::span<const Tensor> inputs);

  const std::vector<TensorSignature>& entries() const { return entries_; }
  std::size_t size() const { return entries_.size(); }
  const TensorSignature& operator[](std::size_t i) const { return entries_[i]; }
  std::size_t hash() const { return hash_; }
  /// The signature with only the fields in `detail` kept (others defaulted).
  InputSignature masked(unsigned detail) const;
  std::string to_string() const;
  friend bool operator==(const InputSignature& a, const InputSignature& b) {
    return a.hash_ == b.hash_ && a.entries_ == b.entries_;
  }

 private:
  std::vector<TensorSignature> entries_;
  std::size_t hash_ = 0;
};

}  // namespace tenferro
