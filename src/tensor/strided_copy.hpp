#pragma once
// The strided copy shared by Tensor::copy_into (the tensor layer, serial) and
// cpu::copy (the backend, on its pool): one kernel for both. Same-dtype
// copies take a memcpy (both compact), a plain strided loop (both fastest
// along one axis), or a cache-blocked kernel for permuted layouts (fastest
// axes differ); dtype conversions take the strided loop. Not installed.
//
// `parallel_for(count, grain, body)` runs body(begin, end) over [0, count),
// serially or split across threads; `threshold` is the element count worth a
// split (the backend's parallel threshold).

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include "tenferro/tensor/tensor.hpp"
#include "tensor/dispatch.hpp"
#include "tensor/small_sort.hpp"
#include "tensor/strided.hpp"
#include "tensor/transpose_tile.hpp"

namespace tenferro::detail {

namespace copy_kernel {

using Plan = StridedPlan<2>;  // operand 0: source, operand 1: destination

// Elements of a block along the source's memory (see blocked_copy).
constexpr std::int64_t kTile = 64;
// Elements of T in a 64-byte cache line (at least 1).
template <class T>
constexpr std::int64_t kLineOf = std::max<std::int64_t>(1,
                                                        64 / static_cast<std::int64_t>(sizeof(T)));

// The coalesced axes ordered by destination stride, so iteration (and the
// innermost run) follows destination memory.
inline Plan sorted_plan(const Tensor& src, const Tensor& dst) {
  const Plan raw(src.shape(), {src.strides().span(), dst.strides().span()});
  SmallVector<std::size_t, 8> order(raw.shape.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  detail::small_stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::llabs(raw.strides[1][a]) < std::llabs(raw.strides[1][b]);
  });
  Shape shape;
  Strides ss, ds;
  for (const std::size_t d : order) {
    shape.push_back(raw.shape[d]);
    ss.push_back(raw.strides[0][d]);
    ds.push_back(raw.strides[1][d]);
  }
  return Plan(shape, {ss.span(), ds.span()});
}

// Plain strided loop with conversion; the runs follow plan axis 0.
template <class S, class D, class ParallelFor>
void strided_copy(const ParallelFor& parallel_for, std::int64_t threshold, const Plan& plan,
                  const S* s, D* d) {
  parallel_for(plan.numel, threshold, [&](std::int64_t b, std::int64_t e) {
    plan.run(b, e, [&](std::int64_t n, const auto& off, const auto& inc) {
      const S* sp = s + off[0];
      D* dp = d + off[1];
      if (inc[0] == 1 && inc[1] == 1) {
        for (std::int64_t i = 0; i < n; ++i) dp[i] = convert_value<D>(sp[i]);
      } else {
        for (std::int64_t i = 0; i < n; ++i) {
          dp[i * inc[1]] = convert_value<D>(sp[i * inc[0]]);
        }
      }
    });
  });
}

// A block of the blocked kernel: plan axes, fastest first; every axis is
// iterated in full except the last, which is cut into tiles of `tile`.
struct Block {
  SmallVector<std::size_t, 8> axes;
  std::int64_t tile = 1;
  std::int64_t tiles = 1;
};

// The fastest axes under `key` strides, skipping `taken`, until the block
// holds about kTile elements (small extents are grouped, large ones tiled).
inline Block make_block(const Plan& plan, const Strides& key, const SmallVector<bool, 8>& taken,
                        std::int64_t target) {
  SmallVector<std::size_t, 8> order;
  for (std::size_t d = 0; d < plan.shape.size(); ++d)
    if (!taken[d]) order.push_back(d);
  detail::small_stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::llabs(key[a]) < std::llabs(key[b]);
  });
  Block block;
  std::int64_t prod = 1;
  for (const std::size_t ax : order) {
    const std::int64_t e = plan.shape[ax];
    block.axes.push_back(ax);
    if (prod * e <= target) {
      prod *= e;
      block.tile = e;
      block.tiles = 1;
      if (prod == target) break;
      continue;
    }
    block.tile = std::max<std::int64_t>(1, target / prod);
    block.tiles = (e + block.tile - 1) / block.tile;
    break;
  }
  return block;
}

// Source and destination offsets of the elements of tile `t` of a block, in
// column-major order over its axes; returns their number (at most kTile).
inline std::int64_t block_offsets(const Plan& plan, const Block& block, std::int64_t t,
                                  std::int64_t* so, std::int64_t* dof) {
  so[0] = 0;
  dof[0] = 0;
  std::int64_t n = 1;
  for (std::size_t q = 0; q < block.axes.size(); ++q) {
    const std::size_t ax = block.axes[q];
    std::int64_t lo = 0, hi = plan.shape[ax];
    if (q + 1 == block.axes.size()) {
      lo = t * block.tile;
      hi = std::min(hi, lo + block.tile);
    }
    const std::int64_t ss = plan.strides[0][ax], ds = plan.strides[1][ax];
    // Expand in place from the top so entries [0, n) are read before written.
    for (std::int64_t i = hi - lo - 1; i >= 0; --i) {
      for (std::int64_t j = n - 1; j >= 0; --j) {
        so[i * n + j] = so[j] + (lo + i) * ss;
        dof[i * n + j] = dof[j] + (lo + i) * ds;
      }
    }
    n *= hi - lo;
  }
  return n;
}

// The axes a kernel iterates outside its tiles (those not `taken`), and the
// source and destination offsets of one index over them.
struct OuterAxes {
  SmallVector<std::size_t, 8> axes;
  std::int64_t count = 1;

  OuterAxes(const Plan& plan, const SmallVector<bool, 8>& taken) {
    for (std::size_t ax = 0; ax < plan.shape.size(); ++ax) {
      if (!taken[ax]) {
        axes.push_back(ax);
        count *= plan.shape[ax];
      }
    }
  }
  // Adds the offsets of outer index t (column-major over `axes`) to so and dof.
  void add_offsets(const Plan& plan, std::int64_t t, std::int64_t& so, std::int64_t& dof) const {
    for (const std::size_t ax : axes) {
      const std::int64_t i = t % plan.shape[ax];
      t /= plan.shape[ax];
      so += i * plan.strides[0][ax];
      dof += i * plan.strides[1][ax];
    }
  }
};

// Cache-blocked copy for layouts whose fastest source and destination axes
// differ: block A runs along destination memory (inner loop), block B along
// source memory, so each tile reads and writes whole cache lines.
template <class T, class ParallelFor>
void blocked_copy(const ParallelFor& parallel_for, std::int64_t threshold, const Plan& plan,
                  const T* s, T* d) {
  constexpr std::int64_t kLine = kLineOf<T>;
  const std::size_t rank = plan.shape.size();
  std::size_t src_fast = 0;
  for (std::size_t ax = 1; ax < rank; ++ax) {
    if (std::llabs(plan.strides[0][ax]) < std::llabs(plan.strides[0][src_fast])) src_fast = ax;
  }
  SmallVector<bool, 8> taken(rank, false);
  taken[src_fast] = true;  // reserved for block B
  // Block A (the inner loop: unit-stride stores, strided loads) spans one
  // destination cache line. Its loads come from A's elements, which are
  // often a power-of-2 stride apart and then share one L1 set: with 64 of
  // them (the former 64 x 64 tiles) every load missed L1 (8 ways); with one
  // line's worth they stay within the ways, while block B still walks 64
  // elements along the source's memory.
  const Block a = make_block(plan, plan.strides[1], taken, kLine);
  taken[src_fast] = false;
  for (const std::size_t ax : a.axes) taken[ax] = true;
  const Block b = make_block(plan, plan.strides[0], taken, kTile);
  for (const std::size_t ax : b.axes) taken[ax] = true;
  const OuterAxes outer(plan, taken);
  const std::int64_t tasks = a.tiles * b.tiles * outer.count;
  const std::int64_t grain = std::max<std::int64_t>(1, threshold / (kLine * kTile));
  const bool a_single = a.axes.size() == 1;
  const std::int64_t a_ss = plan.strides[0][a.axes[0]], a_ds = plan.strides[1][a.axes[0]];
  parallel_for(tasks, grain, [&](std::int64_t lo, std::int64_t hi) {
    std::int64_t as[kTile], ad[kTile], bs[kTile], bd[kTile];
    for (std::int64_t task = lo; task < hi; ++task) {
      std::int64_t t = task;
      const std::int64_t ta = t % a.tiles;
      t /= a.tiles;
      const std::int64_t tb = t % b.tiles;
      t /= b.tiles;
      std::int64_t so = 0, dof = 0;
      outer.add_offsets(plan, t, so, dof);
      const std::int64_t na = block_offsets(plan, a, ta, as, ad);
      const std::int64_t nb = block_offsets(plan, b, tb, bs, bd);
      for (std::int64_t j = 0; j < nb; ++j) {
        const T* sp = s + so + bs[j];
        T* dp = d + dof + bd[j];
        if (a_single) {
          // One axis: plain strided run (unit-stride stores in the usual case).
          sp += as[0];
          dp += ad[0];
          if (a_ds == 1) {
            for (std::int64_t i = 0; i < na; ++i) dp[i] = sp[i * a_ss];
          } else {
            for (std::int64_t i = 0; i < na; ++i) dp[i * a_ds] = sp[i * a_ss];
          }
        } else {
          for (std::int64_t i = 0; i < na; ++i) dp[ad[i]] = sp[as[i]];
        }
      }
    }
  });
}

// The permuted copy whose destination-fastest axis (plan axis 0) and
// source-fastest axis both have unit stride and at least 8 elements: tiles
// of transpose_tile over those two axes, every other axis outer. Returns
// false (nothing copied) for other layouts.
template <class ParallelFor>
bool tiled_transpose(const ParallelFor& parallel_for, std::int64_t threshold, const Plan& plan,
                     const void* s, void* d, std::size_t item) {
  const std::size_t rank = plan.shape.size();
  std::size_t q = 0;  // the source's fastest axis
  for (std::size_t ax = 1; ax < rank; ++ax) {
    if (std::llabs(plan.strides[0][ax]) < std::llabs(plan.strides[0][q])) q = ax;
  }
  if (q == 0 || plan.strides[1][0] != 1 || plan.strides[0][q] != 1 || plan.shape[0] < 8 ||
      plan.shape[q] < 8) {
    return false;
  }
  const std::int64_t rows = plan.shape[0], cols = plan.shape[q];
  const std::int64_t sld = plan.strides[0][0], dld = plan.strides[1][q];
  // Tiles of 128 bytes along the destination's runs (`rows`) by 4 KiB along
  // the source's (`cols`): each source row is read as one 4 KiB run, which
  // the prefetcher follows, and each destination column receives two whole
  // cache lines. Square 256-byte tiles read 256-byte pieces of 32 rows and
  // took twice as long (2048^2 doubles: 6.3-6.9 ms against 3.0-3.4 ms on a
  // 2-core AMD EPYC; 256x256x64 [2,0,1]: 7.1-9.7 ms against 2.8-3.5 ms).
  // Narrow layouts (a source run of at most kNarrowTileBytes, such as an
  // MPS bra tensor B(e, b, d) of 19 x 19 x 100 doubles copied to [b, d, e])
  // take tiles of all columns and about 64 KiB of source, which
  // transpose_tile walks by strips in source order (tiles of 16 rows cost a
  // call each).
  const auto width = cols * static_cast<std::int64_t>(item);
  const std::int64_t tile =
      width <= kNarrowTileBytes
          ? std::max<std::int64_t>(16, (std::int64_t{1} << 16) / width / 16 * 16)
          : std::max<std::int64_t>(8, 128 / static_cast<std::int64_t>(item));
  const std::int64_t ctile = std::max<std::int64_t>(8, 4096 / static_cast<std::int64_t>(item));
  const std::int64_t row_tiles = (rows + tile - 1) / tile, col_tiles = (cols + ctile - 1) / ctile;
  SmallVector<bool, 8> taken(rank, false);
  taken[0] = taken[q] = true;
  const OuterAxes outer(plan, taken);
  const bool streaming = static_cast<std::size_t>(plan.numel) * item >= kStreamingBytes;
  const auto* sb = static_cast<const unsigned char*>(s);
  auto* db = static_cast<unsigned char*>(d);
  const auto bytes = static_cast<std::int64_t>(item);
  const std::int64_t tasks = row_tiles * col_tiles * outer.count;
  const std::int64_t grain =
      std::max<std::int64_t>(1, threshold / (tile * (width <= kNarrowTileBytes ? cols : ctile)));
  parallel_for(tasks, grain, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t task = lo; task < hi; ++task) {
      std::int64_t t = task;
      const std::int64_t tr = t % row_tiles;
      t /= row_tiles;
      const std::int64_t tc = t % col_tiles;
      t /= col_tiles;
      std::int64_t so = tr * tile * sld + tc * ctile, dof = tr * tile + tc * ctile * dld;
      outer.add_offsets(plan, t, so, dof);
      transpose_tile(sb + so * bytes, sld, db + dof * bytes, dld, std::min(tile, rows - tr * tile),
                     std::min(ctile, cols - tc * ctile), item, streaming);
    }
    if (streaming) transpose_fence();  // this thread's streaming stores, before the join
  });
  return true;
}

// The permuted copy whose destination-fastest axes (plan axes 0, 1, ...)
// form a compact run of `rows` elements in the destination and whose
// source-fastest other axes form a compact run of `cols` elements in the
// source (many small extents, such as a 3^15 tensor with its axes reversed):
// tiles of rows x cols with a table of source offsets per row and
// destination offsets per column, every other axis outer. The inner loop
// writes one destination run of `rows` elements while reading a cache line
// from each of `rows` source runs, which the next columns read on: long
// runs (up to kRowGroup; kColGroup for the source's) keep the destination
// streaming with those lines still in L1/L2. The 3^15 reversal with groups
// of 729 x 243: 55 -> 23 ms (81 x 81 before), a copy of the same bytes 11
// ms. Returns false (nothing copied) for other layouts.
constexpr std::int64_t kRowGroup = 1024, kColGroup = 256;

template <class T, class ParallelFor>
bool grouped_transpose(const ParallelFor& parallel_for, std::int64_t threshold, const Plan& plan,
                       const T* s, T* d) {
  const std::size_t rank = plan.shape.size();
  if (rank < 3 || plan.strides[1][0] != 1) return false;
  SmallVector<bool, 8> taken(rank, false);
  SmallVector<std::size_t, 8> row_axes{0}, col_axes;
  taken[0] = true;
  std::int64_t rows = plan.shape[0];
  for (std::size_t ax = 1; ax < rank; ++ax) {
    if (plan.strides[1][ax] != rows || rows * plan.shape[ax] > kRowGroup) break;
    row_axes.push_back(ax);
    taken[ax] = true;
    rows *= plan.shape[ax];
  }
  SmallVector<std::size_t, 8> order;
  for (std::size_t ax = 0; ax < rank; ++ax)
    if (!taken[ax]) order.push_back(ax);
  detail::small_stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::llabs(plan.strides[0][a]) < std::llabs(plan.strides[0][b]);
  });
  if (order.empty() || plan.strides[0][order[0]] != 1) return false;
  std::int64_t cols = 1;
  for (const std::size_t ax : order) {
    if (plan.strides[0][ax] != cols || (cols > 1 && cols * plan.shape[ax] > kColGroup)) break;
    col_axes.push_back(ax);
    taken[ax] = true;
    cols *= plan.shape[ax];
  }
  if (rows < 4 || cols < 4 || rows > kRowGroup || cols > kColGroup) return false;
  // Source offset of each row index and destination offset of each column
  // index (column-major over the group's axes).
  std::int64_t row_src[kRowGroup], col_dst[kColGroup];
  const auto offsets = [&](const SmallVector<std::size_t, 8>& axes, int operand,
                           std::int64_t* out) {
    out[0] = 0;
    std::int64_t n = 1;
    for (const std::size_t ax : axes) {
      for (std::int64_t i = 1; i < plan.shape[ax]; ++i)
        for (std::int64_t j = 0; j < n; ++j)
          out[i * n + j] = out[j] + i * plan.strides[operand][ax];
      n *= plan.shape[ax];
    }
  };
  offsets(row_axes, 0, row_src);
  offsets(col_axes, 1, col_dst);
  const OuterAxes outer(plan, taken);
  const std::int64_t grain = std::max<std::int64_t>(1, threshold / (rows * cols));
  parallel_for(outer.count, grain, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t task = lo; task < hi; ++task) {
      std::int64_t t = task, so = 0, dof = 0;
      outer.add_offsets(plan, t, so, dof);
      for (std::int64_t c = 0; c < cols; ++c) {
        T* dp = d + dof + col_dst[c];
        const T* sp = s + so + c;
        for (std::int64_t r = 0; r < rows; ++r) dp[r] = sp[row_src[r]];
      }
    }
  });
  return true;
}

template <class ParallelFor>
void memcpy_copy(const ParallelFor& parallel_for, std::int64_t threshold, const void* s, void* d,
                 std::int64_t numel, std::size_t item) {
  const auto* sb = static_cast<const unsigned char*>(s);
  auto* db = static_cast<unsigned char*>(d);
  parallel_for(numel, threshold, [&](std::int64_t b, std::int64_t e) {
    std::memcpy(db + b * item, sb + b * item, static_cast<std::size_t>(e - b) * item);
  });
}

}  // namespace copy_kernel

/// Copies src into dst elementwise (same shape, host memory, any strides and
/// dtypes; the caller validated both).
template <class ParallelFor>
void strided_copy_into(const Tensor& src, const Tensor& dst, const ParallelFor& parallel_for,
                       std::int64_t threshold) {
  using namespace copy_kernel;
  if (src.numel() == 0) return;
  const Plan plan = sorted_plan(src, dst);
  if (src.dtype() == dst.dtype()) {
    if (plan.is_flat_unit()) {
      memcpy_copy(parallel_for, threshold, src.raw_data(), dst.raw_data(), plan.numel,
                  itemsize(src.dtype()));
      return;
    }
    // Plan axis 0 is the destination's fastest; block when the source's
    // fastest axis is another one.
    bool permuted = false;
    for (std::size_t ax = 1; ax < plan.shape.size(); ++ax) {
      permuted = permuted || std::llabs(plan.strides[0][ax]) < std::llabs(plan.strides[0][0]);
    }
    if (permuted && tiled_transpose(parallel_for, threshold, plan, src.raw_data(), dst.raw_data(),
                                    itemsize(src.dtype()))) {
      return;
    }
    dispatch_dtype(src.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* s = static_cast<const T*>(src.raw_data());
      T* d = static_cast<T*>(dst.raw_data());
      if (permuted) {
        if (grouped_transpose<T>(parallel_for, threshold, plan, s, d)) return;
        blocked_copy<T>(parallel_for, threshold, plan, s, d);
      } else {
        strided_copy<T, T>(parallel_for, threshold, plan, s, d);
      }
    });
    return;
  }
  dispatch_dtype(src.dtype(), [&](auto stag) {
    using S = typename decltype(stag)::type;
    dispatch_dtype(dst.dtype(), [&](auto dtag) {
      using D = typename decltype(dtag)::type;
      strided_copy<S, D>(parallel_for, threshold, plan, static_cast<const S*>(src.raw_data()),
                         static_cast<D*>(dst.raw_data()));
    });
  });
}

}  // namespace tenferro::detail
