// Sums, products, mean, variance and logsumexp on the CPU.
#include "cpu/reduce_kernels.hpp"

#include "cpu/reduce_engine.hpp"
#include "cpu/target_clones.hpp"

namespace tenferro::cpu {

namespace reduce_engine {
namespace {
template <class T>
[[gnu::always_inline]] inline T sum_leaf_lanes(const T* p, std::int64_t n) {
  T lane[kLanes] = {};
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (std::int64_t j = 0; j < kLanes; ++j) lane[j] += p[i + j];
  }
  for (; i < n; ++i) lane[0] += p[i];
  for (std::int64_t w = kLanes / 2; w > 0; w /= 2) {
    for (std::int64_t j = 0; j < w; ++j) lane[j] += lane[j + w];
  }
  return lane[0];
}
}  // namespace

TENFERRO_TARGET_CLONES double sum_leaf(const double* p, std::int64_t n) {
  return sum_leaf_lanes(p, n);
}
TENFERRO_TARGET_CLONES float sum_leaf(const float* p, std::int64_t n) {
  return sum_leaf_lanes(p, n);
}
}  // namespace reduce_engine

namespace {

using namespace reduce_engine;

template <class T>
struct SquaredDeviationOp {
  using In = T;
  using Acc = detail::real_of_t<T>;
  using Shift = T;
  static constexpr bool kShift = true;
  static constexpr bool kBlocked = true;
  static Acc identity() { return Acc(0); }
  static Acc map(T x, T mean) {
    const T d = x - mean;
    if constexpr (detail::is_complex_v<T>) {
      return d.real() * d.real() + d.imag() * d.imag();
    } else {
      return d * d;
    }
  }
  static void combine(Acc& a, Acc b) { a += b; }
};

template <class T>
struct ExpShiftedOp {
  using In = T;
  using Acc = T;
  using Shift = T;
  static constexpr bool kShift = true;
  static constexpr bool kBlocked = true;
  static Acc identity() { return T(0); }
  static Acc map(T x, T max) { return std::exp(x - max); }
  static void combine(Acc& a, Acc b) { a += b; }
};

template <class T>
constexpr bool kSummable = !std::is_same_v<T, bool> && !std::is_same_v<T, std::int32_t>;

}  // namespace

void reduce_axes(CpuBackend& cpu, ReduceOp kind, const Tensor& x, std::span<const bool> reduced,
                 const Tensor& out) {
  if (kind != ReduceOp::Sum && kind != ReduceOp::Prod) {
    reduce_ordered_axes(cpu, kind, x, reduced, out);
    return;
  }
  detail::dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kSummable<T>) {
      T* o = static_cast<T*>(out.raw_data());
      if (kind == ReduceOp::Sum) {
        run_reduction<SumOp<T>>(cpu, x, reduced, o);
      } else {
        run_reduction<ProdOp<T>>(cpu, x, reduced, o);
      }
    } else {
      no_kernel("reduce", x.dtype());
    }
  });
}

void mean_axes(CpuBackend& cpu, const Tensor& x, std::span<const bool> reduced, const Tensor& out) {
  detail::dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kInexact<T>) {
      using R = detail::real_of_t<T>;
      T* o = static_cast<T*>(out.raw_data());
      run_reduction<SumOp<T>>(cpu, x, reduced, o);
      const R count = static_cast<R>(reduced_count(x, reduced));
      update_each(cpu, o, out.numel(), [count](T v, std::int64_t) { return v / count; });
    } else {
      no_kernel("mean", x.dtype());
    }
  });
}

void var_axes(CpuBackend& cpu, const Tensor& x, std::span<const bool> reduced, const Tensor& out,
              double correction, bool take_sqrt) {
  detail::dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kInexact<T>) {
      using R = detail::real_of_t<T>;
      const Tensor mean = cpu.empty({out.numel()}, x.dtype());
      mean_axes(cpu, x, reduced, mean);
      R* o = static_cast<R*>(out.raw_data());
      run_reduction<SquaredDeviationOp<T>>(cpu, x, reduced, o, mean.data<T>());
      const double n = static_cast<double>(reduced_count(x, reduced));
      const R divisor = static_cast<R>(std::max(n - correction, 0.0));
      update_each(cpu, o, out.numel(), [divisor, take_sqrt](R v, std::int64_t) {
        const R var = v / divisor;
        return take_sqrt ? std::sqrt(var) : var;
      });
    } else {
      no_kernel("var", x.dtype());
    }
  });
}

void logsumexp_axes(CpuBackend& cpu, const Tensor& x, std::span<const bool> reduced,
                    const Tensor& out) {
  detail::dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      const Tensor max = cpu.empty({out.numel()}, x.dtype());
      reduce_ordered_axes(cpu, ReduceOp::Max, x, reduced, max);
      const T* m = max.data<T>();
      T* o = static_cast<T*>(out.raw_data());
      run_reduction<ExpShiftedOp<T>>(cpu, x, reduced, o, m);
      // An infinite or NaN max is the answer (all -inf, some +inf, or NaN present).
      update_each(cpu, o, out.numel(), [m](T sum, std::int64_t i) {
        return std::isfinite(m[i]) ? m[i] + std::log(sum) : m[i];
      });
    } else {
      no_kernel("logsumexp", x.dtype());
    }
  });
}

}  // namespace tenferro::cpu
