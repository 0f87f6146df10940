#pragma once
// Compact f32/f64 add, sub, mul and div whose output goes to memory with
// non-temporal (streaming) stores: for ops that move well beyond the
// last-level cache, where a normal store first reads each output line
// from memory (read for ownership) and the output then evicts input lines the
// loop still streams through. binary_kernel takes this form when the op moves
// stream_threshold_bytes(threads) or more (cpu/stream_store.hpp) and its output is
// not one of its inputs. Not installed.

#include <cstddef>
#include <cstdint>

#include "tenferro/backend/elementwise.hpp"

namespace tenferro::cpu {

/// Whether this build and processor run the streaming form (x86-64 with AVX2).
bool stream_arith_available();

/// o[i] = x op y with x = a[i] (or *a for every i when a_one) and y likewise,
/// for op Add, Sub, Mul or Div: the same IEEE operation per element as the
/// cached loops, so the same bits. Each 64-byte line of `o` that the loop
/// writes whole takes streaming stores (the ragged ends take normal ones),
/// and a store fence ends the call (unless `fence` is false: then the caller
/// must call stream_fence() before the results are read elsewhere), so the
/// results are ordered before whatever the thread does next. `o` may be `a` or `b` (in place);
/// other overlaps are not allowed. Returns false, having written nothing, when the form is not
/// available, the op is another one, or `o` is not aligned to its element size.
bool stream_arith(BinaryOp op, const double* a, bool a_one, const double* b, bool b_one, double* o,
                  std::int64_t n, bool fence = true);
bool stream_arith(BinaryOp op, const float* a, bool a_one, const float* b, bool b_one, float* o,
                  std::int64_t n, bool fence = true);

/// o[i] = m op2 c[i], or c[i] op2 m when `mid_right`, with m = a[i] op1 b[i]
/// rounded to the type: binary2_contiguous's values (the two IEEE
/// operations, nothing contracted) with the output streamed as stream_arith
/// does, fence included (or not). a, b and c are runs; `o` may be one of them, other
/// overlaps are not allowed. False, nothing written, as for stream_arith.
bool stream_arith2(BinaryOp op1, BinaryOp op2, bool mid_right, const double* a, const double* b,
                   const double* c, double* o, std::int64_t n, bool fence = true);
bool stream_arith2(BinaryOp op1, BinaryOp op2, bool mid_right, const float* a, const float* b,
                   const float* c, float* o, std::int64_t n, bool fence = true);

}  // namespace tenferro::cpu
