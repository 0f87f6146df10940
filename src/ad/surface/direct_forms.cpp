// The direct tier's forms of the one surface (tenferro/ad/ops.hpp,
// ops_layout.hpp, composite.hpp): each is the template of its header on
// DirectTensor, with the operands borrowed for the call. They are defined
// here rather than inline so that a user translation unit that includes the
// umbrella header compiles none of these instantiations.

#include "tenferro/ad/composite.hpp"
#include "tenferro/ad/ops.hpp"

namespace tenferro {

// ---- tenferro/ad/ops.hpp

Tensor polygamma(std::int64_t n, const Tensor& x, Backend& backend) {
  return detail::value_of(polygamma(n, detail::borrow(backend, x)));
}
std::pair<Tensor, Tensor> frexp(const Tensor& x, Backend& backend) {
  auto [m, e] = frexp(detail::borrow(backend, x));
  return {std::move(m).value(), std::move(e).value()};
}
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, Backend& backend) {
  return detail::value_of(
      where(detail::borrow(backend, cond), detail::borrow(backend, a), detail::borrow(backend, b)));
}
Tensor clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi,
             Backend& backend) {
  return detail::value_of(clamp(detail::borrow(backend, x), lo, hi));
}
Tensor var(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend, double correction,
           bool keepdim) {
  return detail::value_of(var(detail::borrow(backend, x), Axes(axes), correction, keepdim));
}
Tensor std_dev(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend,
               double correction, bool keepdim) {
  return detail::value_of(std_dev(detail::borrow(backend, x), Axes(axes), correction, keepdim));
}
Tensor argmax(const Tensor& x, std::int64_t axis, Backend& backend, bool keepdim) {
  return detail::value_of(argmax(detail::borrow(backend, x), axis, keepdim));
}
Tensor argmin(const Tensor& x, std::int64_t axis, Backend& backend, bool keepdim) {
  return detail::value_of(argmin(detail::borrow(backend, x), axis, keepdim));
}
Tensor dot_general(const Tensor& lhs, const Tensor& rhs, const DotDims& dims, Backend& backend) {
  return detail::value_of(
      dot_general(detail::borrow(backend, lhs), detail::borrow(backend, rhs), dims));
}
Tensor matmul(const Tensor& a, const Tensor& b, Backend& backend) {
  return detail::value_of(matmul(detail::borrow(backend, a), detail::borrow(backend, b)));
}

// ---- tenferro/ad/ops_layout.hpp

Tensor permute(const Tensor& x, std::span<const std::int64_t> perm, Backend& backend) {
  return detail::value_of(permute(detail::borrow(backend, x), Axes(perm)));
}
Tensor reshape(const Tensor& x, std::span<const std::int64_t> shape, Backend& backend) {
  return detail::value_of(reshape(detail::borrow(backend, x), ShapeArg(shape)));
}
Tensor broadcast_in_dim(const Tensor& x, std::span<const std::int64_t> shape,
                        std::span<const std::int64_t> dims, Backend& backend) {
  return detail::value_of(
      broadcast_in_dim(detail::borrow(backend, x), ShapeArg(shape), Axes(dims)));
}
Tensor slice(const Tensor& x, std::span<const std::int64_t> start,
             std::span<const std::int64_t> limit, std::span<const std::int64_t> stride,
             Backend& backend) {
  return detail::value_of(
      slice(detail::borrow(backend, x), Shape(start), Shape(limit), Shape(stride)));
}
Tensor pad(const Tensor& x, std::span<const std::int64_t> low, std::span<const std::int64_t> high,
           Scalar value, Backend& backend, std::span<const std::int64_t> interior) {
  return detail::value_of(
      pad(detail::borrow(backend, x), Shape(low), Shape(high), value, Shape(interior)));
}
Tensor concatenate(ListRef<Tensor> xs, std::int64_t axis, Backend& backend) {
  const std::vector<DirectTensor> on_backend = detail::on_each(backend, xs);
  return detail::value_of(detail::concatenate_span<DirectTensor>(on_backend, axis));
}
Tensor stack(ListRef<Tensor> xs, std::int64_t axis, Backend& backend) {
  const std::vector<DirectTensor> on_backend = detail::on_each(backend, xs);
  return detail::value_of(detail::stack_span<DirectTensor>(on_backend, axis));
}
Tensor tile(const Tensor& x, std::span<const std::int64_t> reps, Backend& backend) {
  return detail::value_of(tile(detail::borrow(backend, x), Shape(reps)));
}
Tensor reverse(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend) {
  return detail::value_of(reverse(detail::borrow(backend, x), Axes(axes)));
}
Tensor flip(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend) {
  return detail::value_of(flip(detail::borrow(backend, x), Axes(axes)));
}
Tensor diagonal(const Tensor& x, std::int64_t offset, std::int64_t axis1, std::int64_t axis2,
                Backend& backend) {
  return detail::value_of(diagonal(detail::borrow(backend, x), offset, axis1, axis2));
}
Tensor diag_embed(const Tensor& x, std::int64_t offset, Backend& backend) {
  return detail::value_of(diag_embed(detail::borrow(backend, x), offset));
}
Tensor tril(const Tensor& x, std::int64_t k, Backend& backend) {
  return detail::value_of(tril(detail::borrow(backend, x), k));
}
Tensor triu(const Tensor& x, std::int64_t k, Backend& backend) {
  return detail::value_of(triu(detail::borrow(backend, x), k));
}
Tensor index_select(const Tensor& x, std::int64_t axis, const Tensor& index, Backend& backend) {
  return detail::value_of(
      index_select(detail::borrow(backend, x), axis, detail::borrow(backend, index)));
}
Tensor take_along_axis(const Tensor& x, const Tensor& index, std::int64_t axis, Backend& backend) {
  return detail::value_of(
      take_along_axis(detail::borrow(backend, x), detail::borrow(backend, index), axis));
}
Tensor scatter_add(const Tensor& x, std::int64_t axis, const Tensor& index, const Tensor& src,
                   Backend& backend) {
  return detail::value_of(scatter_add(detail::borrow(backend, x), axis,
                                      detail::borrow(backend, index),
                                      detail::borrow(backend, src)));
}
Tensor convert(const Tensor& x, DType dtype, Backend& backend) {
  return detail::value_of(convert(detail::borrow(backend, x), dtype));
}
Tensor cast(const Tensor& x, DType dtype, Backend& backend) {
  return detail::value_of(cast(detail::borrow(backend, x), dtype));
}
Tensor cumsum(const Tensor& x, std::int64_t axis, Backend& backend, bool reverse) {
  return detail::value_of(cumsum(detail::borrow(backend, x), axis, reverse));
}
Tensor cumprod(const Tensor& x, std::int64_t axis, Backend& backend, bool reverse) {
  return detail::value_of(cumprod(detail::borrow(backend, x), axis, reverse));
}
Tensor argsort(const Tensor& x, std::int64_t axis, Backend& backend, bool descending) {
  return detail::value_of(argsort(detail::borrow(backend, x), axis, descending));
}
std::pair<Tensor, Tensor> sort(const Tensor& x, std::int64_t axis, Backend& backend,
                               bool descending) {
  auto [v, i] = sort(detail::borrow(backend, x), axis, descending);
  return {std::move(v).value(), std::move(i).value()};
}
std::pair<Tensor, Tensor> topk(const Tensor& x, std::int64_t k, std::int64_t axis, Backend& backend,
                               bool largest) {
  auto [v, i] = topk(detail::borrow(backend, x), k, axis, largest);
  return {std::move(v).value(), std::move(i).value()};
}

// ---- tenferro/ad/composite.hpp

Tensor complex(const Tensor& re, const Tensor& im, Backend& backend) {
  return detail::value_of(complex(detail::borrow(backend, re), detail::borrow(backend, im)));
}
Tensor kron(const Tensor& a, const Tensor& b, Backend& backend) {
  return detail::value_of(kron(detail::borrow(backend, a), detail::borrow(backend, b)));
}
Tensor trace(const Tensor& x, Backend& backend, std::int64_t offset, std::int64_t axis1,
             std::int64_t axis2) {
  return detail::value_of(trace(detail::borrow(backend, x), offset, axis1, axis2));
}
Tensor roll(const Tensor& x, std::span<const std::int64_t> shifts,
            std::span<const std::int64_t> axes, Backend& backend) {
  return detail::value_of(roll(detail::borrow(backend, x), shifts, Axes(axes)));
}
Tensor roll(const Tensor& x, std::int64_t shift, Backend& backend) {
  return detail::value_of(roll(detail::borrow(backend, x), shift));
}

}  // namespace tenferro
