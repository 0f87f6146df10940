// The gather and scatter primitives (index_select, take_along_axis,
// scatter_add): inference and execution. Indices are validated and
// normalised into a compact i64 tensor before any output is written, so a
// bad index leaves nothing half-changed.

#include <string>

#include "ops/infer_context.hpp"
#include "ops/operands.hpp"

namespace tenferro {

using namespace detail;
using prim::Operands;

namespace {

void require_index_operand(const Tensor& index, const char* op) {
  if (index.dtype() != DType::I32 && index.dtype() != DType::I64) {
    fail(ErrorKind::DTypeMismatch, op, "index dtype must be i32 or i64, got ", name(index.dtype()),
         "; cast the indices first");
  }
}

void require_same_operand_rank(const Tensor& x, const Tensor& other, const char* op,
                               const char* what) {
  if (other.rank() != x.rank()) {
    fail(ErrorKind::RankMismatch, op, what, " has rank ", other.rank(), " but x has rank ",
         x.rank(), "; they must match");
  }
}

}  // namespace

void prim::IndexSelect::infer(const IndexSelect& p, InferContext& ctx) {
  const TensorMeta &x = ctx.in[0], &index = ctx.in[1];
  require_index_dtype(ctx, index);
  if (index.rank() != 1) {
    fail(ErrorKind::RankMismatch, ctx.op, "index must be 1-D, got shape ", to_string(index.shape),
         "; use take_along_axis for an index per element");
  }
  const auto a = static_cast<std::size_t>(normalize_axis_for(ctx, p.axis, x.rank()));
  SymShape out = x.shape;
  out[a] = index.shape[0];
  ctx.emit(x.dtype, std::move(out));
}

Tensor prim::IndexSelect::execute(const IndexSelect& p, const Operands& in, Backend& backend,
                                  const DimBindings&) {
  const Tensor &x = in[0], &index = in[1];
  const std::int64_t axis = p.axis;
  const char* op = "index_select";
  require_operand(x, backend, op, "x");
  require_operand(index, backend, op, "index");
  require_index_operand(index, op);
  if (index.rank() != 1) {
    fail(ErrorKind::RankMismatch, op, "index must be 1-D, got shape ",
         shape_to_string(index.shape()), "; use take_along_axis for an index per element");
  }
  const std::int64_t a = normalize_axis(axis, x.rank(), op);
  const auto ua = static_cast<std::size_t>(a);
  Shape out_shape(x.shape());
  out_shape[ua] = index.numel();
  // The output shape before the index values, as the AD tiers check it when
  // the op is built (InvalidArgument for a shape no tensor can have).
  (void)shape_numel(out_shape, op);
  const Tensor idx = backend.normalize_indices(index, x.shape()[ua], axis, op);
  Tensor out = backend.empty(out_shape, x.dtype());
  // The 1-D index seen with the output's shape: stride 0 everywhere but `axis`.
  Strides idx_strides(out_shape.size(), 0);
  idx_strides[ua] = 1;
  const Tensor idx_view = Tensor::from_storage(idx.storage(), DType::I64, out_shape,
                                               std::move(idx_strides), idx.offset());
  backend.gather(x, idx_view, a, out);
  return out;
}

void prim::TakeAlongAxis::infer(const TakeAlongAxis& p, InferContext& ctx) {
  const TensorMeta &x = ctx.in[0], &index = ctx.in[1];
  require_index_dtype(ctx, index);
  require_same_rank(ctx, x, index, "index");
  const std::int64_t a = normalize_axis_for(ctx, p.axis, x.rank());
  for (std::int64_t d = 0; d < x.rank(); ++d) {
    const auto ud = static_cast<std::size_t>(d);
    if (d != a) ctx.require_equal(index.shape[ud], x.shape[ud], "index and x on " + axis_text(d));
  }
  ctx.emit(x.dtype, index.shape);
}

Tensor prim::TakeAlongAxis::execute(const TakeAlongAxis& p, const Operands& in, Backend& backend,
                                    const DimBindings&) {
  const Tensor &x = in[0], &index = in[1];
  const std::int64_t axis = p.axis;
  const char* op = "take_along_axis";
  require_operand(x, backend, op, "x");
  require_operand(index, backend, op, "index");
  require_index_operand(index, op);
  require_same_operand_rank(x, index, op, "index");
  const std::int64_t a = normalize_axis(axis, x.rank(), op);
  for (std::int64_t d = 0; d < x.rank(); ++d) {
    const auto ud = static_cast<std::size_t>(d);
    if (d != a && index.shape()[ud] != x.shape()[ud]) {
      fail(ErrorKind::ShapeMismatch, op, "index shape ", shape_to_string(index.shape()),
           " differs from x shape ", shape_to_string(x.shape()), " on axis ", d, "; only axis ", a,
           " may differ");
    }
  }
  const Tensor idx =
      backend.normalize_indices(index, x.shape()[static_cast<std::size_t>(a)], axis, op);
  Tensor out = backend.empty(index.shape(), x.dtype());
  backend.gather(x, idx, a, out);
  return out;
}

void prim::ScatterAdd::infer(const ScatterAdd& p, InferContext& ctx) {
  const TensorMeta &x = ctx.in[0], &index = ctx.in[1], &src = ctx.in[2];
  require_index_dtype(ctx, index);
  require_same_rank(ctx, x, index, "index");
  require_same_rank(ctx, x, src, "src");
  for (std::int64_t d = 0; d < x.rank(); ++d) {
    const auto ud = static_cast<std::size_t>(d);
    ctx.require_equal(index.shape[ud], src.shape[ud], "index and src on " + axis_text(d));
  }
  const std::int64_t a = normalize_axis_for(ctx, p.axis, x.rank());
  for (std::int64_t d = 0; d < x.rank(); ++d) {
    const auto ud = static_cast<std::size_t>(d);
    if (d != a) {
      ctx.require_at_most(index.shape[ud], x.shape[ud],
                          "index extent against x extent on " + axis_text(d) +
                              " (off the scatter axis index must fit in x)",
                          ErrorKind::ShapeMismatch);
    }
  }
  ctx.emit(promote_types(x.dtype, src.dtype), x.shape);
}

Tensor prim::ScatterAdd::execute(const ScatterAdd& p, const Operands& in, Backend& backend,
                                 const DimBindings&) {
  const Tensor &x = in[0], &index = in[1], &src = in[2];
  const std::int64_t axis = p.axis;
  const char* op = "scatter_add";
  require_operand(x, backend, op, "x");
  require_operand(index, backend, op, "index");
  require_operand(src, backend, op, "src");
  require_index_operand(index, op);
  require_same_operand_rank(x, index, op, "index");
  require_same_operand_rank(x, src, op, "src");
  if (!(index.shape() == src.shape())) {
    fail(ErrorKind::ShapeMismatch, op, "index shape ", shape_to_string(index.shape()),
         " differs from src shape ", shape_to_string(src.shape()), "; they must be equal");
  }
  const std::int64_t a = normalize_axis(axis, x.rank(), op);
  for (std::int64_t d = 0; d < x.rank(); ++d) {
    const auto ud = static_cast<std::size_t>(d);
    if (d != a && index.shape()[ud] > x.shape()[ud]) {
      fail(ErrorKind::ShapeMismatch, op, "index extent ", index.shape()[ud], " on axis ", d,
           " exceeds x extent ", x.shape()[ud], "; off the scatter axis index must fit in x");
    }
  }
  const DType dtype = promote_types(x.dtype(), src.dtype());
  const Tensor idx =
      backend.normalize_indices(index, x.shape()[static_cast<std::size_t>(a)], axis, op);
  Tensor out = backend.empty(x.shape(), dtype);
  backend.copy(x, out);
  Tensor src_t = src;
  if (src.dtype() != dtype) {
    src_t = backend.empty(src.shape(), dtype);
    backend.copy(src, src_t);
  }
  backend.scatter_add(src_t, idx, a, out);
  return out;
}

}  // namespace tenferro
