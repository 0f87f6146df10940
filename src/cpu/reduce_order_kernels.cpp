// Max, min, all, any, argmax and argmin on the CPU.
#include <cstring>

#include "cpu/reduce_engine.hpp"
#include "cpu/target_clones.hpp"

namespace tenferro::cpu {
namespace {

using namespace reduce_engine;

// ---- max / min of a contiguous float run --------------------------------------------

// Four 32-byte vectors of running extremes (a compare and a select each: one
// vmaxpd/vminpd) and four of NaN masks, so the loop streams at memory speed;
// a NaN anywhere makes the result the first NaN in memory order. Ties between
// +0 and -0 may resolve to either.
template <class T, bool kMax>
[[gnu::always_inline]] inline T extremum_run(const T* p, std::int64_t n) {
  using I = std::conditional_t<sizeof(T) == 8, std::int64_t, std::int32_t>;
  using V [[gnu::vector_size(32)]] = T;
  using M [[gnu::vector_size(32)]] = I;
  constexpr std::int64_t kW = 32 / sizeof(T);
  const T id = kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  V acc[4];
  M nan[4] = {};
  for (auto& a : acc)
    for (std::int64_t j = 0; j < kW; ++j) a[j] = id;
  std::int64_t i = 0;
  for (; i + 4 * kW <= n; i += 4 * kW) {
    for (int k = 0; k < 4; ++k) {
      V x;
      std::memcpy(&x, p + i + k * kW, sizeof x);
      if constexpr (kMax) {
        acc[k] = x > acc[k] ? x : acc[k];
      } else {
        acc[k] = x < acc[k] ? x : acc[k];
      }
      nan[k] |= x != x;
    }
  }
  T best = id;
  I any = 0;
  for (int k = 0; k < 4; ++k) {
    for (std::int64_t j = 0; j < kW; ++j) {
      best = (kMax ? acc[k][j] > best : acc[k][j] < best) ? acc[k][j] : best;
      any |= nan[k][j];
    }
  }
  for (; i < n; ++i) {
    best = (kMax ? p[i] > best : p[i] < best) ? p[i] : best;
    any |= p[i] != p[i] ? I{1} : I{0};
  }
  if (any != 0) {
    for (std::int64_t k = 0;; ++k)
      if (p[k] != p[k]) return p[k];
  }
  return best;
}

TENFERRO_TARGET_CLONES double max_run(const double* p, std::int64_t n) {
  return extremum_run<double, true>(p, n);
}
TENFERRO_TARGET_CLONES double min_run(const double* p, std::int64_t n) {
  return extremum_run<double, false>(p, n);
}
TENFERRO_TARGET_CLONES float max_run(const float* p, std::int64_t n) {
  return extremum_run<float, true>(p, n);
}
TENFERRO_TARGET_CLONES float min_run(const float* p, std::int64_t n) {
  return extremum_run<float, false>(p, n);
}

template <class T, bool kMax>
struct ExtremumOp {
  using In = T;
  using Acc = T;
  using Shift = T;
  static constexpr bool kShift = false;
  static constexpr bool kBlocked = false;
  static Acc identity() {
    using L = std::numeric_limits<T>;
    if constexpr (L::has_infinity) {
      return kMax ? -L::infinity() : L::infinity();
    } else {
      return kMax ? L::lowest() : L::max();
    }
  }
  static Acc map(T x, T /*shift*/) { return x; }
  // A NaN operand wins and then stays (nothing compares greater than NaN).
  // Two selects rather than one with ||: GCC vectorises these to max + blend.
  static void combine(Acc& a, Acc b) {
    a = (kMax ? b > a : b < a) ? b : a;
    a = is_nan(b) ? b : a;
  }
  // Contiguous float runs (reduce_contiguous) in one vectorised pass.
  static Acc contiguous(const T* p, std::int64_t n) requires std::is_floating_point_v<T> {
    return kMax ? max_run(p, n) : min_run(p, n);
  }
};

template <bool kAll>
struct LogicalOp {
  using In = bool;
  using Acc = bool;
  using Shift = bool;
  static constexpr bool kShift = false;
  static constexpr bool kBlocked = false;
  static Acc identity() { return kAll; }
  static Acc map(bool x, bool /*shift*/) { return x; }
  static void combine(Acc& a, Acc b) { a = kAll ? (a & b) : (a | b); }
};

// ---- argmax / argmin --------------------------------------------------------------

template <class T, bool kMax>
bool arg_better(T v, T best) {
  return (kMax ? v > best : v < best) || (is_nan(v) && !is_nan(best));
}

template <class T>
struct ArgScratch {
  explicit ArgScratch(std::int64_t n)
      : value(std::make_unique<T[]>(n)), index(std::make_unique<std::int64_t[]>(n)) {}
  std::unique_ptr<T[]> value;
  std::unique_ptr<std::int64_t[]> index;
};

template <class T, bool kMax>
void arg_reduce_typed(CpuBackend& cpu, const Tensor& x, std::int64_t axis, const Tensor& out) {
  SmallVector<bool, 8> reduced(static_cast<std::size_t>(x.rank()), false);
  reduced[static_cast<std::size_t>(axis)] = true;
  // The reduced axis keeps its direction: "first" means lowest logical index.
  const Layout l = make_layout(x, reduced, false);
  if (l.num_out == 0) return;
  const T* in = static_cast<const T*>(x.raw_data()) + l.in_offset;
  std::int64_t* o = static_cast<std::int64_t*>(out.raw_data()) + l.out_offset;
  const std::int64_t n = l.red.empty() ? 1 : l.red[0].extent;
  const std::int64_t s = l.red.empty() ? 0 : l.red[0].in;
  if (reduce_inner_first(l)) {
    // The (vectorised) extreme first, then a scan for its first occurrence.
    for_each_output(cpu, l, n, [&](std::int64_t in_off, std::int64_t out_off) {
      const T* p = in + in_off;
      const T m = reduce_run<ExtremumOp<T, kMax>>(p, n, s, T{});
      std::int64_t at = 0;
      if (is_nan(m)) {
        while (!is_nan(p[at * s])) ++at;
      } else {
        while (p[at * s] != m) ++at;
      }
      o[out_off] = at;
    });
    return;
  }
  const Dim d0 = l.kept[0];
  for_each_chunk<ArgScratch<T>>(
      cpu, l, n,
      [&](ArgScratch<T>& sc, std::int64_t in_off, std::int64_t out_off, std::int64_t len) {
        T* __restrict best = sc.value.get();
        std::int64_t* __restrict at = sc.index.get();
        const T* base = in + in_off;
        for (std::int64_t i = 0; i < len; ++i) {
          best[i] = base[i * d0.in];
          at[i] = 0;
        }
        for (std::int64_t j = 1; j < n; ++j) {
          const T* row = base + j * s;
          for (std::int64_t i = 0; i < len; ++i) {
            const T v = row[i * d0.in];
            const bool take = arg_better<T, kMax>(v, best[i]);
            best[i] = take ? v : best[i];
            at[i] = take ? j : at[i];
          }
        }
        for (std::int64_t i = 0; i < len; ++i) o[out_off + i * d0.out] = at[i];
      });
}

template <class T>
constexpr bool kOrdered = !detail::is_complex_v<T>;

}  // namespace

void reduce_engine::reduce_ordered_axes(CpuBackend& cpu, ReduceOp kind, const Tensor& x,
                                        std::span<const bool> reduced, const Tensor& out) {
  detail::dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = static_cast<T*>(out.raw_data());
    switch (kind) {
      case ReduceOp::Max:
        if constexpr (kOrdered<T>) return run_reduction<ExtremumOp<T, true>>(cpu, x, reduced, o);
        break;
      case ReduceOp::Min:
        if constexpr (kOrdered<T>) return run_reduction<ExtremumOp<T, false>>(cpu, x, reduced, o);
        break;
      case ReduceOp::All:
        if constexpr (std::is_same_v<T, bool>)
          return run_reduction<LogicalOp<true>>(cpu, x, reduced, o);
        break;
      case ReduceOp::Any:
        if constexpr (std::is_same_v<T, bool>)
          return run_reduction<LogicalOp<false>>(cpu, x, reduced, o);
        break;
      default:
        break;
    }
    no_kernel("reduce", x.dtype());
  });
}

void arg_reduce(CpuBackend& cpu, bool is_max, const Tensor& x, std::int64_t axis,
                const Tensor& out) {
  detail::dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kOrdered<T>) {
      if (is_max) {
        arg_reduce_typed<T, true>(cpu, x, axis, out);
      } else {
        arg_reduce_typed<T, false>(cpu, x, axis, out);
      }
    } else {
      no_kernel(is_max ? "argmax" : "argmin", x.dtype());
    }
  });
}

}  // namespace tenferro::cpu
