#pragma once
// The layout, scan and sort operations of the one surface (see
// tenferro/ad/ops.hpp, which includes this header): templates over
// SurfaceTensor, and the direct tier's forms with a trailing Backend&.

#include "tenferro/ad/ops.hpp"

namespace tenferro {

// ---- structural (each returns a fresh tensor; Tensor's view methods copy nothing) -----

/// x.permute(perm) materialised compactly (cache-blocked kernel).
template <SurfaceTensor T>
T permute(const T& x, Axes perm) {
  return detail::apply_primitive<T>(prim::Transpose{std::move(perm)}, {x});
}
template <BackendRef B>
Tensor permute(const Tensor& x, std::span<const std::int64_t> perm, B& backend) {
  return detail::run_kind(prim::Transpose{Axes(perm)}, {&x}, backend);
}
/// Swaps axes a and b.
template <SurfaceTensor T>
T transpose(const T& x, std::int64_t a = 0, std::int64_t b = 1);
/// A compact copy of x with a new shape (column-major element order). One
/// extent may be -1 (resolved when x's size and the other extents are constant).
template <SurfaceTensor T>
T reshape(const T& x, ShapeArg shape);
template <BackendRef B>
Tensor reshape(const Tensor& x, std::span<const std::int64_t> shape, B& backend) {
  return detail::value_of(reshape(detail::borrow(backend, x), ShapeArg(shape)));
}
/// x's axis i becomes axis dims[i] of `shape` (XLA's broadcast_in_dim; dims
/// strictly increasing, x's extents 1 or equal to the result's).
template <SurfaceTensor T>
T broadcast_in_dim(const T& x, ShapeArg shape, Axes dims);
template <BackendRef B>
Tensor broadcast_in_dim(const Tensor& x, std::span<const std::int64_t> shape,
                        std::span<const std::int64_t> dims, B& backend) {
  return detail::value_of(
      broadcast_in_dim(detail::borrow(backend, x), ShapeArg(shape), Axes(dims)));
}
/// NumPy broadcast (right-aligned) to `shape`.
template <SurfaceTensor T>
T broadcast_to(const T& x, ShapeArg shape);
/// XLA slice: per axis [start, limit) with a positive stride; an empty
/// stride means stride 1 on every axis.
template <SurfaceTensor T>
T slice(const T& x, Shape start, Shape limit, Shape stride = {}) {
  if (stride.empty()) stride = Shape(start.size(), 1);
  return detail::apply_primitive<T>(
      prim::Slice{std::move(start), std::move(limit), std::move(stride)}, {x});
}
template <BackendRef B>
Tensor slice(const Tensor& x, std::span<const std::int64_t> start,
             std::span<const std::int64_t> limit, std::span<const std::int64_t> stride,
             B& backend) {
  return detail::value_of(
      slice(detail::borrow(backend, x), Shape(start), Shape(limit), Shape(stride)));
}
/// Pads each axis with `low` and `high` elements of `value` (negative values
/// crop) and `interior` elements between neighbours (>= 0; empty: none).
template <SurfaceTensor T>
T pad(const T& x, Shape low, Shape high, Scalar value, Shape interior = {}) {
  if (interior.empty()) interior = Shape(low.size(), 0);
  return detail::apply_primitive<T>(
      prim::Pad{std::move(low), std::move(high), std::move(interior), value}, {x});
}
template <BackendRef B>
Tensor pad(const Tensor& x, std::span<const std::int64_t> low, std::span<const std::int64_t> high,
           Scalar value, B& backend, std::span<const std::int64_t> interior = {}) {
  return detail::value_of(
      pad(detail::borrow(backend, x), Shape(low), Shape(high), value, Shape(interior)));
}
/// Joins tensors along an existing axis; dtypes promote.
template <SurfaceTensor T>
T concatenate(std::span<const T> xs, std::int64_t axis) {
  return detail::concatenate_span<T>(xs, axis);
}
template <SurfaceTensor T>
T concatenate(const std::vector<T>& xs, std::int64_t axis) {
  return detail::concatenate_span<T>(xs, axis);
}
template <SurfaceTensor T, std::size_t N>
T concatenate(const T (&xs)[N], std::int64_t axis) {
  return detail::concatenate_span<T>(std::span<const T>(xs, N), axis);
}
template <SurfaceTensor T>
T concatenate(std::initializer_list<T> xs, std::int64_t axis) {
  return detail::concatenate_span<T>(std::span<const T>(xs.begin(), xs.size()), axis);
}
template <BackendRef B>
Tensor concatenate(ListRef<Tensor> xs, std::int64_t axis, B& backend) {
  const std::vector<DirectTensor> on_backend = detail::on_each(backend, xs);
  return detail::value_of(detail::concatenate_span<DirectTensor>(on_backend, axis));
}
/// Joins tensors of one shape along a new axis inserted at `axis`; dtypes promote.
template <SurfaceTensor T>
T stack(std::span<const T> xs, std::int64_t axis) {
  return detail::stack_span<T>(xs, axis);
}
template <SurfaceTensor T>
T stack(const std::vector<T>& xs, std::int64_t axis) {
  return detail::stack_span<T>(xs, axis);
}
template <SurfaceTensor T, std::size_t N>
T stack(const T (&xs)[N], std::int64_t axis) {
  return detail::stack_span<T>(std::span<const T>(xs, N), axis);
}
template <SurfaceTensor T>
T stack(std::initializer_list<T> xs, std::int64_t axis) {
  return detail::stack_span<T>(std::span<const T>(xs.begin(), xs.size()), axis);
}
template <BackendRef B>
Tensor stack(ListRef<Tensor> xs, std::int64_t axis, B& backend) {
  const std::vector<DirectTensor> on_backend = detail::on_each(backend, xs);
  return detail::value_of(detail::stack_span<DirectTensor>(on_backend, axis));
}
/// numpy.tile in column-major terms: x repeated reps[d] times along axis d
/// (out[..., j, ...] = x[..., j mod x_d, ...]). Shorter reps are padded
/// with 1s; longer ones give x trailing unit axes (NumPy's leading ones).
template <SurfaceTensor T>
T tile(const T& x, Shape reps) {
  T v = x;
  if (static_cast<std::int64_t>(reps.size()) > x.rank()) {
    SymShape s;
    for (std::int64_t d = 0; d < x.rank(); ++d) s.push_back(x.shape()[static_cast<std::size_t>(d)]);
    while (static_cast<std::int64_t>(s.size()) < static_cast<std::int64_t>(reps.size()))
      s.push_back(SymDim(1));
    v = reshape(x, std::move(s));
  }
  while (static_cast<std::int64_t>(reps.size()) < v.rank()) reps.push_back(1);
  return detail::apply_primitive<T>(prim::Tile{std::move(reps)}, {v});
}
template <BackendRef B>
Tensor tile(const Tensor& x, std::span<const std::int64_t> reps, B& backend) {
  return detail::value_of(tile(detail::borrow(backend, x), Shape(reps)));
}
/// Reverses the given axes.
template <SurfaceTensor T>
T reverse(const T& x, Axes axes) {
  return detail::apply_primitive<T>(prim::Reverse{std::move(axes)}, {x});
}
template <BackendRef B>
Tensor reverse(const Tensor& x, std::span<const std::int64_t> axes, B& backend) {
  return detail::run_kind(prim::Reverse{Axes(axes)}, {&x}, backend);
}
/// reverse under PyTorch's name (torch.flip).
template <SurfaceTensor T>
T flip(const T& x, Axes axes) {
  return reverse(x, std::move(axes));
}
template <BackendRef B>
Tensor flip(const Tensor& x, std::span<const std::int64_t> axes, B& backend) {
  return detail::run_kind(prim::Reverse{Axes(axes)}, {&x}, backend);
}
/// Diagonal extract: the offset diagonal of the matrices in axis1/axis2
/// becomes the first axis, the other axes follow (Tensor::diagonal's order).
template <SurfaceTensor T>
T diagonal(const T& x, std::int64_t offset = 0, std::int64_t axis1 = 0, std::int64_t axis2 = 1) {
  return detail::apply_primitive<T>(prim::Diagonal{offset, axis1, axis2}, {x});
}
template <BackendRef B>
Tensor diagonal(const Tensor& x, std::int64_t offset, std::int64_t axis1, std::int64_t axis2,
                B& backend) {
  return detail::run_kind(prim::Diagonal{offset, axis1, axis2}, {&x}, backend);
}
/// Inverse of diagonal(x, offset, 0, 1): [n, batch...] -> [n+|offset|,
/// n+|offset|, batch...] with x on the offset diagonal and zeros elsewhere.
template <SurfaceTensor T>
T diag_embed(const T& x, std::int64_t offset = 0) {
  return detail::apply_primitive<T>(prim::DiagEmbed{offset}, {x});
}
template <BackendRef B>
Tensor diag_embed(const Tensor& x, std::int64_t offset, B& backend) {
  return detail::run_kind(prim::DiagEmbed{offset}, {&x}, backend);
}
/// Lower/upper triangle of the matrices in axes 0 and 1 (batch last); k
/// shifts the diagonal (k > 0 above the main one), the rest becomes zero.
template <SurfaceTensor T>
T tril(const T& x, std::int64_t k = 0) {
  return detail::apply_primitive<T>(prim::Triangle{true, k}, {x});
}
template <BackendRef B>
Tensor tril(const Tensor& x, std::int64_t k, B& backend) {
  return detail::run_kind(prim::Triangle{true, k}, {&x}, backend);
}
template <SurfaceTensor T>
T triu(const T& x, std::int64_t k = 0) {
  return detail::apply_primitive<T>(prim::Triangle{false, k}, {x});
}
template <BackendRef B>
Tensor triu(const Tensor& x, std::int64_t k, B& backend) {
  return detail::run_kind(prim::Triangle{false, k}, {&x}, backend);
}
/// Picks entries of `axis` at `index` (1-D, i32/i64; negative counts from the end).
template <SurfaceTensor T>
T index_select(const T& x, std::int64_t axis, const T& index) {
  return detail::apply_primitive<T>(prim::IndexSelect{axis}, {x, index});
}
template <BackendRef B>
Tensor index_select(const Tensor& x, std::int64_t axis, const Tensor& index, B& backend) {
  return detail::run_kind(prim::IndexSelect{axis}, {&x, &index}, backend);
}
/// numpy.take_along_axis: index has x's rank and extents (except along `axis`).
template <SurfaceTensor T>
T take_along_axis(const T& x, const T& index, std::int64_t axis) {
  return detail::apply_primitive<T>(prim::TakeAlongAxis{axis}, {x, index});
}
template <BackendRef B>
Tensor take_along_axis(const Tensor& x, const Tensor& index, std::int64_t axis, B& backend) {
  return detail::run_kind(prim::TakeAlongAxis{axis}, {&x, &index}, backend);
}
/// x with src added at index along `axis` (torch.scatter_add semantics):
/// out[..., index[i...], ...] += src[i...]; index and src have equal shapes.
template <SurfaceTensor T>
T scatter_add(const T& x, std::int64_t axis, const T& index, const T& src) {
  return detail::apply_primitive<T>(prim::ScatterAdd{axis}, {x, index, src});
}
template <BackendRef B>
Tensor scatter_add(const Tensor& x, std::int64_t axis, const Tensor& index, const Tensor& src,
                   B& backend) {
  return detail::run_kind(prim::ScatterAdd{axis}, {&x, &index, &src}, backend);
}
/// Lossless conversion (DTypeMismatch otherwise); cast converts lossily on
/// request (float -> int truncates, complex -> real keeps the real part).
template <SurfaceTensor T>
T convert(const T& x, DType dtype) {
  return detail::apply_primitive<T>(prim::Convert{dtype, false}, {x});
}
template <BackendRef B>
Tensor convert(const Tensor& x, DType dtype, B& backend) {
  return detail::run_kind(prim::Convert{dtype, false}, {&x}, backend);
}
template <SurfaceTensor T>
T cast(const T& x, DType dtype) {
  return detail::apply_primitive<T>(prim::Convert{dtype, true}, {x});
}
template <BackendRef B>
Tensor cast(const Tensor& x, DType dtype, B& backend) {
  return detail::run_kind(prim::Convert{dtype, true}, {&x}, backend);
}

// ---- scans and sorting ----------------------------------------------------------------
// Axes are column-major tensor axes: PyTorch's dim d of a rank-r tensor is our
// axis r - 1 - d (negative axes count from the end); a rank-0 tensor takes
// axis 0 or -1. Scans: bool and integers accumulate in and return i64
// (integer overflow wraps), the other dtypes keep theirs. Sorting is
// PyTorch's stable sort: equal elements keep their original order (in both
// directions), NaN counts as larger than every number, -0.0 equals 0.0;
// indices are i64; complex tensors are not ordered (DTypeMismatch).

/// Running sum along `axis` (torch.cumsum; PyTorch dim d is our axis
/// rank-1-d), from the end when `reverse`. bool and integers accumulate in
/// i64. Linear: the vjp is the reverse cumsum.
template <SurfaceTensor T>
T cumsum(const T& x, std::int64_t axis, bool reverse = false) {
  return detail::apply_primitive<T>(prim::Cumulative{ReduceOp::Sum, axis, reverse}, {x});
}
template <BackendRef B>
Tensor cumsum(const Tensor& x, std::int64_t axis, B& backend, bool reverse = false) {
  return detail::run_kind(prim::Cumulative{ReduceOp::Sum, axis, reverse}, {&x}, backend);
}
/// Running product along `axis` (torch.cumprod). The first derivative is exact
/// with zeros in x (PyTorch's formula); higher ones are exact away from zeros.
template <SurfaceTensor T>
T cumprod(const T& x, std::int64_t axis, bool reverse = false) {
  return detail::apply_primitive<T>(prim::Cumulative{ReduceOp::Prod, axis, reverse}, {x});
}
template <BackendRef B>
Tensor cumprod(const Tensor& x, std::int64_t axis, B& backend, bool reverse = false) {
  return detail::run_kind(prim::Cumulative{ReduceOp::Prod, axis, reverse}, {&x}, backend);
}
/// Indices (i64) that sort x along `axis`: stable, NaN largest (torch.argsort(stable=True)).
template <SurfaceTensor T>
T argsort(const T& x, std::int64_t axis, bool descending = false) {
  return detail::apply_primitive<T>(prim::Argsort{axis, descending, -1}, {x});
}
template <BackendRef B>
Tensor argsort(const Tensor& x, std::int64_t axis, B& backend, bool descending = false) {
  return detail::run_kind(prim::Argsort{axis, descending, -1}, {&x}, backend);
}
namespace detail {
/// {values, indices} from the first k (k < 0: all) sorting indices; the
/// direct tier sorts values and indices in one pass (sort_prefix).
template <SurfaceTensor T>
std::pair<T, T> sorted(const T& x, std::int64_t axis, std::int64_t k, bool descending) {
  if constexpr (std::is_same_v<T, DirectTensor>) {
    auto [values, indices] = sort_prefix(x.value(), axis, k, descending, x.backend());
    return {on(x.backend(), std::move(values)), on(x.backend(), std::move(indices))};
  } else {
    T idx = apply_primitive<T>(prim::Argsort{axis, descending, k}, {x});
    if (x.rank() == 0) return {x, idx};
    return {take_along_axis(x, idx, axis), idx};
  }
}
}  // namespace detail
/// {values, indices} of x sorted along `axis` (torch.sort(stable=True)).
/// The values are take_along_axis(x, indices): differentiable as a gather.
template <SurfaceTensor T>
std::pair<T, T> sort(const T& x, std::int64_t axis, bool descending = false) {
  return detail::sorted(x, axis, -1, descending);
}
template <BackendRef B>
std::pair<Tensor, Tensor> sort(const Tensor& x, std::int64_t axis, B& backend,
                               bool descending = false) {
  auto [v, i] = sort(detail::borrow(backend, x), axis, descending);
  return {std::move(v).value(), std::move(i).value()};
}
/// {values, indices} of the k largest (smallest unless `largest`) entries
/// along `axis`, sorted; ties keep the lower index first (torch.topk).
/// 0 <= k <= extent of the axis, else InvalidArgument.
template <SurfaceTensor T>
std::pair<T, T> topk(const T& x, std::int64_t k, std::int64_t axis, bool largest = true) {
  if (k < 0) {
    fail(ErrorKind::InvalidArgument, "topk", "k = ", k, " is negative; choose 0 <= k <= extent");
  }
  return detail::sorted(x, axis, k, largest);
}
template <BackendRef B>
std::pair<Tensor, Tensor> topk(const Tensor& x, std::int64_t k, std::int64_t axis, B& backend,
                               bool largest = true) {
  auto [v, i] = topk(detail::borrow(backend, x), k, axis, largest);
  return {std::move(v).value(), std::move(i).value()};
}

}  // namespace tenferro
