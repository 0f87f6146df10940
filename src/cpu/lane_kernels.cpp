// Cumulative sums/products and stable (partial) argsort along one axis.

#include "cpu/lane_kernels.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

#include "tensor/dispatch.hpp"

namespace tenferro::cpu {

namespace {

// Wrapping integer arithmetic (signed overflow is undefined behaviour).
template <class T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
  } else {
    return a + b;
  }
}
template <class T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
  } else {
    return a * b;
  }
}

// Inner positions per task: long enough runs for the vectorised inner loop.
constexpr std::int64_t kInnerBlock = 512;

template <class T>
void cumulate_typed(CpuBackend& cpu, const T* src, T* dst, const LaneShape& l, bool product,
                    bool reverse) {
  if (l.inner == 0 || l.outer == 0 || l.n == 0) return;
  const std::int64_t blocks = (l.inner + kInnerBlock - 1) / kInnerBlock;
  const std::int64_t grain =
      std::max<std::int64_t>(1, cpu.parallel_threshold() / (l.n * kInnerBlock));
  const auto step_of = [&](T acc, T x) { return product ? wrap_mul(acc, x) : wrap_add(acc, x); };
  // src may be dst (a scan in place): every element is read before it is written.
  cpu.parallel_for(l.outer * blocks, grain, [&](std::int64_t begin, std::int64_t end) {
    if (l.inner == 1) {
      // Contiguous lanes (blocks == 1: a task is a lane), W at a time: each
      // running value is a chain of dependent additions (latency-bound), so
      // W independent chains keep the adder busy; every lane still
      // accumulates in order (the same results as one lane at a time).
      const auto scan = [&]<int W>(std::int64_t lane0) {
        const T* in = src + lane0 * l.n;
        T* out = dst + lane0 * l.n;
        T acc[W];
        const std::int64_t first = reverse ? l.n - 1 : 0;
        for (int w = 0; w < W; ++w) out[w * l.n + first] = acc[w] = in[w * l.n + first];
        for (std::int64_t step = 1; step < l.n; ++step) {
          const std::int64_t at = reverse ? l.n - 1 - step : step;
          for (int w = 0; w < W; ++w)
            out[w * l.n + at] = acc[w] = step_of(acc[w], in[w * l.n + at]);
        }
      };
      std::int64_t task = begin;
      for (; task + 4 <= end; task += 4) scan.template operator()<4>(task);
      for (; task < end; ++task) scan.template operator()<1>(task);
      return;
    }
    for (std::int64_t task = begin; task < end; ++task) {
      const std::int64_t o = task / blocks;
      const std::int64_t i0 = (task % blocks) * kInnerBlock;
      const std::int64_t i1 = std::min(l.inner, i0 + kInnerBlock);
      const T* in = src + o * l.inner * l.n;
      T* out = dst + o * l.inner * l.n;
      const std::int64_t first = (reverse ? l.n - 1 : 0) * l.inner;
      if (out != in) std::copy(in + first + i0, in + first + i1, out + first + i0);
      for (std::int64_t step = 1; step < l.n; ++step) {
        const std::int64_t k = reverse ? l.n - 1 - step : step;
        const std::int64_t prev = reverse ? k + 1 : k - 1;
        const T* x = in + k * l.inner;
        const T* before = out + prev * l.inner;
        T* cur = out + k * l.inner;
        if (product) {
          for (std::int64_t i = i0; i < i1; ++i) cur[i] = wrap_mul(before[i], x[i]);
        } else {
          for (std::int64_t i = i0; i < i1; ++i) cur[i] = wrap_add(before[i], x[i]);
        }
      }
    }
  });
}

// An unsigned key whose order is the sort order: NaN largest (all NaNs
// equal), -0.0 equal to 0.0; ~key reverses it for descending sorts. Equal
// keys are equal values, so sorting (key, index) pairs is a stable sort.
template <class T>
std::uint64_t order_key(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? 1u : 0u;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(v)) ^ (std::uint64_t{1} << 63);
  } else if constexpr (std::is_same_v<T, float>) {
    if (std::isnan(v)) return 0xFFFFFFFFu;
    const auto b = std::bit_cast<std::uint32_t>(v == 0 ? 0.0f : v);
    return (b >> 31) != 0 ? ~b : (b | 0x80000000u);
  } else {
    if (std::isnan(v)) return ~std::uint64_t{0};
    const auto b = std::bit_cast<std::uint64_t>(v == 0 ? 0.0 : v);
    return (b >> 63) != 0 ? ~b : (b | (std::uint64_t{1} << 63));
  }
}

struct Keyed {
  std::uint64_t key;
  std::int64_t index;
  bool operator<(const Keyed& o) const { return key < o.key || (key == o.key && index < o.index); }
};

// LSD radix sort on 8-bit digits, stable (equal keys keep index order);
// digits on which every key agrees are skipped. Sorts a[0, n) with b[0, n)
// as scratch; returns the one that holds the result. (Splitting a long lane
// on its top bits first, so that the later passes run in the cache, measured
// no faster on a Zen 4 VM: the scatter passes are as slow in L2 as in L3,
// and the split adds passes; uniform values in [0, 1) took 28 ms instead of
// 22.)
Keyed* radix_sort(Keyed* a, Keyed* b, std::size_t n) {
  std::array<std::array<std::size_t, 256>, 8> count{};
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t key = a[i].key;
    for (int d = 0; d < 8; ++d) ++count[static_cast<std::size_t>(d)][(key >> (8 * d)) & 0xFF];
  }
  Keyed* src = a;
  Keyed* dst = b;
  for (int d = 0; d < 8; ++d) {
    auto& c = count[static_cast<std::size_t>(d)];
    if (c[(a[0].key >> (8 * d)) & 0xFF] == n) continue;  // every key has this digit
    std::size_t sum = 0;
    for (std::size_t& x : c) {
      const std::size_t here = x;
      x = sum;
      sum += here;
    }
    for (std::size_t i = 0; i < n; ++i) dst[c[(src[i].key >> (8 * d)) & 0xFF]++] = src[i];
    std::swap(src, dst);
  }
  return src;
}

// Largest k selected with a heap in one pass (argsort_typed).
constexpr std::int64_t kHeapSelectMax = 1024;

// The value whose order_key is `key`: exact for bool and integers; for
// floating point every value but zeros (-0.0 has 0.0's key) and NaNs (one
// key for all), which the caller reads back from the input.
template <class T>
T from_order_key(std::uint64_t key) {
  if constexpr (std::is_same_v<T, bool>) {
    return key != 0;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<std::int64_t>(key ^ (std::uint64_t{1} << 63)));
  } else if constexpr (std::is_same_v<T, float>) {
    const auto k = static_cast<std::uint32_t>(key);
    return std::bit_cast<float>((k >> 31) != 0 ? (k & 0x7FFFFFFFu) : ~k);
  } else {
    return std::bit_cast<double>((key >> 63) != 0 ? (key & ~(std::uint64_t{1} << 63)) : ~key);
  }
}

// Scratch for a chunk of lanes: `count` entries from the backend's buffer
// pool (a lane of 2^20 needs 32 MiB; a fresh allocation of that size is
// mapped and faulted in on every call, 13 ms of a 32 ms sort).
class KeyedScratch {
 public:
  KeyedScratch(CpuBackend& cpu, std::int64_t count)
      : buf_(cpu.empty(Shape{2 * std::max<std::int64_t>(count, 1)}, DType::I64)) {}
  Keyed* data() const { return static_cast<Keyed*>(buf_.raw_data()); }

 private:
  Tensor buf_;
};
static_assert(sizeof(Keyed) == 2 * sizeof(std::int64_t) && std::is_trivially_copyable_v<Keyed>);

template <class T>
void argsort_typed(CpuBackend& cpu, const T* data, const LaneShape& l, std::int64_t k,
                   bool descending, std::int64_t* out, T* values) {
  const std::int64_t lanes = l.inner * l.outer;
  if (lanes == 0 || k == 0) return;
  const std::int64_t grain = std::max<std::int64_t>(1, cpu.parallel_threshold() / (8 * l.n + 1));
  // Few of many (topk): one pass with a max-heap of the k first seen so far;
  // an element is compared once with the heap's last and mostly rejected.
  const bool stream_select = k <= kHeapSelectMax && 4 * k < l.n;
  const bool radix = !stream_select && 4 * k >= l.n && l.n >= 64;
  cpu.parallel_for(lanes, grain, [&](std::int64_t begin, std::int64_t end) {
    const std::int64_t len = stream_select ? k : l.n;
    const KeyedScratch scratch(cpu, radix ? 2 * len : len);
    Keyed* const keyed = scratch.data();
    for (std::int64_t lane = begin; lane < end; ++lane) {
      const std::int64_t i = lane % l.inner, o = lane / l.inner;
      const T* src = data + i + o * l.inner * l.n;
      const std::int64_t at = i + o * l.inner * k;  // the lane's first output
      const Keyed* sorted = keyed;
      if (stream_select) {
        // The order is total (ties broken by index), so the k kept are the
        // same as the full sort's first k.
        for (std::int64_t j = 0; j < k; ++j) {
          const std::uint64_t key = order_key(src[j * l.inner]);
          keyed[j] = {descending ? ~key : key, j};
        }
        std::make_heap(keyed, keyed + k);
        for (std::int64_t j = k; j < l.n; ++j) {
          const std::uint64_t key = order_key(src[j * l.inner]);
          const Keyed e{descending ? ~key : key, j};
          if (!(e < keyed[0])) continue;
          std::pop_heap(keyed, keyed + k);
          keyed[k - 1] = e;
          std::push_heap(keyed, keyed + k);
        }
        std::sort_heap(keyed, keyed + k);
      } else {
        for (std::int64_t j = 0; j < l.n; ++j) {
          const std::uint64_t key = order_key(src[j * l.inner]);
          keyed[j] = {descending ? ~key : key, j};
        }
        if (4 * k < l.n) {
          // Select the k first (a total order: ties broken by index), then sort them.
          std::nth_element(keyed, keyed + (k - 1), keyed + l.n);
          std::sort(keyed, keyed + k);
        } else if (!radix) {
          std::sort(keyed, keyed + l.n);
        } else {
          sorted = radix_sort(keyed, keyed + l.n, static_cast<std::size_t>(l.n));
        }
      }
      for (std::int64_t j = 0; j < k; ++j) out[at + j * l.inner] = sorted[j].index;
      if (values == nullptr) continue;
      for (std::int64_t j = 0; j < k; ++j) {
        T v = from_order_key<T>(descending ? ~sorted[j].key : sorted[j].key);
        if constexpr (std::is_floating_point_v<T>) {
          if (v == 0 || std::isnan(v)) v = src[sorted[j].index * l.inner];  // sign, payload
        }
        values[at + j * l.inner] = v;
      }
    }
  });
}

}  // namespace

LaneShape lane_shape(const Tensor& x, std::int64_t axis) {
  LaneShape l;
  for (std::int64_t d = 0; d < x.rank(); ++d) {
    const std::int64_t e = x.shape()[static_cast<std::size_t>(d)];
    if (d < axis) l.inner *= e;
    if (d == axis) l.n = e;
    if (d > axis) l.outer *= e;
  }
  return l;
}

void cumulate_lanes(CpuBackend& backend, const Tensor& x, const Tensor& out, const LaneShape& lanes,
                    bool product, bool reverse) {
  detail::dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::int32_t>) {
      throw Error(ErrorKind::Internal, "cumulate", "accumulates in i64, got a narrower dtype");
    } else {
      cumulate_typed<T>(backend, static_cast<const T*>(x.raw_data()),
                        static_cast<T*>(out.raw_data()), lanes, product, reverse);
    }
  });
}

void argsort_lanes(CpuBackend& backend, const Tensor& x, const LaneShape& lanes, std::int64_t k,
                   bool descending, const Tensor& out, const Tensor* values) {
  detail::dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (detail::is_complex_v<T>) {
      throw Error(ErrorKind::Internal, "argsort", "complex values are not ordered");
    } else {
      argsort_typed<T>(backend, static_cast<const T*>(x.raw_data()), lanes, k, descending,
                       static_cast<std::int64_t*>(out.raw_data()),
                       values != nullptr ? static_cast<T*>(values->raw_data()) : nullptr);
    }
  });
}

}  // namespace tenferro::cpu
