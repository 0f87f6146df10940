#pragma once
// The strided reduction engine shared by the CPU reduction kernel files. Not
// for the op layer (which includes reduce_kernels.hpp only).
//
// A reduction is a layout (kept and reduced axes, sorted by input stride) and
// an operation. When the smallest stride is a reduced one, each output reduces
// its elements with independent vectorisable accumulators (pairwise for long
// runs); otherwise whole input rows are accumulated into a chunk of outputs
// with a unit-stride inner loop. Work splits across the pool only above the
// backend's parallel threshold, and never in a way that changes results.

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "cpu/reduce_kernels.hpp"
#include "tensor/dispatch.hpp"
#include "tensor/small_sort.hpp"
#include "tensor/strided.hpp"

namespace tenferro::cpu::reduce_engine {

using detail::StridedPlan;

// Independent accumulators per run; with 32 GCC also vectorises the selects of max/min.
inline constexpr std::int64_t kLanes = 32;
inline constexpr std::int64_t kPairwiseLeaf = 1024;  // pairwise summation: error grows like log(n)
inline constexpr std::int64_t kRowBlock = 64;        // rows per level of the row accumulation
inline constexpr std::int64_t kMaxChunk = 2048;      // accumulator chunk small enough to stay in L1
inline constexpr std::int64_t kMinChunk = 64;
inline constexpr std::int64_t kMinInnerRun = 8;  // shorter reduced runs go row by row
inline constexpr std::int64_t kFewOutputs = 16;  // below this, split each reduction into parts
inline constexpr std::int64_t kMaxParts = 64;

template <class T>
constexpr bool kInexact = std::is_floating_point_v<T> || detail::is_complex_v<T>;

template <class T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// ---- reduction operations ---------------------------------------------------
// Each: In (element), Acc (accumulator = output element), Shift (a per-output
// value the map may use: the mean for variance, the max for logsumexp),
// identity(), map(x, shift) and an associative, commutative combine(a, b).

template <class Op>
typename Op::Shift shift_at(const typename Op::Shift* shift, std::int64_t i) {
  if constexpr (Op::kShift) {
    return shift[i];
  } else {
    (void)shift;
    (void)i;
    return typename Op::Shift{};
  }
}

// Sum and product (reduce_kernels.cpp, and the fused executor's reductions).
// Integer sums and products wrap instead of overflowing (signed overflow is UB).
template <class T>
T add_values(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <class T>
T mul_values(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

/// The lane fold of pairwise_contiguous below on f64 / f32 values
/// (kLanes <= n <= kPairwiseLeaf), built per instruction set
/// (reduce_kernels.cpp): the same additions in the same order, so the same bits.
double sum_leaf(const double* p, std::int64_t n);
float sum_leaf(const float* p, std::int64_t n);

template <class T>
struct SumOp {
  using In = T;
  using Acc = T;
  using Shift = T;
  static constexpr bool kShift = false;
  static constexpr bool kBlocked = kInexact<T>;
  static Acc identity() { return T(0); }
  static Acc map(T x, T /*shift*/) { return x; }
  static void combine(Acc& a, Acc b) { a = add_values(a, b); }
  /// pairwise_contiguous's lane fold as one call (f64 and f32 only).
  static Acc leaf(const T* p,
                  std::int64_t n) requires(std::is_same_v<T, double> || std::is_same_v<T, float>) {
    return sum_leaf(p, n);
  }
};

template <class T>
struct ProdOp {
  using In = T;
  using Acc = T;
  using Shift = T;
  static constexpr bool kShift = false;
  static constexpr bool kBlocked = false;
  static Acc identity() { return T(1); }
  static Acc map(T x, T /*shift*/) { return x; }
  static void combine(Acc& a, Acc b) { a = mul_values(a, b); }
};

// ---- layout -------------------------------------------------------------------

struct Dim {
  std::int64_t extent, in, out;
};
using Dims = SmallVector<Dim, 8>;

// Kept and reduced axes of extent > 1, each group sorted by input stride so the
// inner loops run along the smallest stride. Output strides are those of the
// compact output; offsets are where element (0, ..., 0) moved after flipping.
struct Layout {
  Dims kept, red;
  std::int64_t in_offset = 0, out_offset = 0;
  std::int64_t num_out = 1, num_red = 1;
};

inline Layout make_layout(const Tensor& x, std::span<const bool> reduced, bool flip_reduced) {
  Layout l;
  std::int64_t out_stride = 1;
  for (std::size_t d = 0; d < reduced.size(); ++d) {
    Dim dim{x.shape()[d], x.strides()[d], 0};
    if (reduced[d]) {
      l.num_red *= dim.extent;
      if (dim.extent == 1) continue;
      // Order is irrelevant to a commutative reduction: walk memory upwards.
      if (flip_reduced && dim.in < 0) {
        l.in_offset += (dim.extent - 1) * dim.in;
        dim.in = -dim.in;
      }
      l.red.push_back(dim);
    } else {
      l.num_out *= dim.extent;
      dim.out = out_stride;
      out_stride *= dim.extent;
      if (dim.extent == 1) continue;
      if (dim.in < 0) {
        l.in_offset += (dim.extent - 1) * dim.in;
        l.out_offset += (dim.extent - 1) * dim.out;
        dim.in = -dim.in;
        dim.out = -dim.out;
      }
      l.kept.push_back(dim);
    }
  }
  auto by_stride = [](const Dim& a, const Dim& b) { return std::abs(a.in) < std::abs(b.in); };
  ::tenferro::detail::small_stable_sort(l.kept.begin(), l.kept.end(), by_stride);
  ::tenferro::detail::small_stable_sort(l.red.begin(), l.red.end(), by_stride);
  return l;
}

// A plan over dims (input strides, and output strides when K == 2).
template <std::size_t K>
StridedPlan<K> plan_of(std::span<const Dim> dims) {
  Shape shape;
  Strides in, out;
  for (const Dim& d : dims) {
    shape.push_back(d.extent);
    in.push_back(d.in);
    out.push_back(d.out);
  }
  if constexpr (K == 1) {
    return StridedPlan<1>(shape, {in.span()});
  } else {
    return StridedPlan<2>(shape, {in.span(), out.span()});
  }
}

// Reductions along the smallest reduced stride (one output at a time), or
// whole rows accumulated into a vector of outputs along the smallest kept stride.
inline bool reduce_inner_first(const Layout& l) {
  if (l.kept.empty()) return true;
  if (l.red.empty()) return false;
  return std::abs(l.red[0].in) < l.kept[0].in && l.red[0].extent >= kMinInnerRun;
}

// Calls body(count, in_offset, in_step, out_offset, out_step) for runs of
// outputs covering every output once, in parallel over outputs when there is
// enough work (`work` input elements per output).
template <class Body>
void for_each_output_run(CpuBackend& cpu, const Layout& l, std::int64_t work, Body&& body) {
  const auto plan = plan_of<2>(l.kept);
  const std::int64_t grain =
      std::max<std::int64_t>(1, cpu.parallel_threshold() / std::max<std::int64_t>(1, work));
  cpu.parallel_for(plan.numel, grain, [&](std::int64_t b, std::int64_t e) {
    plan.run(b, e, [&](std::int64_t n, const auto& off, const auto& inc) {
      body(n, off[0], inc[0], off[1], inc[1]);
    });
  });
}

// Calls body(in_offset, out_offset) for every output, as above.
template <class Body>
void for_each_output(CpuBackend& cpu, const Layout& l, std::int64_t work, Body&& body) {
  for_each_output_run(cpu, l, work,
                      [&](std::int64_t n, std::int64_t in_off, std::int64_t in_inc,
                          std::int64_t out_off, std::int64_t out_inc) {
                        for (std::int64_t i = 0; i < n; ++i)
                          body(in_off + i * in_inc, out_off + i * out_inc);
                      });
}

// Splits the smallest-stride kept dim into chunks and calls
// body(scratch, in_offset, out_offset, len) per (other kept index, chunk), in
// parallel when there is enough work (`rows` input elements per output).
template <class Scratch, class Body>
void for_each_chunk(CpuBackend& cpu, const Layout& l, std::int64_t rows, Body&& body) {
  const Dim d0 = l.kept[0];
  const auto outer = plan_of<2>(std::span<const Dim>(l.kept).subspan(1));
  std::int64_t chunk = std::min(d0.extent, kMaxChunk);
  const std::int64_t threads = cpu.num_threads();
  if (threads > 1 && l.num_out * rows >= cpu.parallel_threshold()) {
    // One chunk per thread at least; longer chunks stream memory better.
    const std::int64_t per_outer = (threads + outer.numel - 1) / outer.numel;
    chunk = std::min(chunk, std::max(kMinChunk, (d0.extent + per_outer - 1) / per_outer));
  }
  const std::int64_t nchunks = (d0.extent + chunk - 1) / chunk;
  const std::int64_t grain =
      std::max<std::int64_t>(1, cpu.parallel_threshold() / std::max<std::int64_t>(1, chunk * rows));
  cpu.parallel_for(outer.numel * nchunks, grain, [&](std::int64_t b, std::int64_t e) {
    Scratch scratch(chunk);
    for (std::int64_t item = b; item < e; ++item) {
      const std::int64_t o = item / nchunks, i0 = item % nchunks * chunk;
      std::int64_t in_off = 0, out_off = 0;
      outer.run(o, o + 1, [&](std::int64_t, const auto& off, const auto&) {
        in_off = off[0];
        out_off = off[1];
      });
      body(scratch, in_off + i0 * d0.in, out_off + i0 * d0.out, std::min(chunk, d0.extent - i0));
    }
  });
}

// ---- the reduction engine -------------------------------------------------------

template <class Op>
typename Op::Acc pairwise_contiguous(const typename Op::In* p, std::int64_t n,
                                     typename Op::Shift s) {
  using Acc = typename Op::Acc;
  if (n > kPairwiseLeaf) {
    const std::int64_t half = (n / 2 + kLanes - 1) / kLanes * kLanes;
    Acc a = pairwise_contiguous<Op>(p, half, s);
    Op::combine(a, pairwise_contiguous<Op>(p + half, n - half, s));
    return a;
  }
  if constexpr (requires { Op::leaf(p, n); }) {
    if (n >= kLanes) return Op::leaf(p, n);
  }
  if (n < kLanes) {
    // One lane only: the others stay at the identity, and combining with the
    // identity once equals the five combines of the lane fold below.
    Acc a = Op::identity();
    for (std::int64_t i = 0; i < n; ++i) Op::combine(a, Op::map(p[i], s));
    Op::combine(a, Op::identity());
    return a;
  }
  Acc lane[kLanes];
  for (auto& v : lane) v = Op::identity();
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (std::int64_t j = 0; j < kLanes; ++j) Op::combine(lane[j], Op::map(p[i + j], s));
  }
  for (; i < n; ++i) Op::combine(lane[0], Op::map(p[i], s));
  for (std::int64_t w = kLanes / 2; w > 0; w /= 2) {
    for (std::int64_t j = 0; j < w; ++j) Op::combine(lane[j], lane[j + w]);
  }
  return lane[0];
}

// pairwise_contiguous over n values [begin, begin + n) made on demand:
// leaf(b, len) returns the len values from b (len <= kPairwiseLeaf), which
// pairwise_contiguous then reduces as a leaf. Same splits and order as
// pairwise_contiguous over the materialised values, so the same result.
template <class Op, class Leaf>
typename Op::Acc pairwise_by_leaves(std::int64_t begin, std::int64_t n, Leaf& leaf) {
  if (n > kPairwiseLeaf) {
    const std::int64_t half = (n / 2 + kLanes - 1) / kLanes * kLanes;
    typename Op::Acc a = pairwise_by_leaves<Op>(begin, half, leaf);
    Op::combine(a, pairwise_by_leaves<Op>(begin + half, n - half, leaf));
    return a;
  }
  return pairwise_contiguous<Op>(leaf(begin, n), n, typename Op::Shift{});
}

// One contiguous run: the op's own single-pass kernel where it has one
// (Op::contiguous, e.g. max/min of floats), else the pairwise lanes above.
template <class Op>
typename Op::Acc reduce_contiguous(const typename Op::In* p, std::int64_t n, typename Op::Shift s) {
  if constexpr (requires { Op::contiguous(p, n); }) {
    (void)s;
    return Op::contiguous(p, n);
  } else {
    return pairwise_contiguous<Op>(p, n, s);
  }
}

template <class Op>
typename Op::Acc reduce_run(const typename Op::In* p, std::int64_t n, std::int64_t stride,
                            typename Op::Shift s) {
  if (stride == 1) return reduce_contiguous<Op>(p, n, s);
  using Acc = typename Op::Acc;
  Acc lane[4] = {Op::identity(), Op::identity(), Op::identity(), Op::identity()};
  std::int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (std::int64_t j = 0; j < 4; ++j) Op::combine(lane[j], Op::map(p[(i + j) * stride], s));
  }
  for (; i < n; ++i) Op::combine(lane[0], Op::map(p[i * stride], s));
  Op::combine(lane[0], lane[1]);
  Op::combine(lane[2], lane[3]);
  Op::combine(lane[0], lane[2]);
  return lane[0];
}

// One output at a time; few large reductions split into a fixed number of parts
// (independent of the thread count, so results do not depend on it).
template <class Op>
void reduce_outputs(CpuBackend& cpu, const Layout& l, const typename Op::In* x,
                    typename Op::Acc* out, const typename Op::Shift* shift) {
  using Acc = typename Op::Acc;
  const auto red = plan_of<1>(l.red);
  auto reduce_range = [&](std::int64_t in_off, std::int64_t out_off, std::int64_t b,
                          std::int64_t e) {
    const auto s = shift_at<Op>(shift, out_off);
    Acc acc = Op::identity();
    red.run(b, e, [&](std::int64_t n, const auto& off, const auto& inc) {
      Op::combine(acc, reduce_run<Op>(x + in_off + off[0], n, inc[0], s));
    });
    return acc;
  };
  const std::int64_t threshold = cpu.parallel_threshold();
  if (l.num_out >= kFewOutputs || l.num_red < 2 * threshold) {
    if (l.red.size() == 1) {
      // One reduced axis (a matrix over axis 0, say): each output is one run,
      // reduced as reduce_range below does it (the same operations in the
      // same order, so the same bits) without walking a plan per output,
      // which cost about 20 ns an output (f64 sums of 2048 columns of 2048,
      // in-process medians: 619-671 -> 587-605 us at 1T, level with the sum
      // of all of them, 582-609 us; at 2T 238-347 -> 224-225 us).
      const Dim r = l.red[0];
      for_each_output_run(cpu, l, r.extent,
                          [&](std::int64_t count, std::int64_t in_off, std::int64_t in_inc,
                              std::int64_t out_off, std::int64_t out_inc) {
                            for (std::int64_t i = 0; i < count; ++i) {
                              const std::int64_t o = out_off + i * out_inc;
                              Acc acc = Op::identity();
                              Op::combine(acc, reduce_run<Op>(x + in_off + i * in_inc, r.extent,
                                                              r.in, shift_at<Op>(shift, o)));
                              out[o] = acc;
                            }
                          });
      return;
    }
    for_each_output(cpu, l, l.num_red, [&](std::int64_t in_off, std::int64_t out_off) {
      out[out_off] = reduce_range(in_off, out_off, 0, l.num_red);
    });
    return;
  }
  const std::int64_t parts = std::clamp<std::int64_t>(l.num_red / threshold, 1, kMaxParts);
  auto partial = std::make_unique<Acc[]>(static_cast<std::size_t>(parts));
  const auto kept = plan_of<2>(l.kept);
  kept.run([&](std::int64_t n, const auto& off, const auto& inc) {
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t in_off = off[0] + i * inc[0], out_off = off[1] + i * inc[1];
      cpu.parallel_for(parts, 1, [&](std::int64_t pb, std::int64_t pe) {
        for (std::int64_t p = pb; p < pe; ++p) {
          partial[p] =
              reduce_range(in_off, out_off, l.num_red * p / parts, l.num_red * (p + 1) / parts);
        }
      });
      Acc acc = partial[0];
      for (std::int64_t p = 1; p < parts; ++p) Op::combine(acc, partial[p]);
      out[out_off] = acc;
    }
  });
}

// What reduce_outputs computes for a single output over n contiguous values
// (n > 0), with the values made on demand: make_leaf() gives each task its
// own leaf function (see pairwise_by_leaves). Ops without their own
// contiguous kernel (Sum, Prod), so every run is reduced pairwise.
template <class Op, class MakeLeaf>
typename Op::Acc reduce_single_by_leaves(CpuBackend& cpu, std::int64_t n, MakeLeaf&& make_leaf) {
  using Acc = typename Op::Acc;
  static_assert(!requires(const typename Op::In* p) { Op::contiguous(p, n); });
  const std::int64_t threshold = cpu.parallel_threshold();
  if (n < 2 * threshold) {
    auto leaf = make_leaf();
    Acc acc = Op::identity();
    Op::combine(acc, pairwise_by_leaves<Op>(0, n, leaf));
    return acc;
  }
  const std::int64_t parts = std::clamp<std::int64_t>(n / threshold, 1, kMaxParts);
  auto partial = std::make_unique<Acc[]>(static_cast<std::size_t>(parts));
  cpu.parallel_for(parts, 1, [&](std::int64_t pb, std::int64_t pe) {
    auto leaf = make_leaf();
    for (std::int64_t p = pb; p < pe; ++p) {
      const std::int64_t b = n * p / parts, e = n * (p + 1) / parts;
      Acc acc = Op::identity();
      Op::combine(acc, pairwise_by_leaves<Op>(b, e - b, leaf));
      partial[p] = acc;
    }
  });
  Acc acc = partial[0];
  for (std::int64_t p = 1; p < parts; ++p) Op::combine(acc, partial[p]);
  return acc;
}

template <class Op>
void accumulate_row(typename Op::Acc* __restrict acc, const typename Op::In* __restrict row,
                    std::int64_t len, std::int64_t stride,
                    const typename Op::Shift* __restrict shift) {
  if (stride == 1) {
    for (std::int64_t i = 0; i < len; ++i)
      Op::combine(acc[i], Op::map(row[i], shift_at<Op>(shift, i)));
  } else {
    for (std::int64_t i = 0; i < len; ++i)
      Op::combine(acc[i], Op::map(row[i * stride], shift_at<Op>(shift, i)));
  }
}

// Four unit-stride rows (row, row + row_stride, ...) accumulated in one pass:
// each output element takes them in the same order as four accumulate_row
// calls would (same results), with a quarter of the accumulator traffic and
// four input streams for the prefetcher.
template <class Op>
void accumulate_4rows(typename Op::Acc* __restrict acc, const typename Op::In* __restrict row,
                      std::int64_t row_stride, std::int64_t len,
                      const typename Op::Shift* __restrict shift) {
  const typename Op::In* __restrict r1 = row + row_stride;
  const typename Op::In* __restrict r2 = r1 + row_stride;
  const typename Op::In* __restrict r3 = r2 + row_stride;
  for (std::int64_t i = 0; i < len; ++i) {
    const auto s = shift_at<Op>(shift, i);
    typename Op::Acc a = acc[i];
    Op::combine(a, Op::map(row[i], s));
    Op::combine(a, Op::map(r1[i], s));
    Op::combine(a, Op::map(r2[i], s));
    Op::combine(a, Op::map(r3[i], s));
    acc[i] = a;
  }
}

// Per-task buffers of reduce_rows. Rows accumulate into level 0; a full level
// (kRowBlock additions) is folded into the next one, like a base-64 counter, so
// floating sums err like log(rows) instead of rows.
template <class Op>
struct RowScratch {
  using Acc = typename Op::Acc;
  using Shift = typename Op::Shift;
  explicit RowScratch(std::int64_t n)
      : chunk(n), shift(Op::kShift ? std::make_unique<Shift[]>(n) : nullptr) {
    levels.push_back(std::make_unique<Acc[]>(n));
    counts.push_back(0);
  }

  void start(std::int64_t len) {
    std::fill_n(levels[0].get(), len, Op::identity());
    std::fill(counts.begin(), counts.end(), 0);
  }
  // Rows level 0 takes before it is folded into level 1.
  std::int64_t room() const { return kRowBlock - counts[0]; }
  // Called after `rows` (at most room()) rows were added to level 0.
  void carry(std::int64_t len, std::int64_t rows) {
    counts[0] += rows;
    if (counts[0] < kRowBlock) return;
    for (std::size_t k = 0; counts[k] == kRowBlock; ++k) {
      if (k + 1 == levels.size()) {
        levels.push_back(std::make_unique<Acc[]>(chunk));
        counts.push_back(0);
      }
      Acc* lo = levels[k].get();
      Acc* up = levels[k + 1].get();
      if (counts[k + 1] == 0) {
        std::copy_n(lo, len, up);
      } else {
        for (std::int64_t i = 0; i < len; ++i) Op::combine(up[i], lo[i]);
      }
      ++counts[k + 1];
      counts[k] = 0;
    }
    std::fill_n(levels[0].get(), len, Op::identity());
  }
  // Level 0 with every non-empty level folded in.
  const Acc* finish(std::int64_t len) {
    Acc* total = levels[0].get();
    for (std::size_t k = 1; k < levels.size(); ++k) {
      if (counts[k] == 0) continue;
      for (std::int64_t i = 0; i < len; ++i) Op::combine(total[i], levels[k][i]);
    }
    return total;
  }

  std::int64_t chunk;
  std::vector<std::unique_ptr<Acc[]>> levels;
  std::vector<std::int64_t> counts;
  std::unique_ptr<Shift[]> shift;
};

// Whole input rows accumulated into a chunk of outputs (unit stride inner loop).
template <class Op>
void reduce_rows(CpuBackend& cpu, const Layout& l, const typename Op::In* x, typename Op::Acc* out,
                 const typename Op::Shift* shift) {
  using Acc = typename Op::Acc;
  const auto red = plan_of<1>(l.red);
  const Dim d0 = l.kept[0];
  for_each_chunk<RowScratch<Op>>(
      cpu, l, l.num_red,
      [&](RowScratch<Op>& s, std::int64_t in_off, std::int64_t out_off, std::int64_t len) {
        if constexpr (Op::kShift) {
          for (std::int64_t i = 0; i < len; ++i) s.shift[i] = shift[out_off + i * d0.out];
        }
        s.start(len);
        Acc* acc = s.levels[0].get();
        red.run([&](std::int64_t n, const auto& off, const auto& inc) {
          for (std::int64_t j = 0; j < n;) {
            const auto* row = x + in_off + off[0] + j * inc[0];
            std::int64_t rows = 1;
            if (d0.in == 1 && n - j >= 4 && (!Op::kBlocked || s.room() >= 4)) {
              rows = 4;
              accumulate_4rows<Op>(acc, row, inc[0], len, s.shift.get());
            } else {
              accumulate_row<Op>(acc, row, len, d0.in, s.shift.get());
            }
            j += rows;
            if constexpr (Op::kBlocked) s.carry(len, rows);
          }
        });
        const Acc* total = s.finish(len);
        for (std::int64_t i = 0; i < len; ++i) out[out_off + i * d0.out] = total[i];
      });
}

/// Reduces x into `out` (compact, the layout's output order) with Op.
template <class Op>
void run_reduction(CpuBackend& cpu, const Tensor& x, std::span<const bool> reduced,
                   typename Op::Acc* out, const typename Op::Shift* shift = nullptr) {
  const Layout l = make_layout(x, reduced, true);
  if (l.num_out == 0) return;
  if (l.num_red == 0) {
    std::fill_n(out, l.num_out, Op::identity());
    return;
  }
  const auto* in = static_cast<const typename Op::In*>(x.raw_data()) + l.in_offset;
  if (shift != nullptr) shift += l.out_offset;
  if (reduce_inner_first(l)) {
    reduce_outputs<Op>(cpu, l, in, out + l.out_offset, shift);
  } else {
    reduce_rows<Op>(cpu, l, in, out + l.out_offset, shift);
  }
}

// Applies f(value, index) to n compact elements in place.
template <class T, class F>
void update_each(CpuBackend& cpu, T* p, std::int64_t n, F f) {
  cpu.parallel_for(n, cpu.parallel_threshold(), [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) p[i] = f(p[i], i);
  });
}

inline std::int64_t reduced_count(const Tensor& x, std::span<const bool> reduced) {
  std::int64_t n = 1;
  for (std::size_t d = 0; d < reduced.size(); ++d)
    if (reduced[d]) n *= x.shape()[d];
  return n;
}

[[noreturn]] inline void no_kernel(const char* what, DType t) {
  fail(ErrorKind::Internal, what, "no CPU kernel for dtype ", name(t),
       "; the op layer should have converted or rejected it");
}

/// Max, min, all and any (reduce_order_kernels.cpp); reduce_axes forwards to it.
void reduce_ordered_axes(CpuBackend& cpu, ReduceOp kind, const Tensor& x,
                         std::span<const bool> reduced, const Tensor& out);

}  // namespace tenferro::cpu::reduce_engine
