// cpu::copy (dtype-converting strided copy, tensor/strided_copy.hpp on the
// backend's pool; large compact same-dtype copies with streaming stores) and
// cpu::fill.

#include <algorithm>
#include <cstdint>

#include "cpu/kernels.hpp"
#include "cpu/stream_store.hpp"
#include "tensor/dispatch.hpp"
#include "tensor/strided.hpp"
#include "tensor/strided_copy.hpp"

namespace tenferro::cpu {

namespace {

// A same-dtype copy between compact tensors that do not overlap and move
// enough to stream (streams_output: the bytes read plus the bytes written),
// run as stream_copy over the pool's chunks (whole lines of each chunk
// streamed, the lines two chunks share written by plain stores). False
// (nothing done) otherwise; strided_copy_into takes those.
bool streams_compact_copy(CpuBackend& backend, const Tensor& src, const Tensor& dst) {
  const std::size_t item = itemsize(src.dtype());
  const std::size_t bytes = static_cast<std::size_t>(src.numel()) * item;
  if (!streams_output(2 * bytes) || src.dtype() != dst.dtype() || !src.is_contiguous() ||
      !dst.is_contiguous())
    return false;
  const auto* s = static_cast<const unsigned char*>(src.raw_data());
  auto* d = static_cast<unsigned char*>(dst.raw_data());
  const auto sa = reinterpret_cast<std::uintptr_t>(s), da = reinterpret_cast<std::uintptr_t>(d);
  if (sa < da + bytes && da < sa + bytes) return false;
  backend.parallel_for(
      src.numel(), backend.parallel_threshold(), [&](std::int64_t b, std::int64_t e) {
        stream_copy(s + static_cast<std::size_t>(b) * item, d + static_cast<std::size_t>(b) * item,
                    static_cast<std::size_t>(e - b) * item);
        stream_fence();
      });
  return true;
}

}  // namespace

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
  if (streams_compact_copy(backend, src, dst)) return;
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
