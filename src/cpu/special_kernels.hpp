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
/// Listed by name, not by enumerator range, so an op appended later is not
/// routed here by accident.
inline bool is_special_op(UnaryOp op) {
  switch (op) {
    case UnaryOp::Erfinv:
    case UnaryOp::Lgamma:
    case UnaryOp::Digamma:
    case UnaryOp::I0:
    case UnaryOp::I0e:
    case UnaryOp::I1:
    case UnaryOp::I1e:
    case UnaryOp::Erfcx:
    case UnaryOp::Ndtr:
    case UnaryOp::Ndtri:
    case UnaryOp::LogNdtr:
    case UnaryOp::Entr:
    case UnaryOp::Logit:
    case UnaryOp::Frac:
    case UnaryOp::Sinc:
    case UnaryOp::FrexpMantissa:
    case UnaryOp::FrexpExponent:
      return true;
    default:
      return false;
  }
}
inline bool is_special_op(BinaryOp op) {
  return op == BinaryOp::Xlogy || op == BinaryOp::Xlog1py || op == BinaryOp::LogAddExp;
}

void special_unary_kernel(CpuBackend& backend, UnaryOp op, const Tensor& x, const Tensor& out);
void special_binary_kernel(CpuBackend& backend, BinaryOp op, const Tensor& a, const Tensor& b,
                           const Tensor& out);
/// out = polygamma(n, x); x and out are f32 or f64 (one dtype), n >= 0.
void polygamma_kernel(CpuBackend& backend, std::int64_t n, const Tensor& x, const Tensor& out);

}  // namespace tenferro::cpu
