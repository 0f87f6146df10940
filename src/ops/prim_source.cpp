// The source primitives (no inputs): full (a filled tensor whose shape may
// be symbolic) and constant (a held tensor): inference and execution.

#include <string>

#include "ops/infer_context.hpp"
#include "ops/operands.hpp"

namespace tenferro {

using namespace detail;
using prim::Operands;

void prim::Full::infer(const Full& p, InferContext& ctx) {
  require_nonnegative(ctx.op, p.shape, "shape");
  check_fill_value(ctx.op, p.value, p.dtype);
  ctx.emit(p.dtype, p.shape);
}

Tensor prim::Full::execute(const Full& p, const Operands&, Backend& backend,
                           const DimBindings& bindings) {
  const Shape shape = evaluate(p.shape, bindings);
  for (std::int64_t e : shape) {
    if (e < 0) {
      fail(ErrorKind::InvalidArgument, std::string(kName), "shape ", to_string(p.shape),
           " binds to ", shape_to_string(shape),
           ", which has a negative extent; check the bound sizes");
    }
  }
  check_fill_value(std::string(kName), p.value, p.dtype);
  shape_numel(shape, "full");  // an overflowing size names this op
  Tensor out = backend.empty(shape, p.dtype);
  backend.fill(out, p.value);
  return out;
}

void prim::Constant::infer(const Constant& p, InferContext& ctx) {
  if (!p.value.defined()) {
    fail(ErrorKind::InvalidArgument, ctx.op, "the constant's tensor is undefined; pass a tensor");
  }
  ctx.emit(p.value.dtype(), to_sym_shape(p.value.shape()));
}

Tensor prim::Constant::execute(const Constant& p, const Operands&, Backend&, const DimBindings&) {
  if (!p.value.defined()) {
    fail(ErrorKind::InvalidArgument, std::string(kName),
         "the constant's tensor is undefined; pass a tensor");
  }
  return p.value;
}

}  // namespace tenferro
