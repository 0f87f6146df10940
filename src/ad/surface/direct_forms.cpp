// The direct tier's forms of the one surface (tenferro/ad/ops.hpp,
// ops_layout.hpp, composite.hpp): each is the template of its header on
// DirectTensor, with the operands borrowed for the call. Where the template
// is one primitive, the form runs that kind's execute hook on the operands,
// which is what the template does on DirectTensor without building the
// Params variant. They are defined here rather than inline so that a user
// translation unit that includes the umbrella header compiles none of these
// instantiations.

#include "tenferro/ad/composite.hpp"
#include "tenferro/ad/ops.hpp"

namespace tenferro {

namespace {
// The kind P with `params` on `inputs` (the template's apply_primitive on
// DirectTensor, minus the variant).
template <class P>
Tensor run_kind(const P& params, std::initializer_list<const Tensor*> inputs, Backend& backend) {
  static const DimBindings kNone;
  return P::execute(
      params, prim::Operands{{}, std::span<const Tensor* const>(inputs.begin(), inputs.size())},
      backend, kNone);
}
}  // namespace

// ---- tenferro/ad/ops.hpp

Tensor polygamma(std::int64_t n, const Tensor& x, Backend& backend) {
  return run_kind(prim::Polygamma{n}, {&x}, backend);
}
std::pair<Tensor, Tensor> frexp(const Tensor& x, Backend& backend) {
  auto [m, e] = frexp(detail::borrow(backend, x));
  return {std::move(m).value(), std::move(e).value()};
}
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, Backend& backend) {
  return run_kind(prim::Select{}, {&cond, &a, &b}, backend);
}
Tensor clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi,
             Backend& backend) {
  return run_kind(prim::Clamp{lo, hi}, {&x}, backend);
}
Tensor var(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend, double correction,
           bool keepdim) {
  return run_kind(prim::Variance{Axes(axes), correction, keepdim, false}, {&x}, backend);
}
Tensor std_dev(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend,
               double correction, bool keepdim) {
  return run_kind(prim::Variance{Axes(axes), correction, keepdim, true}, {&x}, backend);
}
Tensor argmax(const Tensor& x, std::int64_t axis, Backend& backend, bool keepdim) {
  return run_kind(prim::ArgReduce{true, axis, keepdim}, {&x}, backend);
}
Tensor argmin(const Tensor& x, std::int64_t axis, Backend& backend, bool keepdim) {
  return run_kind(prim::ArgReduce{false, axis, keepdim}, {&x}, backend);
}
Tensor dot_general(const Tensor& lhs, const Tensor& rhs, const DotDims& dims, Backend& backend) {
  return run_kind(prim::DotGeneral{dims}, {&lhs, &rhs}, backend);
}
Tensor matmul(const Tensor& a, const Tensor& b, Backend& backend) {
  return detail::value_of(matmul(detail::borrow(backend, a), detail::borrow(backend, b)));
}

// ---- tenferro/ad/ops_layout.hpp

Tensor permute(const Tensor& x, std::span<const std::int64_t> perm, Backend& backend) {
  return run_kind(prim::Transpose{Axes(perm)}, {&x}, backend);
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
  return run_kind(prim::Reverse{Axes(axes)}, {&x}, backend);
}
Tensor flip(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend) {
  return run_kind(prim::Reverse{Axes(axes)}, {&x}, backend);
}
Tensor diagonal(const Tensor& x, std::int64_t offset, std::int64_t axis1, std::int64_t axis2,
                Backend& backend) {
  return run_kind(prim::Diagonal{offset, axis1, axis2}, {&x}, backend);
}
Tensor diag_embed(const Tensor& x, std::int64_t offset, Backend& backend) {
  return run_kind(prim::DiagEmbed{offset}, {&x}, backend);
}
Tensor tril(const Tensor& x, std::int64_t k, Backend& backend) {
  return run_kind(prim::Triangle{true, k}, {&x}, backend);
}
Tensor triu(const Tensor& x, std::int64_t k, Backend& backend) {
  return run_kind(prim::Triangle{false, k}, {&x}, backend);
}
Tensor index_select(const Tensor& x, std::int64_t axis, const Tensor& index, Backend& backend) {
  return run_kind(prim::IndexSelect{axis}, {&x, &index}, backend);
}
Tensor take_along_axis(const Tensor& x, const Tensor& index, std::int64_t axis, Backend& backend) {
  return run_kind(prim::TakeAlongAxis{axis}, {&x, &index}, backend);
}
Tensor scatter_add(const Tensor& x, std::int64_t axis, const Tensor& index, const Tensor& src,
                   Backend& backend) {
  return run_kind(prim::ScatterAdd{axis}, {&x, &index, &src}, backend);
}
Tensor convert(const Tensor& x, DType dtype, Backend& backend) {
  return run_kind(prim::Convert{dtype, false}, {&x}, backend);
}
Tensor cast(const Tensor& x, DType dtype, Backend& backend) {
  return run_kind(prim::Convert{dtype, true}, {&x}, backend);
}
Tensor cumsum(const Tensor& x, std::int64_t axis, Backend& backend, bool reverse) {
  return run_kind(prim::Cumulative{ReduceOp::Sum, axis, reverse}, {&x}, backend);
}
Tensor cumprod(const Tensor& x, std::int64_t axis, Backend& backend, bool reverse) {
  return run_kind(prim::Cumulative{ReduceOp::Prod, axis, reverse}, {&x}, backend);
}
Tensor argsort(const Tensor& x, std::int64_t axis, Backend& backend, bool descending) {
  return run_kind(prim::Argsort{axis, descending, -1}, {&x}, backend);
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
