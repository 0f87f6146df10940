#include "tenferro/ad/emitter.hpp"

namespace tenferro::ad {

namespace {
OpPtr prim_op(prim::Params p) {
  return make_primitive(std::move(p));
}
}  // namespace

Val Emitter::emit1(const OpPtr& op, std::span<const Val> inputs) {
  auto out = emit(op, inputs);
  if (out.size() != 1)
    fail(ErrorKind::Internal, std::string(op->name()), "expected one output, got ", out.size());
  return out[0];
}

Val Emitter::unary(UnaryOp op, Val x) {
  const Val in[1] = {x};
  return emit1(elementwise_primitive(op), in);
}

Val Emitter::binary(BinaryOp op, Val a, Val b) {
  const Val in[2] = {a, b};
  return emit1(elementwise_primitive(op), in);
}

Val Emitter::scalar(Scalar value, DType dtype) {
  return full({}, value, dtype);
}

Val Emitter::full(const SymShape& shape, Scalar value, DType dtype) {
  return emit1(prim_op(prim::Full{shape, value, dtype}), {});
}

Val Emitter::scale(Val x, Scalar value) {
  return mul(x, scalar(value, dtype_of(x)));
}

Val Emitter::zeros_like(Val x) {
  const TensorMeta m = meta(x);
  return full(m.shape, 0.0, m.dtype);
}

Val Emitter::ones_like(Val x) {
  const TensorMeta m = meta(x);
  return full(m.shape, 1.0, m.dtype);
}

Val Emitter::select(Val cond, Val a, Val b) {
  const Val in[3] = {cond, a, b};
  return emit1(prim_op(prim::Select{}), in);
}

Val Emitter::convert(Val x, DType dtype, bool lossy) {
  if (dtype_of(x) == dtype) return x;
  const Val in[1] = {x};
  return emit1(prim_op(prim::Convert{dtype, lossy}), in);
}

Val Emitter::sum(Val x, Axes axes, bool keepdim) {
  if (axes.empty() && !keepdim) return x;
  const Val in[1] = {x};
  return emit1(prim_op(prim::Reduce{ReduceOp::Sum, std::move(axes), keepdim}), in);
}

Val Emitter::reshape(Val x, SymShape shape) {
  if (has_shape(x, shape)) return x;
  const Val in[1] = {x};
  return emit1(prim_op(prim::Reshape{std::move(shape)}), in);
}

Val Emitter::broadcast_in_dim(Val x, SymShape shape, Axes dims) {
  const Val in[1] = {x};
  return emit1(prim_op(prim::BroadcastInDim{std::move(shape), std::move(dims)}), in);
}

Val Emitter::broadcast_to(Val x, const SymShape& shape) {
  if (has_shape(x, shape)) return x;
  const TensorMeta m = meta(x);
  Axes dims;
  const std::size_t lead = shape.size() - m.shape.size();
  for (std::size_t i = 0; i < m.shape.size(); ++i)
    dims.push_back(static_cast<std::int64_t>(lead + i));
  return broadcast_in_dim(x, shape, dims);
}

Val Emitter::sum_to(Val x, const SymShape& shape) {
  if (has_shape(x, shape)) return x;
  const TensorMeta m = meta(x);
  if (m.shape.size() < shape.size()) {
    fail(ErrorKind::Internal, "sum_to", "cannot sum ", to_string(m.shape), " down to ",
         to_string(shape));
  }
  const std::size_t lead = m.shape.size() - shape.size();
  Axes axes;
  for (std::size_t i = 0; i < lead; ++i) axes.push_back(static_cast<std::int64_t>(i));
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == SymDim(1) && !(m.shape[lead + i] == SymDim(1)))
      axes.push_back(static_cast<std::int64_t>(lead + i));
  }
  Val r = sum(x, axes, /*keepdim=*/false);
  return reshape(r, shape);
}

Val Emitter::transpose(Val x, Axes perm) {
  bool identity = true;
  for (std::size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<std::int64_t>(i);
  if (identity) return x;
  const Val in[1] = {x};
  return emit1(prim_op(prim::Transpose{std::move(perm)}), in);
}

Val Emitter::dot_general(Val a, Val b, DotDims dims) {
  const Val in[2] = {a, b};
  return emit1(prim_op(prim::DotGeneral{std::move(dims)}), in);
}

Val Emitter::real(Val x) {
  if (!is_complex(dtype_of(x))) return x;
  return unary(UnaryOp::Real, x);
}

Val Emitter::complex(Val re, Val im) {
  return binary(BinaryOp::Complex, re, im);
}

Val Emitter::to_dtype(Val x, DType dtype) {
  const DType have = dtype_of(x);
  if (have == dtype) return x;
  if (is_complex(have) && !is_complex(dtype)) return convert(real(x), dtype, /*lossy=*/true);
  return convert(x, dtype, /*lossy=*/!is_lossless_conversion(have, dtype));
}

}  // namespace tenferro::ad
