#pragma once
// CPU kernels of the special functions (erfinv ... frexp, polygamma, xlogy,
// xlog1py, logaddexp). Not installed. unary_kernel and binary_kernel route
// these ops here; operands arrive in the compute dtype (f32/f64, and complex
// for sinc and logaddexp) with the output's shape.

#include <cstdint>

#include "tenferro/backend/cpu/cpu_backend.hpp"
#include "tenferro/backend/elementwise.hpp"

namespace tenferro::cpu {

/// Whether unary_kernel / binary_kernel hand `op` to the kernels below.
inline bool is_special_op(UnaryOp op) {
  return static_cast<int>(op) >= static_cast<int>(UnaryOp::Erfinv);
}
inline bool is_special_op(BinaryOp op) {
  const int i = static_cast<int>(op);
  return i >= static_cast<int>(BinaryOp::Xlogy) && i <= static_cast<int>(BinaryOp::LogAddExp);
}

void special_unary_kernel(CpuBackend& backend, UnaryOp op, const Tensor& x, const Tensor& out);
void special_binary_kernel(CpuBackend& backend, BinaryOp op, const Tensor& a, const Tensor& b,
                           const Tensor& out);
/// out = polygamma(n, x); x and out are f32 or f64 (one dtype), n >= 0.
void polygamma_kernel(CpuBackend& backend, std::int64_t n, const Tensor& x, const Tensor& out);

}  // namespace tenferro::cpu
