// The CPU executor of fused elementwise passes (Backend::fused_elementwise).
// Each block of `block` elements runs every step through the CPU elementwise
// kernels (the ones behind the direct ops), so values match the unfused ops
// exactly. Externals that are compact and of the full shape are read in
// place, scalars are splatted once per thread, anything else is gathered per
// block. A pass of unary and binary steps over such externals runs on raw
// pointers (the kernels' compact forms: no tensor per step and block); any
// other pass goes through tensor views of the blocks. A raw pass that moves
// beyond the cache and ends in arithmetic streams its output (run_raw).

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>

#include <unistd.h>

#include "cpu/elementwise_kernels.hpp"
#include "cpu/kernels.hpp"
#include "cpu/reduce_engine.hpp"
#include "cpu/special_kernels.hpp"
#include "cpu/stream_arith.hpp"
#include "cpu/stream_store.hpp"
#include "tenferro/backend/fused.hpp"

namespace tenferro {

namespace {

using Kind = FusedElementwise::Kind;
using detail::StridedPlan;

// Copies elements [begin, begin + n) (column-major order) of a strided view
// into a compact buffer.
template <std::size_t Bytes>
void gather_fixed(const StridedPlan<1>& plan, const std::byte* src, std::byte* dst,
                  std::int64_t begin, std::int64_t n) {
  plan.run(begin, begin + n, [&](std::int64_t len, const auto& off, const auto& inc) {
    const std::byte* s = src + off[0] * static_cast<std::int64_t>(Bytes);
    const std::int64_t step = inc[0] * static_cast<std::int64_t>(Bytes);
    for (std::int64_t i = 0; i < len; ++i, s += step, dst += Bytes) std::memcpy(dst, s, Bytes);
  });
}

void gather(const StridedPlan<1>& plan, std::size_t itemsize, const void* src, void* dst,
            std::int64_t begin, std::int64_t n) {
  auto* s = static_cast<const std::byte*>(src);
  auto* d = static_cast<std::byte*>(dst);
  switch (itemsize) {
    case 1:
      return gather_fixed<1>(plan, s, d, begin, n);
    case 4:
      return gather_fixed<4>(plan, s, d, begin, n);
    case 8:
      return gather_fixed<8>(plan, s, d, begin, n);
    default:
      return gather_fixed<16>(plan, s, d, begin, n);
  }
}

// Scratch: one 16-byte cell per element covers every dtype, 16-byte
// alignment every type; uninitialised (every slot is written before it is
// read), as c128_t's constructor would zero it. Slots are kSlotPad elements
// (64 bytes, a cache line) more than a block apart: at exactly 2^k bytes
// apart, a step reading one slot and writing another hits the same 4 KiB
// page offsets, and the CPU's store-to-load disambiguation stalls on them
// (4K aliasing).
struct alignas(16) Cell {
  unsigned char bytes[16];
};
constexpr std::size_t kSlotPad = 4;

enum class Mode : unsigned char { Direct, Scalar, Gather };

struct External {
  Mode mode = Mode::Direct;
  Tensor flat;       // Direct: the compact input as [N]; Scalar: as [1]
  Tensor broadcast;  // Gather: the input broadcast to the pass shape
  std::optional<StridedPlan<1>> plan;
};

void run_step(CpuBackend& cpu, const FusedElementwise::Step& st, std::span<const Tensor> ops,
              const Tensor& out) {
  switch (st.kind) {
    case Kind::Unary:
      return cpu::unary_kernel(cpu, st.unary, ops[0], out);
    case Kind::Binary:
      return cpu::binary_kernel(cpu, st.binary, ops[0], ops[1], out);
    case Kind::Select:
      return cpu::where_kernel(cpu, ops[0], ops[1], ops[2], out);
    case Kind::Clamp:
      return cpu::clamp_kernel(cpu, ops[0], st.lo, st.hi, out);
    case Kind::Convert:
      return cpu::copy(cpu, ops[0], out);
    case Kind::Fill:
      return cpu::fill(cpu, out, st.value);
  }
}

// The compact tensor t as a rank-1 view of its n elements (no reshape
// machinery: t is contiguous by the caller's check).
Tensor flat_view(const Tensor& t, std::int64_t n) {
  return Tensor::from_storage(t.storage(), t.dtype(), Shape{n}, Strides{1}, t.offset());
}

// The executors write every element of `out` (compact, of the pass shape,
// `total` > 0 elements) in blocks of `block` <= total elements.
void run_cpu(CpuBackend& cpu, const FusedElementwise& pass, std::span<const Tensor> externals,
             const Shape& shape, std::int64_t total, std::int64_t block, const Tensor& out) {
  std::vector<External> ext(externals.size());
  for (std::size_t e = 0; e < externals.size(); ++e) {
    const Tensor& t = externals[e];
    if (t.numel() == 1) {
      ext[e].mode = Mode::Scalar;
      ext[e].flat = t.reshape_copy({1});
    } else if (t.shape() == shape && t.is_contiguous()) {
      ext[e].flat = flat_view(t, total);
    } else {
      ext[e].mode = Mode::Gather;
      ext[e].broadcast = t.broadcast_to(shape.span());
      ext[e].plan.emplace(shape.span(), std::array<std::span<const std::int64_t>, 1>{
                                            ext[e].broadcast.strides().span()});
    }
  }
  const Tensor out_flat = flat_view(out, total);
  const std::int64_t blocks = (total + block - 1) / block;
  const std::int64_t grain = std::max<std::int64_t>(1, cpu.parallel_threshold() / block);
  const std::size_t slots = static_cast<std::size_t>(pass.buffer_count) + ext.size();
  const auto& steps = pass.steps;

  cpu.parallel_for(blocks, grain, [&](std::int64_t b0, std::int64_t b1) {
    // One Cell per element, slots kSlotPad elements more than a block apart.
    const auto stride = static_cast<std::size_t>(block) + kSlotPad;
    const auto scratch = std::make_unique_for_overwrite<Cell[]>(slots * stride);
    const Shape block_shape{block};
    auto slot_ptr = [&](std::size_t s) { return static_cast<void*>(scratch.get() + s * stride); };
    // Every slot is a view of one wrapped scratch storage (offsets count
    // elements of the view's dtype; a cell is 16 bytes, a multiple of each).
    const std::int64_t cells = static_cast<std::int64_t>(slots * stride);
    const Tensor scratch_bytes = Tensor::wrap(scratch.get(), DType::C128, std::span(&cells, 1));
    auto slot_view = [&](std::size_t s, DType dt) {
      const auto per_cell = static_cast<std::int64_t>(16 / itemsize(dt));
      return Tensor::from_storage(scratch_bytes.storage(), dt, block_shape, Strides{1},
                                  static_cast<std::int64_t>(s * stride) * per_cell);
    };
    // One list holds the four per-block tensor lists: a step's scratch slot
    // and its view for this block, an external's slot and its view.
    std::vector<Tensor> lists(2 * steps.size() + 2 * ext.size());
    const std::span<Tensor> step_buf(lists.data(), steps.size());
    const std::span<Tensor> step_view(lists.data() + steps.size(), steps.size());
    const std::span<Tensor> ext_buf(lists.data() + 2 * steps.size(), ext.size());
    const std::span<Tensor> ext_view(lists.data() + 2 * steps.size() + ext.size(), ext.size());
    for (std::size_t m = 0; m + 1 < steps.size(); ++m)
      step_buf[m] = slot_view(static_cast<std::size_t>(steps[m].buffer), steps[m].dtype);
    for (std::size_t e = 0; e < ext.size(); ++e) {
      if (ext[e].mode == Mode::Direct) continue;
      ext_buf[e] = slot_view(static_cast<std::size_t>(pass.buffer_count) + e, externals[e].dtype());
      if (ext[e].mode == Mode::Scalar)
        cpu::copy(cpu, ext[e].flat.broadcast_to(block_shape.span()), ext_buf[e]);
    }
    std::array<Tensor, 3> ops;  // a step reads at most three operands (select)
    for (std::int64_t blk = b0; blk < b1; ++blk) {
      const std::int64_t s = blk * block;
      const std::int64_t len = std::min(block, total - s);
      auto head = [&](const Tensor& t) { return len == block ? t : t.slice(0, 0, len); };
      // Block [s, s + len) of a compact [total] tensor: itself when the pass
      // is one block.
      auto part = [&](const Tensor& t) { return len == total ? t : t.slice(0, s, s + len); };
      for (std::size_t e = 0; e < ext.size(); ++e) {
        if (ext[e].mode == Mode::Direct) {
          ext_view[e] = part(ext[e].flat);
          continue;
        }
        if (ext[e].mode == Mode::Gather) {
          gather(*ext[e].plan, itemsize(externals[e].dtype()), ext[e].broadcast.raw_data(),
                 slot_ptr(static_cast<std::size_t>(pass.buffer_count) + e), s, len);
        }
        ext_view[e] = head(ext_buf[e]);
      }
      for (std::size_t m = 0; m < steps.size(); ++m) {
        const FusedElementwise::Step& st = steps[m];
        for (std::size_t k = 0; k < st.operands.size(); ++k) {
          const auto& o = st.operands[k];
          ops[k] = o.external ? ext_view[o.index] : step_view[o.index];
        }
        step_view[m] = m + 1 == steps.size() ? part(out_flat) : head(step_buf[m]);
        run_step(cpu, st, std::span<const Tensor>(ops.data(), st.operands.size()), step_view[m]);
      }
    }
  });
}

// a == b, element by element (std::equal would call memcmp for a few extents).
bool same_extents(const Shape& a, std::span<const std::int64_t> b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < b.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// The L1 data cache of this machine in bytes (32 KiB where the system does
// not say).
std::int64_t l1_data_bytes() {
  static const std::int64_t bytes = [] {
    const long v = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    return v >= (16 << 10) && v <= (4 << 20) ? static_cast<std::int64_t>(v)
                                             : std::int64_t{32} << 10;
  }();
  return bytes;
}

// Whether every step of `pass` has a compact kernel to run on raw pointers:
// unary and binary steps only, not the special functions (which have their
// own kernels) nor fmod/remainder (whose integer form checks the whole
// divisor first).
bool raw_steps(const FusedElementwise& pass) {
  for (const FusedElementwise::Step& st : pass.steps) {
    if (st.kind == Kind::Unary) {
      if (cpu::is_special_op(st.unary)) return false;
    } else if (st.kind == Kind::Binary) {
      if (cpu::is_special_op(st.binary) || st.binary == BinaryOp::Fmod ||
          st.binary == BinaryOp::Remainder)
        return false;
    } else {
      return false;
    }
  }
  return true;
}

// Whether a pass of raw_steps runs on raw pointers over these externals:
// each compact of the pass shape, or a single value.
bool raw_externals(std::span<const Tensor> externals, std::span<const std::int64_t> shape) {
  for (const Tensor& t : externals) {
    const bool compact = same_extents(t.shape(), shape) && t.is_contiguous();
    if (!compact && t.numel() != 1) return false;
  }
  return true;
}

// A pass of raw_steps as it runs on raw pointers, worked out once from the
// pass and its externals' dtypes (per call by fused_elementwise, per
// prepared program by prepare_fused): the steps of one block [s, s + len)
// through the kernels' compact forms, intermediates in scratch slots (as in
// run_cpu: Cell-sized elements, slots `stride` cells apart), the last step
// into `dst`. Slots [0, buffer_count) are the steps' buffers, then one per
// external (a single value splatted there once per scratch). Holds `pass`
// by reference.
class RawPlan {
 public:
  RawPlan(const FusedElementwise& pass, std::span<const DType> external_dtypes)
      : steps_(pass.steps), base_(static_cast<std::size_t>(pass.buffer_count)) {
    for (DType d : external_dtypes) ext_.push_back({d, static_cast<std::int64_t>(itemsize(d))});
    pair_arithmetic();
    block_bytes();
  }
  RawPlan(const RawPlan&) = delete;
  RawPlan& operator=(const RawPlan&) = delete;

  std::size_t slots() const { return base_ + ext_.size(); }

  // Whether the last step (or pair) is f32/f64 add, sub, mul or div, which
  // block() can stream into dst.
  bool last_streams() const { return last_streams_ && cpu::stream_arith_available(); }

  // The most elements per block whose working set (per element: the output,
  // every external, every scratch slot in the widest dtype) fills half the
  // L1 data cache, in multiples of 64 and at least 256. Beyond that, each
  // step's reads and writes of the scratch go to L2: 8 layers of y * a + b
  // over 2^20 f64 took 4.8 ms in blocks of 2048 (96 KiB per block) against
  // 2.7 ms in blocks of 512, measured with a 48 KiB L1.
  std::int64_t l1_block() const {
    return std::max<std::int64_t>(256, l1_data_bytes() / 2 / element_bytes_ / 64 * 64);
  }

  // One call's externals: where each starts, and whether it is one value.
  struct Data {
    const std::byte* data;
    bool single;
  };
  using Externals = SmallVector<Data, 8>;
  static Externals data_of(std::span<const Tensor> externals) {
    Externals d;
    for (const Tensor& t : externals)
      d.push_back({static_cast<const std::byte*>(t.raw_data()), t.numel() == 1});
    return d;
  }

  // Writes each single-value external `count` times into its slot.
  void splat(const Externals& x, Cell* scratch, std::size_t stride, std::int64_t count) const {
    for (std::size_t e = 0; e < ext_.size(); ++e) {
      if (!x[e].single) continue;
      const auto size = static_cast<std::size_t>(ext_[e].size);
      auto* d = reinterpret_cast<std::byte*>(scratch + (base_ + e) * stride);
      for (std::int64_t i = 0; i < count; ++i) std::memcpy(d + i * size, x[e].data, size);
    }
  }

  // stream: the last step streams into dst (last_streams()).
  void block(const Externals& x, Cell* scratch, std::size_t stride, std::int64_t s,
             std::int64_t len, void* dst, bool stream = false) const {
    auto slot = [&](std::size_t k) { return static_cast<void*>(scratch + k * stride); };
    auto read = [&](const FusedElementwise::Operand& o) -> const void* {
      if (!o.external) return slot(static_cast<std::size_t>(steps_[o.index].buffer));
      return x[o.index].single ? slot(base_ + o.index) : x[o.index].data + s * ext_[o.index].size;
    };
    auto write = [&](std::size_t m) -> void* {
      return m + 1 == steps_.size() ? dst : slot(static_cast<std::size_t>(steps_[m].buffer));
    };
    for (std::size_t m = 0; m < steps_.size(); ++m) {
      const FusedElementwise::Step& st = steps_[m];
      const FusedElementwise::Operand& a = st.operands[0];
      bool done;
      const bool last = m + (paired_[m] ? 2 : 1) == steps_.size();
      if (stream && last) {
        done =
            stream_last(m, read(a), read(st.operands[1]), len, dst,
                        paired_[m] ? read(steps_[m + 1].operands[mid_right(m) ? 0 : 1]) : nullptr);
        if (paired_[m]) ++m;
      } else if (paired_[m]) {  // st and the next step in one loop
        const FusedElementwise::Step& next = steps_[m + 1];
        done = cpu::binary2_contiguous(
            st.binary, next.binary, mid_right(m), st.dtype, read(a), read(st.operands[1]),
            read(next.operands[mid_right(m) ? 0 : 1]), write(m + 1), len);
        ++m;
      } else {
        const DType in = a.external ? ext_[a.index].dtype : steps_[a.index].dtype;
        done = st.kind == Kind::Unary ? cpu::unary_contiguous(st.unary, in, read(a), write(m), len)
                                      : cpu::binary_contiguous(st.binary, in, read(a),
                                                               read(st.operands[1]), write(m), len);
      }
      if (!done)
        fail(ErrorKind::Internal, "fused_elementwise", "step ", m, " has no compact kernel");
    }
  }

 private:
  // Whether step m + 1 of a pair takes step m's value as its right operand.
  bool mid_right(std::size_t m) const {
    const FusedElementwise::Operand& o = steps_[m + 1].operands[1];
    return !o.external && o.index == m;
  }

  // The last step m (with c: the pair m, m + 1, c the second's other
  // operand) into dst with streaming stores.
  bool stream_last(std::size_t m, const void* a, const void* b, std::int64_t len, void* dst,
                   const void* c) const {
    const FusedElementwise::Step& st = steps_[m];
    if (st.dtype == DType::F64) {
      return stream_typed(st, m, static_cast<const double*>(a), static_cast<const double*>(b),
                          static_cast<const double*>(c), static_cast<double*>(dst), len);
    }
    return stream_typed(st, m, static_cast<const float*>(a), static_cast<const float*>(b),
                        static_cast<const float*>(c), static_cast<float*>(dst), len);
  }
  template <class T>
  bool stream_typed(const FusedElementwise::Step& st, std::size_t m, const T* a, const T* b,
                    const T* c, T* dst, std::int64_t len) const {
    // No fence per block (a fence every few KiB cost 15% at 2^22 doubles):
    // run_raw fences once per chunk.
    if (c == nullptr) return cpu::stream_arith(st.binary, a, false, b, false, dst, len, false);
    return cpu::stream_arith2(st.binary, steps_[m + 1].binary, mid_right(m), a, b, c, dst, len,
                              false);
  }

  // Marks step m paired when it and step m + 1 are f32/f64 add, sub, mul or
  // div of one dtype and step m's value is read once, by step m + 1, as one
  // operand: the two run as one loop (cpu::binary2_contiguous), the
  // intermediate never stored (a * x + b: two loads and a store an element
  // fewer).
  void pair_arithmetic() {
    const std::size_t n = steps_.size();
    paired_.assign(n, false);
    SmallVector<std::uint32_t, 32> reads(n, 0);
    for (const FusedElementwise::Step& st : steps_)
      for (const FusedElementwise::Operand& o : st.operands)
        if (!o.external) ++reads[o.index];
    auto arithmetic = [&](const FusedElementwise::Step& st) {
      if (st.kind != Kind::Binary || (st.dtype != DType::F64 && st.dtype != DType::F32))
        return false;
      if (st.binary != BinaryOp::Add && st.binary != BinaryOp::Sub && st.binary != BinaryOp::Mul &&
          st.binary != BinaryOp::Div)
        return false;
      for (const FusedElementwise::Operand& o : st.operands)
        if ((o.external ? ext_[o.index].dtype : steps_[o.index].dtype) != st.dtype) return false;
      return true;
    };
    for (std::size_t m = 0; m + 1 < n; ++m) {
      const FusedElementwise::Step& next = steps_[m + 1];
      // arithmetic(next) holds its operands to its own dtype, so a next that
      // reads step m has m's dtype.
      if (reads[m] != 1 || !arithmetic(steps_[m]) || !arithmetic(next)) continue;
      bool reads_m = false;
      for (const FusedElementwise::Operand& o : next.operands)
        reads_m |= !o.external && o.index == m;
      if (!reads_m) continue;
      paired_[m] = true;
      ++m;  // step m + 1 is taken
    }
    last_streams_ = n > 0 && ((n >= 2 && paired_[n - 2]) || arithmetic(steps_[n - 1]));
  }

  // The bytes an element of a block occupies (l1_block).
  void block_bytes() {
    const auto out = static_cast<std::int64_t>(itemsize(steps_.back().dtype));
    std::int64_t widest = out;
    for (const FusedElementwise::Step& st : steps_)
      widest = std::max(widest, static_cast<std::int64_t>(itemsize(st.dtype)));
    element_bytes_ = out + static_cast<std::int64_t>(base_) * widest;
    for (const External& e : ext_) element_bytes_ += e.size;
  }

  struct External {
    DType dtype;
    std::int64_t size;  // bytes per element
  };
  const std::vector<FusedElementwise::Step>& steps_;
  std::size_t base_;  // first splat slot
  SmallVector<External, 8> ext_;
  SmallVector<bool, 32> paired_;  // per step: runs with the next one
  bool last_streams_ = false;     // the last step (or pair) is arithmetic
  std::int64_t element_bytes_ = 0;
};

// Scratch of `cells` Cells, on the stack when small (a 4-element pass needs
// a few dozen).
class Scratch {
 public:
  explicit Scratch(std::size_t cells) {
    if (cells > kStackCells) {
      heap_ = std::make_unique_for_overwrite<Cell[]>(cells);
      data_ = heap_.get();
    }
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  Cell* data() const { return data_; }

 private:
  static constexpr std::size_t kStackCells = 256;
  std::array<Cell, kStackCells> stack_;
  std::unique_ptr<Cell[]> heap_;
  Cell* data_ = stack_.data();
};

// Whether a raw pass whose last step streams (RawPlan::last_streams) streams
// its output: the pass moves what an eager add, sub, mul or div streams from
// (stream_threshold_bytes at the pool's threads; its compact externals read
// plus the output written) and the output overlaps none of them (a plan may
// write an output over an input's buffer; that line is in the cache already,
// read as an input).
bool streams_pass_output(std::span<const Tensor> externals, const Tensor& out, int threads) {
  const auto span_of = [](const Tensor& t) {
    const auto begin = reinterpret_cast<std::uintptr_t>(t.raw_data());
    return std::pair{begin, begin + static_cast<std::uintptr_t>(t.numel()) * itemsize(t.dtype())};
  };
  const auto [o0, o1] = span_of(out);
  std::size_t moved = o1 - o0;
  for (const Tensor& t : externals) {
    if (t.numel() == 1) continue;
    const auto [e0, e1] = span_of(t);
    if (e0 < o1 && o0 < e1) return false;
    moved += e1 - e0;
  }
  return moved >= cpu::stream_threshold_bytes(threads);
}

// run_cpu for a pass of raw_steps over raw_externals: the same blocks,
// scratch layout and kernels' element functions, on raw pointers, in blocks
// of at most `block` that fit the L1 cache. A streamed output takes the
// last step's streaming form (cpu/stream_arith.hpp): t * a + b over 2^22
// doubles at 1T (96 MiB moved) took 4.2-4.6 ms with cached stores, as long
// again as an eager add moving as much (2.3-2.4 ms).
void run_raw(CpuBackend& cpu, const RawPlan& raw, std::span<const Tensor> externals,
             std::int64_t total, std::int64_t block, const Tensor& out) {
  if (block > 256) block = std::min(block, raw.l1_block());
  const RawPlan::Externals x = RawPlan::data_of(externals);
  const std::int64_t blocks = (total + block - 1) / block;
  const std::int64_t grain = std::max<std::int64_t>(1, cpu.parallel_threshold() / block);
  std::byte* const out_base = static_cast<std::byte*>(out.raw_data());
  const auto out_size = static_cast<std::int64_t>(itemsize(out.dtype()));
  const bool streaming =
      raw.last_streams() && streams_pass_output(externals, out, cpu.num_threads());
  cpu.parallel_for(blocks, grain, [&](std::int64_t b0, std::int64_t b1) {
    const auto stride = static_cast<std::size_t>(block) + kSlotPad;
    Scratch scratch(raw.slots() * stride);
    raw.splat(x, scratch.data(), stride, block);
    for (std::int64_t blk = b0; blk < b1; ++blk) {
      const std::int64_t s = blk * block;
      raw.block(x, scratch.data(), stride, s, std::min(block, total - s), out_base + s * out_size,
                streaming);
    }
    if (streaming) cpu::stream_fence();
  });
}

// This thread's scratch for the leaves of fused reductions, kept between
// calls (a leaf is at most 1024 elements, so it stays small: slots * 16 KiB).
// A task uses it from its first leaf to its last, and tasks do not nest.
Cell* leaf_scratch(std::size_t cells) {
  thread_local std::unique_ptr<Cell[]> buffer;
  thread_local std::size_t capacity = 0;
  if (cells > capacity) {
    buffer = std::make_unique_for_overwrite<Cell[]>(cells);
    capacity = cells;
  }
  return buffer.get();
}

// The fused reduction of a pass of raw_steps over raw_externals: its
// values made leaf by leaf (the reduction's own pairwise leaves) into one
// more scratch slot and reduced there, in reduce_axes' order, so the result
// is the unfused one.
template <class Op>
typename Op::Acc reduce_raw(CpuBackend& cpu, const RawPlan& raw, const RawPlan::Externals& x,
                            std::int64_t total) {
  const std::int64_t leaf_max = std::min(cpu::reduce_engine::kPairwiseLeaf, total);
  const auto stride = static_cast<std::size_t>(leaf_max) + kSlotPad;
  auto make_leaf = [&] {
    Cell* scratch = leaf_scratch((raw.slots() + 1) * stride);
    raw.splat(x, scratch, stride, leaf_max);
    return [&raw, &x, stride, scratch](std::int64_t s, std::int64_t len) {
      Cell* result = scratch + raw.slots() * stride;
      raw.block(x, scratch, stride, s, len, result);
      return reinterpret_cast<const typename Op::In*>(result);
    };
  };
  return cpu::reduce_engine::reduce_single_by_leaves<Op>(cpu, total, make_leaf);
}

// fused_reduce_all of a pass of raw_steps over raw_externals (`total` > 0).
void reduce_all_raw(CpuBackend& cpu, const RawPlan& raw, std::span<const Tensor> externals,
                    std::int64_t total, ReduceOp op, const Tensor& out) {
  const RawPlan::Externals x = RawPlan::data_of(externals);
  detail::dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (cpu::reduce_engine::kInexact<T>) {
      T* o = static_cast<T*>(out.raw_data());
      if (op == ReduceOp::Prod) {
        *o = reduce_raw<cpu::reduce_engine::ProdOp<T>>(cpu, raw, x, total);
      } else {
        *o = reduce_raw<cpu::reduce_engine::SumOp<T>>(cpu, raw, x, total);
        if (op == ReduceOp::Mean) *o = *o / static_cast<detail::real_of_t<T>>(total);
      }
    } else {
      fail(ErrorKind::DTypeMismatch, "fused_reduce_all", "no fused reduction for ",
           name(out.dtype()));
    }
  });
}

// The externals' dtypes (a RawPlan's).
SmallVector<DType, 8> dtypes_of(std::span<const Tensor> externals) {
  SmallVector<DType, 8> d;
  for (const Tensor& t : externals) d.push_back(t.dtype());
  return d;
}

// CpuBackend::fused_elementwise with `raw` the pass's raw plan when it runs
// raw over these externals (raw_steps and raw_externals), else nullptr.
void elementwise(CpuBackend& cpu, const FusedElementwise& pass, const RawPlan* raw,
                 std::span<const Tensor> externals, std::int64_t block, const Tensor& out) {
  const std::int64_t total = out.numel();
  if (total == 0) return;
  // Buffers no longer than the data: a 4-element pass allocates 4-element slots.
  block = std::min(block, total);
  if (raw) {
    run_raw(cpu, *raw, externals, total, block, out);
  } else {
    run_cpu(cpu, pass, externals, out.shape(), total, block, out);
  }
}

// CpuBackend::fused_reduce_all over `total` elements, `raw` as for
// elementwise().
void reduce_all(CpuBackend& cpu, const FusedElementwise& pass, const RawPlan* raw,
                std::span<const Tensor> externals, std::span<const std::int64_t> shape,
                std::int64_t total, ReduceOp op, std::int64_t block, const Tensor& out) {
  if (raw && total > 0) return reduce_all_raw(cpu, *raw, externals, total, op, out);
  // The pass's result materialised, then the reduction kernels.
  const Tensor values = cpu.empty(shape, out.dtype());
  elementwise(cpu, pass, raw, externals, block, values);
  const auto all = std::make_unique<bool[]>(shape.size());
  std::fill_n(all.get(), shape.size(), true);
  cpu.reduce(op, values, std::span<const bool>(all.get(), shape.size()), out);
}

// A checked pass prepared on the CPU backend: its raw plan (when its steps
// run raw) made once; a call checks only whether its externals run raw.
class CpuPreparedPass final : public PreparedFusedPass {
 public:
  CpuPreparedPass(CpuBackend& cpu, const CheckedFusedPass& pass)
      : cpu_(cpu), pass_(pass.pass()), reduce_(pass.reduce()) {
    if (raw_steps(pass_)) raw_.emplace(pass_, pass.external_dtypes());
  }

  Tensor run(std::span<const Tensor> externals, std::span<const std::int64_t> shape,
             std::int64_t block) const override {
    const DType dtype = pass_.steps.back().dtype;
    const RawPlan* raw = raw_ && raw_externals(externals, shape) ? &*raw_ : nullptr;
    if (reduce_) {
      Tensor out = cpu_.empty({}, dtype);
      // The shape is the checked pass shape (run()'s contract): no overflow.
      std::int64_t total = 1;
      for (std::int64_t d : shape) total *= d;
      reduce_all(cpu_, pass_, raw, externals, shape, total, *reduce_, block, out);
      return out;
    }
    Tensor out = cpu_.empty(shape, dtype);
    elementwise(cpu_, pass_, raw, externals, block, out);
    return out;
  }

 private:
  CpuBackend& cpu_;
  FusedElementwise pass_;
  std::optional<ReduceOp> reduce_;
  std::optional<RawPlan> raw_;  // holds pass_ by reference
};

}  // namespace

void CpuBackend::fused_elementwise(const FusedElementwise& pass, std::span<const Tensor> externals,
                                   std::int64_t block, const Tensor& out) {
  if (raw_steps(pass) && raw_externals(externals, out.shape())) {
    const RawPlan raw(pass, dtypes_of(externals).span());
    elementwise(*this, pass, &raw, externals, block, out);
  } else {
    elementwise(*this, pass, nullptr, externals, block, out);
  }
}

void CpuBackend::fused_reduce_all(const FusedElementwise& pass, std::span<const Tensor> externals,
                                  std::span<const std::int64_t> shape, ReduceOp op,
                                  std::int64_t block, const Tensor& out) {
  const std::int64_t total = shape_numel(shape, "fused_reduce_all");
  if (raw_steps(pass) && raw_externals(externals, shape)) {
    const RawPlan raw(pass, dtypes_of(externals).span());
    reduce_all(*this, pass, &raw, externals, shape, total, op, block, out);
  } else {
    reduce_all(*this, pass, nullptr, externals, shape, total, op, block, out);
  }
}

std::unique_ptr<PreparedFusedPass> CpuBackend::prepare_fused(const CheckedFusedPass& pass) {
  return std::make_unique<CpuPreparedPass>(*this, pass);
}

}  // namespace tenferro
