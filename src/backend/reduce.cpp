#include "tenferro/backend/reduce.hpp"

#include <cmath>

namespace tenferro {
namespace {

using AxisMask = SmallVector<bool, 8>;

void require_defined(const Tensor& x, const char* op) {
  if (!x.defined()) {
    fail(ErrorKind::InvalidArgument, op,
         "the input tensor is undefined; pass a tensor made by a factory or another op");
  }
}

AxisMask mask_of(const Tensor& x, std::span<const std::int64_t> axes, const char* op) {
  AxisMask mask(static_cast<std::size_t>(x.rank()), false);
  for (const std::int64_t a : axes) {
    const auto d = static_cast<std::size_t>(normalize_axis(a, x.rank(), op));
    if (mask[d]) {
      fail(ErrorKind::DuplicateAxis, op, "axis ", a, " names axis ", d,
           " a second time in the axis list ", shape_to_string(axes), " of a rank-", x.rank(),
           " tensor; list each axis once");
    }
    mask[d] = true;
  }
  return mask;
}

AxisMask all_axes(const Tensor& x) {
  return AxisMask(static_cast<std::size_t>(x.rank()), true);
}

Shape result_shape(const Tensor& x, const AxisMask& mask, bool keepdim) {
  Shape out;
  for (std::size_t d = 0; d < mask.size(); ++d) {
    if (!mask[d]) {
      out.push_back(x.shape()[d]);
    } else if (keepdim) {
      out.push_back(1);
    }
  }
  return out;
}

std::int64_t reduced_count(const Tensor& x, const AxisMask& mask) {
  std::int64_t n = 1;
  for (std::size_t d = 0; d < mask.size(); ++d)
    if (mask[d]) n *= x.shape()[d];
  return n;
}

void require_nonempty(const Tensor& x, const AxisMask& mask, const char* op) {
  if (reduced_count(x, mask) == 0) {
    fail(ErrorKind::InvalidArgument, op, "the reduction over a tensor of shape ",
         shape_to_string(x.shape()), " covers zero elements and ", op,
         " has no identity; reduce over non-empty axes or check the extents first");
  }
}

// x itself when it has `dtype`, otherwise a compact converted copy.
Tensor as_dtype(Backend& backend, const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  Tensor y = backend.empty(x.shape(), dtype);
  backend.copy(x, y);
  return y;
}

// The ReduceOps: the descriptor's dtype (kernels compute in the result
// dtype), its identity check, then the kernel.
Tensor reduce_impl(ReduceOp op, const Tensor& x, const AxisMask& mask, Backend& backend,
                   bool keepdim) {
  const std::string nm(descriptor(op).name);
  const DType rd = reduce_result_dtype(op, x.dtype());
  if (!descriptor(op).has_identity) require_nonempty(x, mask, nm.c_str());
  const Tensor in = as_dtype(backend, x, rd);
  Tensor out = backend.empty(result_shape(x, mask, keepdim), rd);
  backend.reduce(op, in, mask.span(), out);
  return out;
}

Tensor reduce_axes(ReduceOp op, const Tensor& x, std::span<const std::int64_t> axes,
                   Backend& backend, bool keepdim) {
  const std::string nm(descriptor(op).name);
  require_defined(x, nm.c_str());
  return reduce_impl(op, x, mask_of(x, axes, nm.c_str()), backend, keepdim);
}

Tensor reduce_all(ReduceOp op, const Tensor& x, Backend& backend) {
  require_defined(x, std::string(descriptor(op).name).c_str());
  return reduce_impl(op, x, all_axes(x), backend, false);
}

// var (std_dev when `root`): computed in x's floating dtype, real result.
Tensor variance(bool root, const Tensor& x, std::span<const std::int64_t> axes, Backend& backend,
                double correction, bool keepdim) {
  const char* op = root ? "std" : "var";
  require_defined(x, op);
  const AxisMask mask = mask_of(x, axes, op);
  if (std::isnan(correction)) {
    fail(ErrorKind::InvalidArgument, op, "correction is NaN; pass 1 (unbiased) or 0 (population)");
  }
  const Tensor in = as_dtype(backend, x, inexact_dtype(x.dtype()));
  Tensor out = backend.empty(result_shape(x, mask, keepdim), variance_result_dtype(x.dtype()));
  backend.variance(in, mask.span(), correction, root, out);
  return out;
}

Tensor arg_extremum(bool is_max, const Tensor& x, std::int64_t axis, Backend& backend,
                    bool keepdim) {
  const char* op = is_max ? "argmax" : "argmin";
  require_defined(x, op);
  if (is_complex(x.dtype())) {  // the message of prim::ArgReduce's inference
    fail(ErrorKind::DTypeMismatch, op, "not defined for complex dtype ", name(x.dtype()),
         "; complex numbers are not ordered; use abs() or real()");
  }
  const std::int64_t a = normalize_axis(axis, x.rank(), op);
  AxisMask mask(static_cast<std::size_t>(x.rank()), false);
  mask[static_cast<std::size_t>(a)] = true;
  require_nonempty(x, mask, op);

  Tensor out = backend.empty(result_shape(x, mask, keepdim), DType::I64);
  backend.arg_reduce(is_max, x, a, out);
  return out;
}

}  // namespace

std::string_view name(ReduceOp op) {
  const auto i = static_cast<std::size_t>(op);
  return i < std::size(kReduceOps) ? kReduceOps[i].name : "reduce";
}

namespace {
// The descriptor of a ReduceOp from outside the library (InvalidArgument for
// a value that is no enumerator).
const ReduceDescriptor& checked_descriptor(ReduceOp op) {
  if (static_cast<std::size_t>(op) >= std::size(kReduceOps)) {
    fail(ErrorKind::InvalidArgument, "reduce", "unknown ReduceOp ", static_cast<int>(op),
         "; use one of the ReduceOp enumerators");
  }
  return descriptor(op);
}
}  // namespace

DType reduce_result_dtype(ReduceOp op, DType x) {
  const ReduceDescriptor& d = checked_descriptor(op);
  if (is_complex(x) && !d.complex_advice.empty()) {
    fail(ErrorKind::DTypeMismatch, std::string(d.name), "not defined for complex dtype ", name(x),
         "; ", d.complex_advice);
  }
  switch (d.result) {
    case ReduceResult::Accumulate:
      return is_bool(x) || is_integral(x) ? DType::I64 : x;
    case ReduceResult::Inexact:
      return inexact_dtype(x);
    case ReduceResult::Same:
      return x;
    case ReduceResult::Bool:
      return DType::Bool;
  }
  return x;
}

DType variance_result_dtype(DType x) {
  return real_dtype(inexact_dtype(x));
}

Tensor reduce(ReduceOp op, const Tensor& x, std::span<const std::int64_t> axes, Backend& backend,
              bool keepdim) {
  (void)checked_descriptor(op);
  return reduce_axes(op, x, axes, backend, keepdim);
}

Tensor sum(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend, bool keepdim) {
  return reduce_axes(ReduceOp::Sum, x, axes, backend, keepdim);
}
Tensor prod(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend, bool keepdim) {
  return reduce_axes(ReduceOp::Prod, x, axes, backend, keepdim);
}
Tensor mean(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend, bool keepdim) {
  return reduce_axes(ReduceOp::Mean, x, axes, backend, keepdim);
}
Tensor max(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend, bool keepdim) {
  return reduce_axes(ReduceOp::Max, x, axes, backend, keepdim);
}
Tensor min(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend, bool keepdim) {
  return reduce_axes(ReduceOp::Min, x, axes, backend, keepdim);
}
Tensor all(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend, bool keepdim) {
  return reduce_axes(ReduceOp::All, x, axes, backend, keepdim);
}
Tensor any(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend, bool keepdim) {
  return reduce_axes(ReduceOp::Any, x, axes, backend, keepdim);
}
Tensor logsumexp(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend,
                 bool keepdim) {
  return reduce_axes(ReduceOp::LogSumExp, x, axes, backend, keepdim);
}
Tensor var(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend, double correction,
           bool keepdim) {
  return variance(false, x, axes, backend, correction, keepdim);
}
Tensor std_dev(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend,
               double correction, bool keepdim) {
  return variance(true, x, axes, backend, correction, keepdim);
}
Tensor argmax(const Tensor& x, std::int64_t axis, Backend& backend, bool keepdim) {
  return arg_extremum(true, x, axis, backend, keepdim);
}
Tensor argmin(const Tensor& x, std::int64_t axis, Backend& backend, bool keepdim) {
  return arg_extremum(false, x, axis, backend, keepdim);
}

Tensor sum(const Tensor& x, Backend& backend) {
  return reduce_all(ReduceOp::Sum, x, backend);
}
Tensor prod(const Tensor& x, Backend& backend) {
  return reduce_all(ReduceOp::Prod, x, backend);
}
Tensor mean(const Tensor& x, Backend& backend) {
  return reduce_all(ReduceOp::Mean, x, backend);
}
Tensor max(const Tensor& x, Backend& backend) {
  return reduce_all(ReduceOp::Max, x, backend);
}
Tensor min(const Tensor& x, Backend& backend) {
  return reduce_all(ReduceOp::Min, x, backend);
}
Tensor all(const Tensor& x, Backend& backend) {
  return reduce_all(ReduceOp::All, x, backend);
}
Tensor any(const Tensor& x, Backend& backend) {
  return reduce_all(ReduceOp::Any, x, backend);
}
Tensor logsumexp(const Tensor& x, Backend& backend) {
  return reduce_all(ReduceOp::LogSumExp, x, backend);
}

}  // namespace tenferro
