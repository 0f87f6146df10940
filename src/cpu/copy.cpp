// cpu::copy (dtype-converting strided copy, internal/strided_copy.hpp on the
// backend's pool) and cpu::fill.

#include <algorithm>

#include "cpu/kernels.hpp"
#include "internal/dispatch.hpp"
#include "internal/strided.hpp"
#include "internal/strided_copy.hpp"

namespace tenferro::cpu {

void copy(CpuBackend& backend, const Tensor& src, const Tensor& dst) {
  if (!src.defined() || !dst.defined()) {
    fail(ErrorKind::InvalidArgument, "copy", "source or destination is undefined");
  }
  if (!(src.shape() == dst.shape())) {
    fail(ErrorKind::ShapeMismatch, "copy", "source shape ", shape_to_string(src.shape()),
         " differs from destination shape ", shape_to_string(dst.shape()));
  }
  if (!src.placement().is_host() || !dst.placement().is_host()) {
    fail(ErrorKind::Unsupported, "copy", "host copy between ", to_string(src.placement()), " and ",
         to_string(dst.placement()), "; use the device backend's copy");
  }
  detail::strided_copy_into(
      src, dst,
      [&](std::int64_t n, std::int64_t grain, auto&& body) {
        backend.parallel_for(n, grain, body);
      },
      backend.parallel_threshold());
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
