// The diagonal and triangle primitives (diagonal, diag_embed, tril/triu):
// inference and execution.

#include <string>

#include "ops/infer_context.hpp"
#include "ops/operands.hpp"

namespace tenferro {

using namespace detail;
using prim::Operands;

void prim::Diagonal::infer(const Diagonal& p, InferContext& ctx) {
  const TensorMeta& x = ctx.in[0];
  const auto a = static_cast<std::size_t>(normalize_axis_for(ctx, p.axis1, x.rank()));
  const auto b = static_cast<std::size_t>(normalize_axis_for(ctx, p.axis2, x.rank()));
  if (a == b) fail(ErrorKind::DuplicateAxis, ctx.op, "axis1 and axis2 are both ", a);
  const SymDim &n1 = x.shape[a], &n2 = x.shape[b];
  const SymDim off(p.offset);
  SymDim len = p.offset >= 0 ? min(n1, n2 - off) : min(n1 + off, n2);
  // Extents are non-negative, so only a shifted diagonal can run empty.
  if (p.offset != 0) len = max(SymDim(0), len);
  SymShape out{len};
  for (std::size_t d = 0; d < x.shape.size(); ++d) {
    if (d != a && d != b) out.push_back(x.shape[d]);
  }
  ctx.emit(x.dtype, std::move(out));
}

Tensor prim::Diagonal::execute(const Diagonal& p, const Operands& in, Backend& backend,
                               const DimBindings&) {
  const Tensor& x = in[0];
  require_operand(x, backend, kName);
  return materialize(backend, x.diagonal(p.offset, p.axis1, p.axis2));  // the view validates
}

void prim::DiagEmbed::infer(const DiagEmbed& p, InferContext& ctx) {
  const TensorMeta& x = ctx.in[0];
  require_rank_at_least(ctx, x, 1, "[n, batch...]");
  if (p.offset == INT64_MIN) {
    fail(ErrorKind::InvalidArgument, ctx.op, "offset ", p.offset, " is out of range");
  }
  const SymDim n = x.shape[0] + SymDim(p.offset < 0 ? -p.offset : p.offset);
  SymShape out{n, n};
  for (std::size_t d = 1; d < x.shape.size(); ++d) out.push_back(x.shape[d]);
  ctx.emit(x.dtype, std::move(out));
}

Tensor prim::DiagEmbed::execute(const DiagEmbed& p, const Operands& in, Backend& backend,
                                const DimBindings&) {
  const Tensor& x = in[0];
  const std::int64_t offset = p.offset;
  const char* op = "diag_embed";
  require_operand(x, backend, op);
  if (x.rank() < 1) {
    fail(ErrorKind::RankMismatch, op, "needs a tensor [n, batch...] of rank >= 1, got a scalar");
  }
  if (offset == INT64_MIN) {
    fail(ErrorKind::InvalidArgument, op, "offset ", offset, " is out of range");
  }
  const std::int64_t n = checked_add(x.shape()[0], offset < 0 ? -offset : offset, op);
  Shape out_shape{n, n};
  shape_numel(out_shape, op);
  for (std::size_t d = 1; d < x.shape().size(); ++d) out_shape.push_back(x.shape()[d]);
  Tensor out = backend.empty(out_shape, x.dtype());
  backend.fill(out, Scalar(false));
  backend.copy(x, out.diagonal(offset, 0, 1));
  return out;
}

void prim::Triangle::infer(const Triangle&, InferContext& ctx) {
  const TensorMeta& x = ctx.in[0];
  require_rank_at_least(ctx, x, 2, "[m, n, batch...]");
  ctx.emit(x.dtype, x.shape);
}

Tensor prim::Triangle::execute(const Triangle& p, const Operands& in, Backend& backend,
                               const DimBindings&) {
  const Tensor& x = in[0];
  const std::string op(kind_name(kind_of(p)));
  require_operand(x, backend, op);
  if (x.rank() < 2) {
    fail(ErrorKind::RankMismatch, op, "needs matrices [m, n, batch...], got rank ", x.rank());
  }
  Tensor out = materialize(backend, x);
  backend.zero_triangle(out, p.k, p.lower);
  return out;
}

}  // namespace tenferro
