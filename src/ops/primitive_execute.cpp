// The kinds' execute hooks: each runs its primitive on concrete tensors
// through the direct operations, which validate their operands. A hook only
// resolves symbolic parameters and checks what the direct ops cannot see
// (bound extents, fill values); execute_primitive checks the input count.

#include "ops/primitive_infer.hpp"
#include "tenferro/backend/structural.hpp"

namespace tenferro {

namespace {

// A parameter shape with its names bound; extents must come out >= 0.
Shape bind(std::string_view op, const SymShape& shape, const DimBindings& bindings) {
  Shape out = evaluate(shape, bindings);
  for (std::int64_t e : out) {
    if (e < 0) {
      fail(ErrorKind::InvalidArgument, std::string(op), "shape ", to_string(shape), " binds to ",
           shape_to_string(out), ", which has a negative extent; check the bound sizes");
    }
  }
  return out;
}

void check_input_count(const PrimitiveOp& op, std::size_t count) {
  if (count != op.input_count()) {
    fail(ErrorKind::InvalidArgument, std::string(op.name()), "expects ", op.input_count(),
         " input(s), got ", count);
  }
}

Tensor run(const PrimitiveOp& op, const prim::Operands& in, Backend& backend,
           const DimBindings& bindings) {
  check_input_count(op, in.size());
  return std::visit(
      [&](const auto& p) { return std::decay_t<decltype(p)>::execute(p, in, backend, bindings); },
      op.params());
}

}  // namespace

using prim::Operands;

// clang-format off
Tensor prim::Unary::execute(const Unary& p, const Operands& in, Backend& backend, const DimBindings&) {
  return unary(p.op, in[0], backend);
}
Tensor prim::Binary::execute(const Binary& p, const Operands& in, Backend& backend, const DimBindings&) {
  return binary(p.op, in[0], in[1], backend);
}
Tensor prim::Select::execute(const Select&, const Operands& in, Backend& backend, const DimBindings&) {
  return where(in[0], in[1], in[2], backend);
}
Tensor prim::Clamp::execute(const Clamp& p, const Operands& in, Backend& backend, const DimBindings&) {
  return clamp(in[0], p.lo, p.hi, backend);
}
Tensor prim::Polygamma::execute(const Polygamma& p, const Operands& in, Backend& backend, const DimBindings&) {
  return polygamma(p.n, in[0], backend);
}
Tensor prim::Convert::execute(const Convert& p, const Operands& in, Backend& backend, const DimBindings&) {
  return p.lossy ? cast(in[0], p.dtype, backend) : convert(in[0], p.dtype, backend);
}
Tensor prim::Reduce::execute(const Reduce& p, const Operands& in, Backend& backend, const DimBindings&) {
  return reduce(p.op, in[0], p.axes, backend, p.keepdim);
}
Tensor prim::Variance::execute(const Variance& p, const Operands& in, Backend& backend, const DimBindings&) {
  return p.take_sqrt ? std_dev(in[0], p.axes, backend, p.correction, p.keepdim)
                     : var(in[0], p.axes, backend, p.correction, p.keepdim);
}
Tensor prim::ArgReduce::execute(const ArgReduce& p, const Operands& in, Backend& backend, const DimBindings&) {
  return p.is_max ? argmax(in[0], p.axis, backend, p.keepdim)
                  : argmin(in[0], p.axis, backend, p.keepdim);
}
Tensor prim::Cumulative::execute(const Cumulative& p, const Operands& in, Backend& backend, const DimBindings&) {
  return p.op == ReduceOp::Prod ? cumprod(in[0], p.axis, backend, p.reverse)
                                : cumsum(in[0], p.axis, backend, p.reverse);
}
Tensor prim::Argsort::execute(const Argsort& p, const Operands& in, Backend& backend, const DimBindings&) {
  return detail::argsort_prefix(in[0], p.axis, p.k, p.descending, backend);
}
Tensor prim::DotGeneral::execute(const DotGeneral& p, const Operands& in, Backend& backend, const DimBindings&) {
  return dot_general(in[0], in[1], p.dims, backend);
}
Tensor prim::Transpose::execute(const Transpose& p, const Operands& in, Backend& backend, const DimBindings&) {
  return permute(in[0], p.perm, backend);
}
Tensor prim::Reshape::execute(const Reshape& p, const Operands& in, Backend& backend, const DimBindings& bindings) {
  return reshape(in[0], bind(kName, p.shape, bindings), backend);
}
Tensor prim::BroadcastInDim::execute(const BroadcastInDim& p, const Operands& in, Backend& backend,
                                     const DimBindings& bindings) {
  return broadcast_in_dim(in[0], bind(kName, p.shape, bindings), p.dims, backend);
}
Tensor prim::Slice::execute(const Slice& p, const Operands& in, Backend& backend, const DimBindings&) {
  return slice(in[0], p.start, p.limit, p.stride, backend);
}
Tensor prim::Pad::execute(const Pad& p, const Operands& in, Backend& backend, const DimBindings&) {
  return pad(in[0], p.low, p.high, p.value, backend, p.interior);
}
Tensor prim::Reverse::execute(const Reverse& p, const Operands& in, Backend& backend, const DimBindings&) {
  return reverse(in[0], p.axes, backend);
}
Tensor prim::IndexSelect::execute(const IndexSelect& p, const Operands& in, Backend& backend, const DimBindings&) {
  return index_select(in[0], p.axis, in[1], backend);
}
Tensor prim::TakeAlongAxis::execute(const TakeAlongAxis& p, const Operands& in, Backend& backend, const DimBindings&) {
  return take_along_axis(in[0], in[1], p.axis, backend);
}
Tensor prim::ScatterAdd::execute(const ScatterAdd& p, const Operands& in, Backend& backend, const DimBindings&) {
  return scatter_add(in[0], p.axis, in[1], in[2], backend);
}
Tensor prim::Diagonal::execute(const Diagonal& p, const Operands& in, Backend& backend, const DimBindings&) {
  return diagonal(in[0], p.offset, p.axis1, p.axis2, backend);
}
Tensor prim::DiagEmbed::execute(const DiagEmbed& p, const Operands& in, Backend& backend, const DimBindings&) {
  return diag_embed(in[0], p.offset, backend);
}
Tensor prim::Triangle::execute(const Triangle& p, const Operands& in, Backend& backend, const DimBindings&) {
  return p.lower ? tril(in[0], p.k, backend) : triu(in[0], p.k, backend);
}
// clang-format on

Tensor prim::Concatenate::execute(const Concatenate& p, const Operands& in, Backend& backend,
                                  const DimBindings&) {
  if (in.empty()) {
    fail(ErrorKind::InvalidArgument, std::string(kName),
         "needs at least one tensor; set count >= 1");
  }
  if (in.refs.empty()) return concatenate(in.values, p.axis, backend);
  std::vector<Tensor> parts;
  parts.reserve(in.size());
  for (const Tensor* t : in.refs) parts.push_back(*t);
  return concatenate(parts, p.axis, backend);
}

Tensor prim::Full::execute(const Full& p, const Operands&, Backend& backend,
                           const DimBindings& bindings) {
  const Shape shape = bind(kName, p.shape, bindings);
  detail::check_fill_value(std::string(kName), p.value, p.dtype);
  // A broadcast rank-0 scalar: the backend allocates and fills the result.
  const Tensor value = Tensor::scalar(p.value, p.dtype);
  return broadcast_in_dim(value, shape, {}, backend);
}

Tensor prim::Constant::execute(const Constant& p, const Operands&, Backend&, const DimBindings&) {
  if (!p.value.defined()) {
    fail(ErrorKind::InvalidArgument, std::string(kName),
         "the constant's tensor is undefined; pass a tensor");
  }
  return p.value;
}

Tensor execute_primitive(const PrimitiveOp& op, std::span<const Tensor> inputs, Backend& backend,
                         const DimBindings& bindings) {
  return run(op, prim::Operands{inputs, {}}, backend, bindings);
}

namespace detail {

Tensor execute_primitive_refs(const PrimitiveOp& op, std::span<const Tensor* const> inputs,
                              Backend& backend) {
  static const DimBindings kNone;
  return run(op, prim::Operands{{}, inputs}, backend, kNone);
}

}  // namespace detail

}  // namespace tenferro
