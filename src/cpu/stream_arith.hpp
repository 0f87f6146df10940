#pragma once
// Compact f32/f64 add, sub, mul and div whose output goes to memory with
// non-temporal (streaming) stores: for ops that move more bytes than the
// last-level cache holds, where a normal store first reads each output line
// from memory (read for ownership) and the output then evicts input lines the
// loop still streams through. binary_kernel takes this form when the op moves
// stream_threshold_bytes() or more and its output is not one of its inputs.
// Not installed.

#include <cstddef>
#include <cstdint>

#include "tenferro/backend/elementwise.hpp"

namespace tenferro::cpu {

/// Whether this build and processor run the streaming form (x86-64 with AVX2).
bool stream_arith_available();

/// The bytes an op must move (its operand runs read plus its output written)
/// for its output to be streamed: the size of the last-level cache (one
/// instance, from sysfs); 32 MiB where the system does not say. Measured on
/// the 2-core Zen 4 VM (32 MiB L3), output not an input, medians of 20
/// alternating rounds of plain loops: an add of 2^21 doubles (48 MiB moved)
/// 1.3-1.5x faster with streaming stores at 1T and 2T; of 2^20 doubles (24
/// MiB) 1.3-1.5x faster at 1T but 5-10% slower at 2T, where two cores read
/// the cached inputs faster than this VM's memory takes the streamed output
/// (about 26 GB/s); of 2^19 doubles, 12-18% slower. In place (the output is
/// an input) streaming was slower at every size up to 2^23 doubles: the
/// line is in the cache already, read as an input.
std::size_t stream_threshold_bytes();

/// o[i] = x op y with x = a[i] (or *a for every i when a_one) and y likewise,
/// for op Add, Sub, Mul or Div: the same IEEE operation per element as the
/// cached loops, so the same bits. Each 64-byte line of `o` that the loop
/// writes whole takes streaming stores (the ragged ends take normal ones),
/// and a store fence ends the call, so the results are ordered before
/// whatever the thread does next. `o` may be `a` or `b` (in place); other
/// overlaps are not allowed. Returns false, having written nothing, when the
/// form is not available, the op is another one, or `o` is not aligned to its
/// element size.
bool stream_arith(BinaryOp op, const double* a, bool a_one, const double* b, bool b_one, double* o,
                  std::int64_t n);
bool stream_arith(BinaryOp op, const float* a, bool a_one, const float* b, bool b_one, float* o,
                  std::int64_t n);

}  // namespace tenferro::cpu
