#include "cpu/index_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "cpu/kernels.hpp"
#include "tensor/dispatch.hpp"
#include "tensor/strided.hpp"

namespace tenferro::cpu {

namespace {

// Shape and strides with one axis removed (the partition of a scatter).
Shape drop_axis(const SmallVector<std::int64_t, 8>& v, std::size_t axis) {
  Shape out(v);
  out.erase(out.begin() + axis);
  return out;
}

template <class I>
void normalize_typed(const Tensor& index, const Tensor& out, std::int64_t extent, std::int64_t axis,
                     const char* op) {
  detail::StridedPlan<2> plan(index.shape(), {index.strides().span(), out.strides().span()});
  const I* src = static_cast<const I*>(index.raw_data());
  auto* dst = static_cast<std::int64_t*>(out.raw_data());
  // Sequential on purpose: the first bad index throws from this thread.
  plan.run([&](std::int64_t n, const auto& off, const auto& inc) {
    for (std::int64_t i = 0; i < n; ++i) {
      const auto v = static_cast<std::int64_t>(src[off[0] + i * inc[0]]);
      if (v < -extent || v >= extent) {
        fail(ErrorKind::AxisOutOfBounds, op, "index ", v, " is out of range for axis ", axis,
             " with extent ", extent, "; indices must lie in [", -extent, ", ", extent, ")");
      }
      dst[off[1] + i * inc[1]] = v < 0 ? v + extent : v;
    }
  });
}

template <class T>
void gather_typed(CpuBackend& backend, const Tensor& x, const Tensor& index, std::size_t axis,
                  const Tensor& out) {
  // x is walked with stride 0 along `axis`; the index supplies that coordinate.
  Strides xs(x.strides());
  const std::int64_t xa = xs[axis];
  xs[axis] = 0;
  detail::StridedPlan<3> plan(out.shape(),
                              {out.strides().span(), index.strides().span(), xs.span()});
  const T* xp = static_cast<const T*>(x.raw_data());
  const auto* ip = static_cast<const std::int64_t*>(index.raw_data());
  T* op = static_cast<T*>(out.raw_data());
  backend.parallel_for(plan.numel, backend.parallel_threshold(),
                       [&](std::int64_t b, std::int64_t e) {
                         plan.run(b, e, [&](std::int64_t n, const auto& off, const auto& inc) {
                           T* o = op + off[0];
                           const std::int64_t* ix = ip + off[1];
                           const T* xb = xp + off[2];
                           if (inc[0] == 1 && inc[1] == 1) {
                             for (std::int64_t i = 0; i < n; ++i)
                               o[i] = xb[i * inc[2] + ix[i] * xa];
                           } else {
                             for (std::int64_t i = 0; i < n; ++i) {
                               o[i * inc[0]] = xb[i * inc[2] + ix[i * inc[1]] * xa];
                             }
                           }
                         });
                       });
}

template <class T>
void scatter_add_typed(CpuBackend& backend, const Tensor& src, const Tensor& index,
                       std::size_t axis, const Tensor& out) {
  // Threads split the positions off `axis`: two different positions never hit
  // the same output element, so no atomics are needed and the sum order is fixed.
  const Shape slice = drop_axis(index.shape(), axis);
  const Strides os = drop_axis(out.strides(), axis);
  const Strides is = drop_axis(index.strides(), axis);
  const Strides ss = drop_axis(src.strides(), axis);
  detail::StridedPlan<3> plan(slice, {os.span(), is.span(), ss.span()});
  const std::int64_t count = index.shape()[axis];
  const std::int64_t oa = out.strides()[axis], ia = index.strides()[axis];
  const std::int64_t sa = src.strides()[axis];
  T* op = static_cast<T*>(out.raw_data());
  const auto* ip = static_cast<const std::int64_t*>(index.raw_data());
  const T* sp = static_cast<const T*>(src.raw_data());
  const std::int64_t grain = std::max<std::int64_t>(1, backend.parallel_threshold() / count);
  backend.parallel_for(plan.numel, grain, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t k = 0; k < count; ++k) {
      plan.run(b, e, [&](std::int64_t n, const auto& off, const auto& inc) {
        T* o = op + off[0];
        const std::int64_t* ix = ip + off[1] + k * ia;
        const T* s = sp + off[2] + k * sa;
        for (std::int64_t i = 0; i < n; ++i) {
          T& dst = o[i * inc[0] + ix[i * inc[1]] * oa];
          if constexpr (std::is_same_v<T, bool>) {
            dst = dst || s[i * inc[2]];  // bool addition saturates (logical or)
          } else {
            dst += s[i * inc[2]];
          }
        }
      });
    }
  });
}

// Float -> integer without undefined behaviour (see cast_copy).
template <class D, class S>
D float_to_int(S v) {
  if (!std::isfinite(v)) return D{0};
  const S t = std::trunc(v);
  // min is -2^k and exact in S; max rounds up to 2^k in S, so >= catches it.
  if (t <= static_cast<S>(std::numeric_limits<D>::min())) return std::numeric_limits<D>::min();
  if (t >= static_cast<S>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
  return static_cast<D>(t);
}

template <class D, class S>
void cast_float_to_int(CpuBackend& backend, const Tensor& src, const Tensor& dst) {
  detail::StridedPlan<2> plan(src.shape(), {src.strides().span(), dst.strides().span()});
  const S* sp = static_cast<const S*>(src.raw_data());
  D* dp = static_cast<D*>(dst.raw_data());
  backend.parallel_for(plan.numel, backend.parallel_threshold(),
                       [&](std::int64_t b, std::int64_t e) {
                         plan.run(b, e, [&](std::int64_t n, const auto& off, const auto& inc) {
                           for (std::int64_t i = 0; i < n; ++i) {
                             const S v = sp[off[0] + i * inc[0]];
                             if constexpr (detail::is_complex_v<S>) {
                               dp[off[1] + i * inc[1]] = float_to_int<D>(v.real());
                             } else {
                               dp[off[1] + i * inc[1]] = float_to_int<D>(v);
                             }
                           }
                         });
                       });
}

template <class S>
void cast_from_inexact(CpuBackend& backend, const Tensor& src, const Tensor& dst) {
  if (dst.dtype() == DType::I32) {
    cast_float_to_int<std::int32_t, S>(backend, src, dst);
  } else {
    cast_float_to_int<std::int64_t, S>(backend, src, dst);
  }
}

}  // namespace

Tensor normalize_indices(CpuBackend& backend, const Tensor& index, std::int64_t extent,
                         std::int64_t axis, const char* op) {
  Tensor out = backend.empty(index.shape(), DType::I64);
  if (out.numel() == 0) return out;
  if (index.dtype() == DType::I32) {
    normalize_typed<std::int32_t>(index, out, extent, axis, op);
  } else if (index.dtype() == DType::I64) {
    normalize_typed<std::int64_t>(index, out, extent, axis, op);
  } else {
    fail(ErrorKind::DTypeMismatch, op, "index dtype must be i32 or i64, got ", name(index.dtype()));
  }
  return out;
}

void gather_along_axis(CpuBackend& backend, const Tensor& x, const Tensor& index, std::int64_t axis,
                       const Tensor& out) {
  if (out.numel() == 0) return;
  detail::dispatch_dtype(out.dtype(), [&](auto tag) {
    gather_typed<typename decltype(tag)::type>(backend, x, index, static_cast<std::size_t>(axis),
                                               out);
  });
}

void scatter_add_along_axis(CpuBackend& backend, const Tensor& src, const Tensor& index,
                            std::int64_t axis, const Tensor& out) {
  if (index.numel() == 0) return;
  detail::dispatch_dtype(out.dtype(), [&](auto tag) {
    scatter_add_typed<typename decltype(tag)::type>(backend, src, index,
                                                    static_cast<std::size_t>(axis), out);
  });
}

void zero_triangle(CpuBackend& backend, const Tensor& out, std::int64_t k, bool keep_lower) {
  const std::int64_t m = out.shape()[0], n = out.shape()[1];
  const std::int64_t columns = out.numel() / std::max<std::int64_t>(m, 1);
  if (m == 0 || columns == 0) return;
  // Clamping k keeps j - k from overflowing; beyond +-(m + n) nothing changes.
  k = std::clamp<std::int64_t>(k, -(m + n), m + n);
  // Zero is all-zero bytes in every dtype, so one byte kernel serves them all.
  const auto isz = static_cast<std::int64_t>(itemsize(out.dtype()));
  char* base = static_cast<char*>(out.raw_data());
  const std::int64_t grain = std::max<std::int64_t>(1, backend.parallel_threshold() / m);
  backend.parallel_for(columns, grain, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t c = b; c < e; ++c) {
      const std::int64_t j = c % n;
      // Row i of column j is in the lower triangle when j - i <= k.
      std::int64_t lo = 0, hi = 0;
      if (keep_lower) {
        hi = std::clamp<std::int64_t>(j - k, 0, m);
      } else {
        lo = std::clamp<std::int64_t>(j - k + 1, 0, m);
        hi = m;
      }
      if (hi > lo)
        std::memset(base + (c * m + lo) * isz, 0, static_cast<std::size_t>((hi - lo) * isz));
    }
  });
}

void cast_copy(CpuBackend& backend, const Tensor& src, const Tensor& dst) {
  if (!is_inexact(src.dtype()) || !is_integral(dst.dtype())) {
    copy(backend, src, dst);  // every other conversion is defined for all values
    return;
  }
  if (src.numel() == 0) return;
  switch (src.dtype()) {
    case DType::F32:
      cast_from_inexact<float>(backend, src, dst);
      break;
    case DType::F64:
      cast_from_inexact<double>(backend, src, dst);
      break;
    case DType::C64:
      cast_from_inexact<c64_t>(backend, src, dst);
      break;
    default:
      cast_from_inexact<c128_t>(backend, src, dst);
      break;
  }
}

}  // namespace tenferro::cpu
