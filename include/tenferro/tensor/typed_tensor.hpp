#pragma once
// TypedTensor<T>: a Tensor whose dtype is checked once, with element access.

#include <array>
#include <utility>
#include <vector>

#include "tenferro/tensor/tensor.hpp"

namespace tenferro {

template <class T>
class TypedTensor {
 public:
  /// Throws DTypeMismatch when t.dtype() is not dtype_of_v<T>.
  explicit TypedTensor(Tensor t) : t_(std::move(t)) {
    if (!t_.defined()) fail(ErrorKind::InvalidArgument, "TypedTensor", "tensor is undefined");
    if (t_.dtype() != dtype_of_v<T>) {
      fail(ErrorKind::DTypeMismatch, "TypedTensor", "tensor has dtype ", name(t_.dtype()),
           " but TypedTensor expects ", name(dtype_of_v<T>), "; convert or cast it first");
    }
  }
  static TypedTensor from_col_major(const Shape& shape, const std::vector<T>& data) {
    return TypedTensor(Tensor::from_col_major(shape, data));
  }
  static TypedTensor zeros(const Shape& shape) {
    return TypedTensor(tenferro::zeros(shape.span(), dtype_of_v<T>));
  }

  const Tensor& tensor() const& { return t_; }
  Tensor tensor() && { return std::move(t_); }
  operator const Tensor&() const { return t_; }  // NOLINT: a TypedTensor is a Tensor

  const Shape& shape() const { return t_.shape(); }
  std::int64_t rank() const { return t_.rank(); }
  std::int64_t numel() const { return t_.numel(); }

  /// Element at a multi-index (bounds-checked, negative indices not allowed).
  template <class... I>
  T operator()(I... idx) const {
    return t_.data<T>()[element_offset(
        std::array<std::int64_t, sizeof...(I)>{static_cast<std::int64_t>(idx)...})];
  }
  /// Writable element; requires unique ownership of the storage.
  template <class... I>
  T& mut(I... idx) {
    return t_.mutable_data<T>()[element_offset(
        std::array<std::int64_t, sizeof...(I)>{static_cast<std::int64_t>(idx)...})];
  }
  std::vector<T> to_vector() const { return t_.to_vector<T>(); }

 private:
  template <std::size_t K>
  std::int64_t element_offset(const std::array<std::int64_t, K>& idx) const {
    if (static_cast<std::int64_t>(K) != t_.rank()) {
      fail(ErrorKind::RankMismatch, "TypedTensor", "got ", K, " indices for a rank-", t_.rank(),
           " tensor");
    }
    std::int64_t off = 0;
    for (std::size_t k = 0; k < K; ++k) {
      if (idx[k] < 0 || idx[k] >= t_.shape()[k]) {
        fail(ErrorKind::AxisOutOfBounds, "TypedTensor", "index ", idx[k], " out of range for axis ",
             k, " with extent ", t_.shape()[k]);
      }
      off += idx[k] * t_.strides()[k];
    }
    return off;
  }
  Tensor t_;
};

}  // namespace tenferro
