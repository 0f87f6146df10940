#include <algorithm>

#include "backend/cpu/kernels.hpp"
#include "internal/dispatch.hpp"
#include "internal/strided.hpp"

namespace tenferro::cpu {

void copy(CpuBackend& /*backend*/, const Tensor& src, const Tensor& dst) {
  Tensor::copy_into(src, dst);
}

void fill(CpuBackend& backend, const Tensor& dst, Scalar value) {
  if (dst.numel() == 0) return;
  detail::StridedPlan<1> plan(dst.shape(), {dst.strides().span()});
  detail::dispatch_dtype(dst.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = value.to<T>();
    T* base = static_cast<T*>(dst.raw_data());
    backend.parallel_for(plan.numel, backend.parallel_threshold(),
                         [&](std::int64_t b, std::int64_t e) {
                           plan.run(b, e, [&](std::int64_t n, const auto& off, const auto& inc) {
                             T* p = base + off[0];
                             if (inc[0] == 1) {
                               std::fill(p, p + n, v);
                             } else {
                               for (std::int64_t i = 0; i < n; ++i) p[i * inc[0]] = v;
                             }
                           });
                         });
  });
}

}  // namespace tenferro::cpu
