#pragma once
// CPU elementwise kernels behind backend/elementwise.hpp, and the loop they share.
// Not installed. Callers (the direct ops, through Backend) validate, promote and
// broadcast first: every kernel receives operands already in the compute dtype
// and with the output's shape (stride-0 broadcast views are fine).

#include <array>
#include <cstdint>
#include <optional>
#include <tuple>
#include <utility>

#include "cpu/stream_store.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"
#include "tenferro/backend/elementwise.hpp"
#include "tensor/strided.hpp"

namespace tenferro::cpu {

/// out = op(x); x has the op's compute dtype, out its result dtype.
void unary_kernel(CpuBackend& backend, UnaryOp op, const Tensor& x, const Tensor& out);
/// out = op(a, b); a and b have the compute dtype and out's shape.
void binary_kernel(CpuBackend& backend, BinaryOp op, const Tensor& a, const Tensor& b,
                   const Tensor& out);
/// The compact forms, for the fused executor's blocks: out[i] = op(x[i]) for
/// n elements of raw arrays (x of the op's compute dtype `dtype`, out of its
/// result dtype), with the same element functions as unary_kernel, so the
/// same values; on the calling thread. False (nothing written) for the
/// special functions, which have their own kernels.
bool unary_contiguous(UnaryOp op, DType dtype, const void* x, void* out, std::int64_t n);
/// out[i] = op(a[i], b[i]) likewise (a and b of the compute dtype `dtype`).
bool binary_contiguous(BinaryOp op, DType dtype, const void* a, const void* b, void* out,
                       std::int64_t n);
/// out[i] = m op2 c[i], or c[i] op2 m when `mid_right`, with m = a[i] op1 b[i]
/// rounded to the dtype: the values of two binary_contiguous calls through a
/// scratch array, in one loop. f32/f64 add, sub, mul and div only (false,
/// nothing written, otherwise). `out` may be a, b or c.
bool binary2_contiguous(BinaryOp op1, BinaryOp op2, bool mid_right, DType dtype, const void* a,
                        const void* b, const void* c, void* out, std::int64_t n);
/// out = cond ? a : b; cond is bool, a, b and out share one dtype.
void where_kernel(CpuBackend& backend, const Tensor& cond, const Tensor& a, const Tensor& b,
                  const Tensor& out);
/// out = min(max(x, lo), hi) on x's dtype (real or integer); absent bounds are open.
void clamp_kernel(CpuBackend& backend, const Tensor& x, std::optional<Scalar> lo,
                  std::optional<Scalar> hi, const Tensor& out);

namespace detail_ew {

/// Binary ops with one operand broadcast from a single value (x * 0.5,
/// x + bias[0]) over a unit-stride output and other operand: the value is
/// loaded once and the loop vectorises. False (nothing done) otherwise.
template <class... In, class Out, class Inc, class Ptrs, class F>
bool run_with_scalar_operand(Out* o, const Inc& inc, const Ptrs& p, std::int64_t n, const F& f) {
  if constexpr (sizeof...(In) == 2) {
    if (inc[0] != 1) return false;
    const auto* a = std::get<0>(p);
    const auto* b = std::get<1>(p);
    if (inc[1] == 0 && inc[2] == 1) {
      const auto av = *a;
      for (std::int64_t i = 0; i < n; ++i) o[i] = f(av, b[i]);
      return true;
    }
    if (inc[1] == 1 && inc[2] == 0) {
      const auto bv = *b;
      for (std::int64_t i = 0; i < n; ++i) o[i] = f(a[i], bv);
      return true;
    }
  }
  return false;
}

// Whether the flat loop of a light element function streams its output:
// the op moves enough (streams_output: 1.5x the last-level cache) and the
// output overlaps none of the inputs (in place, the output lines are in the
// cache already, read as inputs).
template <class Out, class... In>
bool streams_flat_output(std::int64_t n, const Out* out, const In*... in) {
  const auto bytes = static_cast<std::size_t>(n);
  if (!streams_output(bytes * (sizeof(Out) + (sizeof(In) + ... + 0)))) return false;
  const auto o = reinterpret_cast<std::uintptr_t>(out);
  const auto apart = [&](const auto* p, std::size_t size) {
    const auto q = reinterpret_cast<std::uintptr_t>(p);
    return q + bytes * size <= o || o + bytes * sizeof(Out) <= q;
  };
  return (apart(in, sizeof(In)) && ...);
}

/// light: the element function costs about what its loads and stores do
/// (negation, comparison, selection), so a flat loop that moves more than
/// the cache streams its output (streamed_blocks); functions with more
/// arithmetic per element gained nothing from it (exp of 2^21 and 2^22
/// doubles: 0-20% slower streamed in plain loops, the stores issued in bursts).
template <class Out, class... In, class F, std::size_t... I>
void map_elements_impl(CpuBackend& backend, const Tensor& out, const F& f, bool light,
                       std::index_sequence<I...>,
                       const std::array<const Tensor*, sizeof...(In)>& ins) {
  constexpr std::size_t K = 1 + sizeof...(In);
  if (out.numel() == 0) return;
  const tenferro::detail::StridedPlan<K> plan(out.shape(),
                                              {out.strides().span(), ins[I]->strides().span()...});
  Out* const out_base = static_cast<Out*>(out.raw_data());
  const std::tuple<const In*...> in_base{static_cast<const In*>(ins[I]->raw_data())...};
  const bool flat = plan.is_flat_unit();
  const bool streaming =
      light && flat && streams_flat_output(plan.numel, out_base, std::get<I>(in_base)...);
  backend.parallel_for(plan.numel, backend.parallel_threshold(),
                       [&](std::int64_t b, std::int64_t e) {
                         if (flat) {
                           // Compact operands: a plain indexed loop the compiler vectorises.
                           Out* o = out_base + b;
                           const std::tuple<const In*...> p{(std::get<I>(in_base) + b)...};
                           const std::int64_t n = e - b;
                           if (streaming) {
                             streamed_blocks(
                                 o, n,
                                 [&](Out* dst, std::int64_t s, std::int64_t m) {
                                   for (std::int64_t i = 0; i < m; ++i)
                                     dst[i] = f(std::get<I>(p)[s + i]...);
                                 },
                                 std::get<I>(p)...);
                             return;
                           }
                           for (std::int64_t i = 0; i < n; ++i) o[i] = f(std::get<I>(p)[i]...);
                           return;
                         }
                         plan.run(b, e, [&](std::int64_t n, const auto& off, const auto& inc) {
                           Out* o = out_base + off[0];
                           const std::tuple<const In*...> p{(std::get<I>(in_base) + off[I + 1])...};
                           if (inc[0] == 1 && ((inc[I + 1] == 1) && ...)) {
                             for (std::int64_t i = 0; i < n; ++i) o[i] = f(std::get<I>(p)[i]...);
                           } else if (run_with_scalar_operand<In...>(o, inc, p, n, f)) {
                             return;
                           } else {
                             for (std::int64_t i = 0; i < n; ++i)
                               o[i * inc[0]] = f(std::get<I>(p)[i * inc[I + 1]]...);
                           }
                         });
                       });
}

}  // namespace detail_ew

/// out[i] = f(ins[i]...) over out's shape: a flat loop for compact operands,
/// StridedPlan runs otherwise (any strides, stride 0 from broadcasting), split
/// across the pool above the backend's parallel threshold.
template <class Out, class... In, class F, class... Ts>
void map_elements(CpuBackend& backend, const Tensor& out, const F& f, const Ts&... ins) {
  static_assert(sizeof...(In) == sizeof...(Ts), "one element type per input tensor");
  detail_ew::map_elements_impl<Out, In...>(backend, out, f, false, std::index_sequence_for<In...>{},
                                           {&ins...});
}

/// map_elements for a light element function (about the cost of its loads
/// and stores: negation, comparison, selection): compact operands that move
/// well beyond the last-level cache into a separate output stream it
/// (cpu/stream_store.hpp), the same values as map_elements.
template <class Out, class... In, class F, class... Ts>
void map_light_elements(CpuBackend& backend, const Tensor& out, const F& f, const Ts&... ins) {
  static_assert(sizeof...(In) == sizeof...(Ts), "one element type per input tensor");
  detail_ew::map_elements_impl<Out, In...>(backend, out, f, true, std::index_sequence_for<In...>{},
                                           {&ins...});
}

}  // namespace tenferro::cpu
