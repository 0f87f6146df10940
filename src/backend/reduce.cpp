#include "tenferro/backend/reduce.hpp"

#include <cmath>

#include "backend/cpu/kernels.hpp"
#include "backend/cpu/reduce_kernels.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"

namespace tenferro {
namespace {

// Every reduction the direct API offers; ReduceOp plus the statistics.
enum class Reduction { Sum, Prod, Mean, Max, Min, All, Any, LogSumExp, Var, Std };

const char* op_name(Reduction r) {
  switch (r) {
    case Reduction::Sum:
      return "sum";
    case Reduction::Prod:
      return "prod";
    case Reduction::Mean:
      return "mean";
    case Reduction::Max:
      return "max";
    case Reduction::Min:
      return "min";
    case Reduction::All:
      return "all";
    case Reduction::Any:
      return "any";
    case Reduction::LogSumExp:
      return "logsumexp";
    case Reduction::Var:
      return "var";
    case Reduction::Std:
      return "std";
  }
  return "reduce";
}

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

void reject_complex(const Tensor& x, const char* op, const char* hint) {
  if (is_complex(x.dtype())) {
    fail(ErrorKind::DTypeMismatch, op, "complex input (", name(x.dtype()), ") is not supported; ",
         hint);
  }
}

// x itself when it has `dtype`, otherwise a compact converted copy.
Tensor as_dtype(CpuBackend& cpu, const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  Tensor y = cpu.empty(x.shape(), dtype);
  cpu::copy(cpu, x, y);
  return y;
}

// The dtype the kernel computes in and the result dtype.
struct DTypes {
  DType compute, result;
};

DTypes dtypes_of(Reduction r, const Tensor& x) {
  const char* op = op_name(r);
  const DType t = x.dtype();
  switch (r) {
    case Reduction::Sum:
    case Reduction::Prod: {
      const DType c = (is_bool(t) || is_integral(t)) ? DType::I64 : t;
      return {c, c};
    }
    case Reduction::Mean:
      return {inexact_dtype(t), inexact_dtype(t)};
    case Reduction::Max:
    case Reduction::Min:
      reject_complex(x, op, "complex numbers have no order; reduce abs(x) or real(x) instead");
      return {t, t};
    case Reduction::All:
    case Reduction::Any:
      return {DType::Bool, DType::Bool};
    case Reduction::LogSumExp:
      reject_complex(x, op, "logsumexp is defined for real floating input; pass real(x) or abs(x)");
      return {inexact_dtype(t), inexact_dtype(t)};
    case Reduction::Var:
    case Reduction::Std:
      return {inexact_dtype(t), real_dtype(inexact_dtype(t))};
  }
  return {t, t};
}

Tensor reduce_impl(Reduction r, const Tensor& x, const AxisMask& mask, Backend& backend,
                   bool keepdim, double correction = 0.0) {
  const char* op = op_name(r);
  CpuBackend& cpu = require_cpu(backend, op);
  const DTypes types = dtypes_of(r, x);
  if (r == Reduction::Max || r == Reduction::Min) require_nonempty(x, mask, op);
  if ((r == Reduction::Var || r == Reduction::Std) && std::isnan(correction)) {
    fail(ErrorKind::InvalidArgument, op, "correction is NaN; pass 1 (unbiased) or 0 (population)");
  }

  ScopedCpuSession session(cpu);
  const Tensor in = as_dtype(cpu, x, types.compute);
  Tensor out = cpu.empty(result_shape(x, mask, keepdim), types.result);
  const std::span<const bool> reduced = mask.span();
  switch (r) {
    case Reduction::Sum:
      cpu::reduce_axes(cpu, cpu::ReduceKernel::Sum, in, reduced, out);
      break;
    case Reduction::Prod:
      cpu::reduce_axes(cpu, cpu::ReduceKernel::Prod, in, reduced, out);
      break;
    case Reduction::Max:
      cpu::reduce_axes(cpu, cpu::ReduceKernel::Max, in, reduced, out);
      break;
    case Reduction::Min:
      cpu::reduce_axes(cpu, cpu::ReduceKernel::Min, in, reduced, out);
      break;
    case Reduction::All:
      cpu::reduce_axes(cpu, cpu::ReduceKernel::All, in, reduced, out);
      break;
    case Reduction::Any:
      cpu::reduce_axes(cpu, cpu::ReduceKernel::Any, in, reduced, out);
      break;
    case Reduction::Mean:
      cpu::mean_axes(cpu, in, reduced, out);
      break;
    case Reduction::LogSumExp:
      cpu::logsumexp_axes(cpu, in, reduced, out);
      break;
    case Reduction::Var:
      cpu::var_axes(cpu, in, reduced, out, correction, false);
      break;
    case Reduction::Std:
      cpu::var_axes(cpu, in, reduced, out, correction, true);
      break;
  }
  return out;
}

Tensor reduce_axes(Reduction r, const Tensor& x, std::span<const std::int64_t> axes,
                   Backend& backend, bool keepdim, double correction = 0.0) {
  require_defined(x, op_name(r));
  return reduce_impl(r, x, mask_of(x, axes, op_name(r)), backend, keepdim, correction);
}

Tensor reduce_all(Reduction r, const Tensor& x, Backend& backend) {
  require_defined(x, op_name(r));
  return reduce_impl(r, x, all_axes(x), backend, false);
}

Reduction reduction_of(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return Reduction::Sum;
    case ReduceOp::Prod:
      return Reduction::Prod;
    case ReduceOp::Mean:
      return Reduction::Mean;
    case ReduceOp::Max:
      return Reduction::Max;
    case ReduceOp::Min:
      return Reduction::Min;
    case ReduceOp::All:
      return Reduction::All;
    case ReduceOp::Any:
      return Reduction::Any;
    case ReduceOp::LogSumExp:
      return Reduction::LogSumExp;
  }
  fail(ErrorKind::InvalidArgument, "reduce", "unknown ReduceOp ", static_cast<int>(op),
       "; use one of the ReduceOp enumerators");
}

Tensor arg_extremum(bool is_max, const Tensor& x, std::int64_t axis, Backend& backend,
                    bool keepdim) {
  const char* op = is_max ? "argmax" : "argmin";
  require_defined(x, op);
  CpuBackend& cpu = require_cpu(backend, op);
  reject_complex(x, op, "complex numbers have no order; pass abs(x) or real(x) instead");
  const std::int64_t a = normalize_axis(axis, x.rank(), op);
  AxisMask mask(static_cast<std::size_t>(x.rank()), false);
  mask[static_cast<std::size_t>(a)] = true;
  require_nonempty(x, mask, op);

  ScopedCpuSession session(cpu);
  Tensor out = cpu.empty(result_shape(x, mask, keepdim), DType::I64);
  cpu::arg_reduce(cpu, is_max, x, a, out);
  return out;
}

}  // namespace

std::string_view name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return "sum";
    case ReduceOp::Prod:
      return "prod";
    case ReduceOp::Mean:
      return "mean";
    case ReduceOp::Max:
      return "max";
    case ReduceOp::Min:
      return "min";
    case ReduceOp::All:
      return "all";
    case ReduceOp::Any:
      return "any";
    case ReduceOp::LogSumExp:
      return "logsumexp";
  }
  return "?";
}

Tensor reduce(ReduceOp op, const Tensor& x, std::span<const std::int64_t> axes, Backend& backend,
              bool keepdim) {
  return reduce_axes(reduction_of(op), x, axes, backend, keepdim);
}

Tensor sum(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend, bool keepdim) {
  return reduce_axes(Reduction::Sum, x, axes, backend, keepdim);
}
Tensor prod(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend, bool keepdim) {
  return reduce_axes(Reduction::Prod, x, axes, backend, keepdim);
}
Tensor mean(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend, bool keepdim) {
  return reduce_axes(Reduction::Mean, x, axes, backend, keepdim);
}
Tensor max(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend, bool keepdim) {
  return reduce_axes(Reduction::Max, x, axes, backend, keepdim);
}
Tensor min(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend, bool keepdim) {
  return reduce_axes(Reduction::Min, x, axes, backend, keepdim);
}
Tensor all(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend, bool keepdim) {
  return reduce_axes(Reduction::All, x, axes, backend, keepdim);
}
Tensor any(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend, bool keepdim) {
  return reduce_axes(Reduction::Any, x, axes, backend, keepdim);
}
Tensor logsumexp(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend,
                 bool keepdim) {
  return reduce_axes(Reduction::LogSumExp, x, axes, backend, keepdim);
}
Tensor var(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend, double correction,
           bool keepdim) {
  return reduce_axes(Reduction::Var, x, axes, backend, keepdim, correction);
}
Tensor std_dev(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend,
               double correction, bool keepdim) {
  return reduce_axes(Reduction::Std, x, axes, backend, keepdim, correction);
}
Tensor argmax(const Tensor& x, std::int64_t axis, Backend& backend, bool keepdim) {
  return arg_extremum(true, x, axis, backend, keepdim);
}
Tensor argmin(const Tensor& x, std::int64_t axis, Backend& backend, bool keepdim) {
  return arg_extremum(false, x, axis, backend, keepdim);
}

Tensor sum(const Tensor& x, Backend& backend) {
  return reduce_all(Reduction::Sum, x, backend);
}
Tensor prod(const Tensor& x, Backend& backend) {
  return reduce_all(Reduction::Prod, x, backend);
}
Tensor mean(const Tensor& x, Backend& backend) {
  return reduce_all(Reduction::Mean, x, backend);
}
Tensor max(const Tensor& x, Backend& backend) {
  return reduce_all(Reduction::Max, x, backend);
}
Tensor min(const Tensor& x, Backend& backend) {
  return reduce_all(Reduction::Min, x, backend);
}
Tensor all(const Tensor& x, Backend& backend) {
  return reduce_all(Reduction::All, x, backend);
}
Tensor any(const Tensor& x, Backend& backend) {
  return reduce_all(Reduction::Any, x, backend);
}
Tensor logsumexp(const Tensor& x, Backend& backend) {
  return reduce_all(Reduction::LogSumExp, x, backend);
}

}  // namespace tenferro
