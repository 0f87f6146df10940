// The scan and sort primitives (cumsum/cumprod, argsort/topk): inference and
// execution, and the direct tier's one-pass sort. The lane kernels see one
// layout whatever x's strides are: the scans hand x to the backend's
// cumulate_into (the CPU backend scans a compact x of the result's dtype
// straight into the output, and copies any other x first); the sorts copy x
// into a compact column-major tensor.

#include <string>
#include <utility>

#include "ops/infer_context.hpp"
#include "ops/operands.hpp"
#include "tenferro/backend/scan.hpp"

namespace tenferro {

using namespace detail;
using prim::Operands;

namespace {

std::int64_t lane_axis_for(const InferContext& ctx, std::int64_t axis, std::int64_t rank) {
  if (rank == 0) {
    if (axis != 0 && axis != -1) {
      fail(ErrorKind::AxisOutOfBounds, ctx.op, "axis ", axis,
           " is out of range for a rank-0 tensor; use 0 or -1");
    }
    return 0;
  }
  return normalize_axis_for(ctx, axis, rank);
}

void require_cumulative_op(ReduceOp op, std::string_view name_for_errors) {
  if (op != ReduceOp::Sum && op != ReduceOp::Prod) {
    fail(ErrorKind::InvalidArgument, std::string(name_for_errors), "cumulative ", name(op),
         " is not supported; use ReduceOp::Sum (cumsum) or ReduceOp::Prod (cumprod)");
  }
}

// The first k entries (k < 0: all) of the stable sort of x along `axis`:
// {values, indices}, or indices only (values left undefined) unless
// `with_values`.
std::pair<Tensor, Tensor> sort_lanes(const Tensor& x, std::int64_t axis, std::int64_t k,
                                     bool descending, Backend& backend, bool with_values) {
  const char* op = k < 0 ? (with_values ? "sort" : "argsort") : "topk";
  require_operand(x, backend, op);
  if (is_complex(x.dtype())) {
    fail(ErrorKind::DTypeMismatch, op, "complex numbers are not ordered (dtype ", name(x.dtype()),
         "); sort abs(x), real(x) or imag(x) instead");
  }
  const std::int64_t a = lane_axis(x, axis, op);
  const std::int64_t n = x.rank() == 0 ? 1 : x.shape()[static_cast<std::size_t>(a)];
  if (k > n) {
    fail(ErrorKind::InvalidArgument, op, "k = ", k, " exceeds the extent ", n, " of axis ", a,
         "; choose 0 <= k <= ", n);
  }
  if (x.rank() == 0 && k == 0) {
    fail(ErrorKind::InvalidArgument, op,
         "k = 0 on a rank-0 tensor, which always holds one value; use k = 1");
  }
  const std::int64_t kept = k < 0 ? n : k;
  Shape out_shape(x.shape());
  if (x.rank() > 0) out_shape[static_cast<std::size_t>(a)] = kept;
  Tensor out = backend.empty(out_shape, DType::I64);
  if (x.rank() == 0) {
    if (kept == 1) backend.fill(out, Scalar(std::int64_t{0}));
    return {with_values ? materialize(backend, x) : Tensor(), std::move(out)};
  }
  const Tensor compact = x.is_contiguous() ? x : materialize(backend, x);
  if (!with_values) {
    backend.argsort(compact, a, descending, out);
    return {Tensor(), std::move(out)};
  }
  Tensor values = backend.empty(out_shape, x.dtype());
  backend.sort_into(compact, a, descending, values, out);
  return {std::move(values), std::move(out)};
}

}  // namespace

// ---- cumsum and cumprod -------------------------------------------------------------------

void prim::Cumulative::infer(const Cumulative& p, InferContext& ctx) {
  const TensorMeta& x = only_input(ctx);
  require_cumulative_op(p.op, ctx.op);
  (void)lane_axis_for(ctx, p.axis, x.rank());
  ctx.emit(cumulative_result_dtype(x.dtype), x.shape);
}

Tensor prim::Cumulative::execute(const Cumulative& p, const Operands& in, Backend& backend,
                                 const DimBindings&) {
  const Tensor& x = in[0];
  const std::string_view op = kind_name(kind_of(p));
  require_cumulative_op(p.op, op);
  require_operand(x, backend, op);
  const std::int64_t a = lane_axis(x, p.axis, op);
  Tensor out = backend.empty(x.shape(), cumulative_result_dtype(x.dtype()));
  if (x.rank() > 0) {
    backend.cumulate_into(x, out, a, p.op == ReduceOp::Prod, p.reverse);
  } else {
    backend.copy(x, out);
  }
  return out;
}

// ---- argsort and topk (the indices; sort and topk gather the values) -----------------------

void prim::Argsort::infer(const Argsort& p, InferContext& ctx) {
  const TensorMeta& x = only_input(ctx);
  require_no_complex(ctx, x.dtype,
                     "complex numbers are not ordered; sort abs(x), real(x) or imag(x) instead");
  const std::int64_t a = lane_axis_for(ctx, p.axis, x.rank());
  if (p.k < 0) {
    ctx.emit(DType::I64, x.shape);
    return;
  }
  if (x.rank() == 0) {
    if (p.k != 1) {
      fail(ErrorKind::InvalidArgument, ctx.op, "k = ", p.k,
           " on a rank-0 tensor, which always holds one value; use k = 1");
    }
    ctx.emit(DType::I64, x.shape);
    return;
  }
  SymShape shape = x.shape;
  const auto ua = static_cast<std::size_t>(a);
  ctx.require_at_most(SymDim(p.k), x.shape[ua],
                      "k must not exceed the extent of axis " + std::to_string(a),
                      ErrorKind::InvalidArgument);
  shape[ua] = SymDim(p.k);
  ctx.emit(DType::I64, std::move(shape));
}

Tensor prim::Argsort::execute(const Argsort& p, const Operands& in, Backend& backend,
                              const DimBindings&) {
  return sort_lanes(in[0], p.axis, p.k, p.descending, backend, false).second;
}

std::pair<Tensor, Tensor> detail::sort_prefix(const Tensor& x, std::int64_t axis, std::int64_t k,
                                              bool descending, Backend& backend) {
  return sort_lanes(x, axis, k, descending, backend, true);
}

}  // namespace tenferro
