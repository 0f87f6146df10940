#pragma once
// Streaming (non-temporal) stores for kernels whose output is too large for
// the cache: a normal store first reads each output line from memory (read
// for ownership), and the output then evicts input lines the loop still
// streams through. A streaming store writes whole 64-byte lines straight to
// memory. Not installed.
//
// streamed_blocks() gives any elementwise loop this form: the loop computes
// a 4 KiB block into a buffer on the stack (in L1), and the block goes to the
// output with streaming stores. The compact f32/f64 add, sub, mul and div
// have a form of their own that streams from the registers
// (cpu/stream_arith.hpp).

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace tenferro::cpu {

/// Whether this processor has streaming stores (x86-64: SSE2, the baseline).
bool stream_stores_available();

/// The bytes an op must move (its operand runs read plus its output written)
/// for the register form of compact add, sub, mul and div
/// (cpu/stream_arith.hpp) to stream its output when it runs on `threads`
/// threads: the size of the last-level cache (one instance, from sysfs; 32
/// MiB where the system does not say), three quarters of it for one thread.
/// Measured on the 2-core Zen 4 VM (32 MiB L3), output not an input, medians
/// of alternating rounds of plain loops: an add of 2^21 doubles (48 MiB
/// moved) 1.3-1.5x faster with streaming stores at 1T and 2T; of 2^20
/// doubles (24 MiB) 1.3-1.7x faster at 1T (a chain of eight such adds 1.6x)
/// but 5-20% slower at 2T, where two cores read the cached inputs faster
/// than this VM's memory takes the streamed output (about 26 GB/s; chains
/// level); x * c of 2^20 doubles (16 MiB) 10% slower at 1T; of 2^21 (32
/// MiB) 1.7x faster at 1T, 1.2x at 2T; of 2^19 doubles 12-18% slower (one
/// run; 15% faster in another). One thread reads cached inputs at one core's
/// share of the cache's bandwidth, which an output streamed to memory keeps
/// up with from a smaller size. In place (the output is an input) streaming
/// was slower at every size up to 2^23 doubles: the line is in the cache
/// already, read as an input.
std::size_t stream_threshold_bytes(int threads);

/// Whether an op that moves `moved_bytes` (operands read plus output
/// written) into an output that is none of its inputs streams its output
/// through streamed_blocks: streaming stores available and at least 1.5x
/// the last-level cache moved (stream_threshold_bytes at two threads). The blocks cost more than
/// the register form: neg and abs of 2^21 doubles (32 MiB moved, the cache's size) were 1.2x faster
/// streamed at 1T but 1.5x slower at 2T, where inputs and output stay in the cache between calls;
/// of 2^22 doubles 1.1-1.2x faster at both (in-process A/B, medians of 16 rounds).
bool streams_output(std::size_t moved_bytes);

/// Orders the streaming stores before whatever the thread does next (the
/// pool's join, another thread's read).
void stream_fence();

/// memcpy(dst, src, bytes) for buffers that do not overlap, any alignment:
/// the whole 64-byte lines of `dst` with streaming stores (the source read
/// unaligned), its ragged ends with memcpy; no fence (see stream_fence). Only
/// where stream_stores_available(). glibc's memcpy streams only above a
/// share of the cache it takes from sysconf, which on the Zen 4 VM reports
/// the whole socket's 320 MiB L3, so it never streams there: a copy of 2^22
/// doubles took 2.3-2.7 ms as memcpy and 1.7-1.9 ms streamed at 1T, 1.6-2.0
/// against 1.3-1.4 ms at 2T (alternating rounds, one process); of 2^21
/// doubles (32 MiB moved) 1.2x faster at 1T but 1.4x slower at 2T, of 2^20
/// 1.4-2x slower (cpu::copy streams from streams_output's size).
void stream_copy(const void* src, void* dst, std::size_t bytes);

namespace detail_stream {
/// The address modulo 4 KiB, a multiple of 64, for a 4 KiB block whose
/// addresses lie farthest (modulo 4 KiB) from those of the given streams.
std::size_t block_residue(const std::uintptr_t* streams, int count);
}  // namespace detail_stream

/// Writes out[0, n) as `body(dst, i, m)` computes it (dst[k] = element i + k
/// for k < m): the whole 64-byte lines of `out` into a 4 KiB block on the
/// stack, each block then streamed to `out`; the ragged ends of `out`
/// directly. Ends with stream_fence(). `out` must be aligned to its element
/// size, and the caller must have checked stream_stores_available().
///
/// `in` are the inputs the body reads at element 0 (at element i: in + i).
/// The block sits where its addresses, modulo 4 KiB, keep away from theirs
/// and the output's: a load whose low 12 address bits match a store still in
/// flight waits for it (4K aliasing), and the 2 KiB block first tried made
/// neg of 2^22 doubles 0.96x the cached loop in one stack layout and 1.1x in
/// others. Inputs with smaller elements than the output drift against the
/// block and are not considered.
template <class Out, class Body, class... In>
void streamed_blocks(Out* out, std::int64_t n, const Body& body, const In*... in) {
  static_assert(64 % sizeof(Out) == 0, "elements must tile a 64-byte line");
  constexpr auto kSize = static_cast<std::int64_t>(sizeof(Out));
  constexpr std::int64_t kLine = 64 / kSize;
  constexpr std::int64_t kBlock = 4096 / kSize;
  const auto misaligned = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(out) % 64);
  std::int64_t i = std::min<std::int64_t>(n, (64 - misaligned) % 64 / kSize);
  if (i > 0) body(out, std::int64_t{0}, i);
  if (n - i >= kLine) {
    std::uintptr_t streams[1 + sizeof...(In)] = {reinterpret_cast<std::uintptr_t>(out + i)};
    int count = 1;
    ((sizeof(In) >= sizeof(Out) ? void(streams[count++] = reinterpret_cast<std::uintptr_t>(in + i))
                                : void()),
     ...);
    alignas(64) unsigned char space[2 * 4096];
    const std::size_t at = detail_stream::block_residue(streams, count);
    Out* const block =
        reinterpret_cast<Out*>(space + (at - reinterpret_cast<std::uintptr_t>(space)) % 4096);
    while (n - i >= kLine) {
      const std::int64_t m = std::min(kBlock, (n - i) / kLine * kLine);
      body(block, i, m);
      stream_copy(block, out + i, static_cast<std::size_t>(m * kSize));
      i += m;
    }
  }
  if (i < n) body(out + i, i, n - i);
  stream_fence();
}

}  // namespace tenferro::cpu
