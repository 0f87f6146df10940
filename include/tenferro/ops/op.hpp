#pragma once
// Operations: an identity (name + hashable parameters), a fixed number of
// inputs and outputs, and shape/dtype inference that also works on symbolic
// dimensions. Kernels are not part of an op: engines own them.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tenferro/core/dtype.hpp"
#include "tenferro/ops/sym_dim.hpp"

namespace tenferro {

/// dtype and (possibly symbolic) shape of a value.
struct TensorMeta {
  DType dtype = DType::F64;
  SymShape shape;
  std::int64_t rank() const { return static_cast<std::int64_t>(shape.size()); }
  friend bool operator==(const TensorMeta&, const TensorMeta&) = default;
};

/// A requirement inference could not decide with symbolic extents; it is
/// checked when dimensions bind.
struct ShapeConstraint {
  enum class Kind : unsigned char {
    SameShape,  // inputs[lhs] and inputs[rhs] have equal shapes
    DimEqual,   // two dimension expressions are equal
  };
  Kind kind = Kind::DimEqual;
  std::size_t lhs_input = 0;
  std::size_t rhs_input = 0;
  SymDim lhs_dim;
  SymDim rhs_dim;
  std::string what;  // human-readable description for the error message

  static ShapeConstraint same_shape(std::size_t i, std::size_t j);
  static ShapeConstraint dims_equal(SymDim a, SymDim b, std::string what);
};

struct InferenceResult {
  std::vector<TensorMeta> outputs;
  std::vector<ShapeConstraint> constraints;
};

/// Checks constraints against concrete input shapes and bindings; throws
/// ShapeMismatch naming `op_name` and the violated constraint.
void check_constraints(std::string_view op_name, std::span<const ShapeConstraint> constraints,
                       std::span<const Shape> input_shapes, const DimBindings& bindings = {});

class Op {
 public:
  virtual ~Op() = default;
  /// Stable name: a primitive's name ("add", "dot_general") or an extension
  /// family id ("mylib.scale_by.v1").
  virtual std::string_view name() const = 0;
  /// A dense index of this op's kind, below primitive_kind_count(), for the
  /// core primitives (two ops with one key have one name, so one rule set);
  /// -1 for every other op. AdContext finds a primitive's rules by it
  /// without looking the name up.
  virtual std::int32_t kind_key() const { return -1; }
  virtual bool is_extension() const { return false; }
  virtual std::size_t input_count() const = 0;
  virtual std::size_t output_count() const = 0;
  /// Hash of name and parameters (equal ops hash equally).
  virtual std::size_t hash() const = 0;
  /// Same name and equal parameters.
  virtual bool equals(const Op& other) const = 0;
  /// Output metadata from input metadata. Throws a Validation error naming
  /// the op for inputs it cannot accept.
  virtual InferenceResult infer(std::span<const TensorMeta> inputs) const = 0;
  /// Human-readable parameters, e.g. "axes=[0, 1], keepdim=false".
  virtual std::string describe() const { return std::string(name()); }
  /// When `other`, applied to the same inputs, also computes every output of
  /// this op with the same values and derivatives (svdvals within svd,
  /// eigvalsh within eigh): the index of each of this op's outputs among
  /// other's. Compiling a program then runs one op for both (a gradient
  /// graph recomputing the vectors of a values-only forward op is the common
  /// case). nullopt (the default): no such relation.
  virtual std::optional<std::vector<std::size_t>> outputs_within(const Op& other) const {
    (void)other;
    return std::nullopt;
  }
};

using OpPtr = std::shared_ptr<const Op>;

/// Hash and equality functors over OpPtr, for hash maps keyed by op identity.
struct OpPtrHash {
  std::size_t operator()(const OpPtr& op) const { return op->hash(); }
};
struct OpPtrEqual {
  bool operator()(const OpPtr& a, const OpPtr& b) const { return a == b || a->equals(*b); }
};

/// Combines hashes (boost-style mixing).
inline std::size_t hash_combine(std::size_t seed, std::size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

}  // namespace tenferro
