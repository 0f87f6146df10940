// Runs a core primitive on concrete tensors through the direct operations.
// The direct ops validate their operands; this file only resolves symbolic
// parameters and checks what the direct ops cannot see (input count, bound
// extents, fill values).

#include "ops/primitive_infer.hpp"
#include "tenferro/backend/structural.hpp"
#include "tenferro/ops/primitives.hpp"

namespace tenferro {

namespace {

// The inputs as a list of tensors or of pointers to them (the eager tier's
// values live in separate handles; copying each into a list cost two
// reference-count updates and a shape copy per operand).
struct TensorList {
  std::span<const Tensor> values;
  std::span<const Tensor* const> refs;
  std::size_t size() const { return refs.empty() ? values.size() : refs.size(); }
  bool empty() const { return size() == 0; }
  const Tensor& operator[](std::size_t i) const { return refs.empty() ? values[i] : *refs[i]; }
};

struct Executor {
  std::string_view op;  // the op's name, for errors (a string only when one is raised)
  TensorList in;
  Backend& backend;
  const DimBindings& bindings;

  // A parameter shape with its names bound; extents must come out >= 0.
  Shape bind(const SymShape& shape) const {
    Shape out = evaluate(shape, bindings);
    for (std::int64_t e : out) {
      if (e < 0) {
        fail(ErrorKind::InvalidArgument, std::string(op), "shape ", to_string(shape), " binds to ",
             shape_to_string(out), ", which has a negative extent; check the bound sizes");
      }
    }
    return out;
  }

  Tensor operator()(const prim::Unary& p) const { return unary(p.op, in[0], backend); }
  Tensor operator()(const prim::Binary& p) const { return binary(p.op, in[0], in[1], backend); }
  Tensor operator()(const prim::Select&) const { return where(in[0], in[1], in[2], backend); }
  Tensor operator()(const prim::Clamp& p) const { return clamp(in[0], p.lo, p.hi, backend); }
  Tensor operator()(const prim::Polygamma& p) const { return polygamma(p.n, in[0], backend); }
  Tensor operator()(const prim::Reduce& p) const {
    return reduce(p.op, in[0], p.axes, backend, p.keepdim);
  }
  Tensor operator()(const prim::Variance& p) const {
    return p.take_sqrt ? std_dev(in[0], p.axes, backend, p.correction, p.keepdim)
                       : var(in[0], p.axes, backend, p.correction, p.keepdim);
  }
  Tensor operator()(const prim::ArgReduce& p) const {
    return p.is_max ? argmax(in[0], p.axis, backend, p.keepdim)
                    : argmin(in[0], p.axis, backend, p.keepdim);
  }
  Tensor operator()(const prim::Cumulative& p) const {
    return p.op == ReduceOp::Prod ? cumprod(in[0], p.axis, backend, p.reverse)
                                  : cumsum(in[0], p.axis, backend, p.reverse);
  }
  Tensor operator()(const prim::Argsort& p) const {
    return detail::argsort_prefix(in[0], p.axis, p.k, p.descending, backend);
  }
  Tensor operator()(const prim::DotGeneral& p) const {
    return dot_general(in[0], in[1], p.dims, backend);
  }
  Tensor operator()(const prim::Transpose& p) const { return permute(in[0], p.perm, backend); }
  Tensor operator()(const prim::Reshape& p) const { return reshape(in[0], bind(p.shape), backend); }
  Tensor operator()(const prim::BroadcastInDim& p) const {
    return broadcast_in_dim(in[0], bind(p.shape), p.dims, backend);
  }
  Tensor operator()(const prim::Slice& p) const {
    return slice(in[0], p.start, p.limit, p.stride, backend);
  }
  Tensor operator()(const prim::Pad& p) const {
    return pad(in[0], p.low, p.high, p.value, backend, p.interior);
  }
  Tensor operator()(const prim::Concatenate& p) const {
    if (in.empty()) {
      fail(ErrorKind::InvalidArgument, std::string(op),
           "needs at least one tensor; set count >= 1");
    }
    if (in.refs.empty()) return concatenate(in.values, p.axis, backend);
    std::vector<Tensor> parts;
    parts.reserve(in.size());
    for (const Tensor* t : in.refs) parts.push_back(*t);
    return concatenate(parts, p.axis, backend);
  }
  Tensor operator()(const prim::Reverse& p) const { return reverse(in[0], p.axes, backend); }
  Tensor operator()(const prim::IndexSelect& p) const {
    return index_select(in[0], p.axis, in[1], backend);
  }
  Tensor operator()(const prim::TakeAlongAxis& p) const {
    return take_along_axis(in[0], in[1], p.axis, backend);
  }
  Tensor operator()(const prim::ScatterAdd& p) const {
    return scatter_add(in[0], p.axis, in[1], in[2], backend);
  }
  Tensor operator()(const prim::Diagonal& p) const {
    return diagonal(in[0], p.offset, p.axis1, p.axis2, backend);
  }
  Tensor operator()(const prim::DiagEmbed& p) const { return diag_embed(in[0], p.offset, backend); }
  Tensor operator()(const prim::Triangle& p) const {
    return p.lower ? tril(in[0], p.k, backend) : triu(in[0], p.k, backend);
  }
  Tensor operator()(const prim::Convert& p) const {
    return p.lossy ? cast(in[0], p.dtype, backend) : convert(in[0], p.dtype, backend);
  }
  Tensor operator()(const prim::Full& p) const {
    const Shape shape = bind(p.shape);
    detail::check_fill_value(std::string(op), p.value, p.dtype);
    // A broadcast rank-0 scalar: the backend allocates and fills the result.
    const Tensor value = Tensor::scalar(p.value, p.dtype);
    return broadcast_in_dim(value, shape, {}, backend);
  }
  Tensor operator()(const prim::Constant& p) const {
    if (!p.value.defined()) {
      fail(ErrorKind::InvalidArgument, std::string(op),
           "the constant's tensor is undefined; pass a tensor");
    }
    return p.value;
  }
};

void check_input_count(const PrimitiveOp& op, std::size_t count) {
  if (count != op.input_count()) {
    fail(ErrorKind::InvalidArgument, std::string(op.name()), "expects ", op.input_count(),
         " input(s), got ", count);
  }
}

}  // namespace

Tensor execute_primitive(const PrimitiveOp& op, std::span<const Tensor> inputs, Backend& backend,
                         const DimBindings& bindings) {
  check_input_count(op, inputs.size());
  return std::visit(Executor{op.name(), TensorList{inputs, {}}, backend, bindings}, op.params());
}

namespace detail {

Tensor execute_primitive_refs(const PrimitiveOp& op, std::span<const Tensor* const> inputs,
                              Backend& backend) {
  check_input_count(op, inputs.size());
  static const DimBindings kNone;
  return std::visit(Executor{op.name(), TensorList{{}, inputs}, backend, kNone}, op.params());
}

}  // namespace detail

}  // namespace tenferro
