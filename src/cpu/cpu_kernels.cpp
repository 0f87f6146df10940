// The Backend kernels of CpuBackend: each runs the CPU kernel of this
// folder. Only BLAS needs a session (its thread count is set on entry), so
// only gemm enters one (unless this thread has one on the backend).

#include "cpu/elementwise_kernels.hpp"
#include "cpu/gemm.hpp"
#include "cpu/index_kernels.hpp"
#include "cpu/kernels.hpp"
#include "cpu/lane_kernels.hpp"
#include "cpu/reduce_kernels.hpp"
#include "cpu/special_kernels.hpp"

namespace tenferro {

void CpuBackend::copy(const Tensor& src, const Tensor& dst) {
  cpu::copy(*this, src, dst);
}

void CpuBackend::cast(const Tensor& src, const Tensor& dst) {
  cpu::cast_copy(*this, src, dst);
}

void CpuBackend::fill(const Tensor& dst, Scalar value) {
  cpu::fill(*this, dst, value);
}

void CpuBackend::unary(UnaryOp op, const Tensor& x, const Tensor& out) {
  cpu::unary_kernel(*this, op, x, out);
}

void CpuBackend::binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  cpu::binary_kernel(*this, op, a, b, out);
}

void CpuBackend::polygamma(std::int64_t n, const Tensor& x, const Tensor& out) {
  cpu::polygamma_kernel(*this, n, x, out);
}

void CpuBackend::where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) {
  cpu::where_kernel(*this, cond, a, b, out);
}

void CpuBackend::clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi,
                       const Tensor& out) {
  cpu::clamp_kernel(*this, x, lo, hi, out);
}

void CpuBackend::zero_triangle(const Tensor& t, std::int64_t k, bool keep_lower) {
  cpu::zero_triangle(*this, t, k, keep_lower);
}

void CpuBackend::reduce(ReduceOp op, const Tensor& x, std::span<const bool> reduced,
                        const Tensor& out) {
  switch (op) {
    case ReduceOp::Mean:
      return cpu::mean_axes(*this, x, reduced, out);
    case ReduceOp::LogSumExp:
      return cpu::logsumexp_axes(*this, x, reduced, out);
    default:
      return cpu::reduce_axes(*this, op, x, reduced, out);
  }
}

void CpuBackend::variance(const Tensor& x, std::span<const bool> reduced, double correction,
                          bool root, const Tensor& out) {
  cpu::var_axes(*this, x, reduced, out, correction, root);
}

void CpuBackend::arg_reduce(bool is_max, const Tensor& x, std::int64_t axis, const Tensor& out) {
  cpu::arg_reduce(*this, is_max, x, axis, out);
}

void CpuBackend::cumulate(const Tensor& t, std::int64_t axis, bool product, bool reverse) {
  cpu::cumulate_lanes(*this, t, t, cpu::lane_shape(t, axis), product, reverse);
}

// A compact x of the result's dtype is scanned straight into out: one pass
// over memory instead of a copy and then a scan in place.
void CpuBackend::cumulate_into(const Tensor& x, const Tensor& out, std::int64_t axis, bool product,
                               bool reverse) {
  if (x.dtype() != out.dtype() || !x.is_contiguous() || !out.is_contiguous()) {
    return Backend::cumulate_into(x, out, axis, product, reverse);
  }
  cpu::cumulate_lanes(*this, x, out, cpu::lane_shape(x, axis), product, reverse);
}

void CpuBackend::argsort(const Tensor& x, std::int64_t axis, bool descending, const Tensor& out) {
  const std::int64_t kept = out.shape()[static_cast<std::size_t>(axis)];
  cpu::argsort_lanes(*this, x, cpu::lane_shape(x, axis), kept, descending, out, nullptr);
}

// The values come out of the sort itself (read back from its keys, in
// order), not from a gather at the sorted indices: a lane of 2^20 doubles
// read at random cost about 3.5 ms of a 24 ms sort.
void CpuBackend::sort_into(const Tensor& x, std::int64_t axis, bool descending,
                           const Tensor& values, const Tensor& indices) {
  if (values.dtype() != x.dtype() || !values.is_contiguous()) {
    return Backend::sort_into(x, axis, descending, values, indices);
  }
  const std::int64_t kept = indices.shape()[static_cast<std::size_t>(axis)];
  cpu::argsort_lanes(*this, x, cpu::lane_shape(x, axis), kept, descending, indices, &values);
}

Tensor CpuBackend::normalize_indices(const Tensor& index, std::int64_t extent, std::int64_t axis,
                                     const char* op) {
  return cpu::normalize_indices(*this, index, extent, axis, op);
}

void CpuBackend::gather(const Tensor& x, const Tensor& index, std::int64_t axis,
                        const Tensor& out) {
  cpu::gather_along_axis(*this, x, index, axis, out);
}

void CpuBackend::scatter_add(const Tensor& src, const Tensor& index, std::int64_t axis,
                             const Tensor& out) {
  cpu::scatter_add_along_axis(*this, src, index, axis, out);
}

void CpuBackend::gemm(DType dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                      const GemmOperand& a, const GemmOperand& b, void* c,
                      const Shape& batch_shape) {
  ScopedCpuSession session(*this);
  cpu::gemm_batched(*this, dtype, m, n, k, a, b, c, batch_shape);
}

}  // namespace tenferro
