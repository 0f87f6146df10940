#pragma once
// A fused elementwise pass: a chain of elementwise steps over one output
// shape, run as one pass over memory, block by block. Intermediates live in
// small per-thread scratch buffers (one block each, reused by liveness), so
// they stay in cache; blocks split across the backend's threads. Each step
// computes exactly what the direct op of the same kind computes, so a fused
// pass and the unfused ops give identical values. The traced tier's program
// executor builds these from groups of elementwise primitives; a backend
// (CPU today) runs them.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tenferro/backend/elementwise.hpp"
#include "tenferro/backend/reduce.hpp"

namespace tenferro {

struct FusedElementwise {
  enum class Kind : unsigned char {
    Unary,    // unary(op, a)
    Binary,   // binary(op, a, b); operands already in the compute dtype
    Select,   // where(cond, a, b)
    Clamp,    // clamp(a, lo, hi)
    Convert,  // lossless conversion of a to `dtype`
    Fill,     // `value` (no operands)
  };
  struct Operand {
    bool external = true;     // an input of the pass, or an earlier step
    std::uint32_t index = 0;  // external input index, or step index
  };
  struct Step {
    Kind kind = Kind::Unary;
    UnaryOp unary = UnaryOp::Abs;
    BinaryOp binary = BinaryOp::Add;
    std::optional<Scalar> lo, hi;  // Clamp
    Scalar value;                  // Fill
    std::vector<Operand> operands;
    DType dtype = DType::F64;  // the step's result dtype
    int buffer = -1;           // scratch buffer; -1 only for the last step
  };
  std::vector<Step> steps;  // in order; the last one is the result
  int buffer_count = 0;     // scratch buffers the steps use
};

/// The largest block a fused pass takes (elements; scratch is 16 bytes each).
inline constexpr std::int64_t kMaxFusionBlock = std::int64_t{1} << 20;

/// Runs `pass` with every external broadcast (NumPy rules) to `shape`, in
/// blocks of at most `block` elements (the CPU backend takes fewer where a
/// block would not fit half its L1 data cache), and returns the last step's value as a fresh
/// compact tensor. `block` must lie in [1, kMaxFusionBlock]. A pass that is empty, refers to a
/// missing operand or buffer, or reads a later step is InvalidArgument; externals that do not
/// broadcast to `shape` are ShapeMismatch.
Tensor fused_elementwise(const FusedElementwise& pass, std::span<const Tensor> externals,
                         std::span<const std::int64_t> shape, Backend& backend,
                         std::int64_t block = 2048);

/// The pass's result reduced over every element, as a rank-0 tensor: what
/// reduce(op, fused_elementwise(pass, ...), all axes) gives, bit for bit,
/// without materialising the pass's result (the CPU backend computes it in
/// leaves of at most 1024 elements, the reduction's own pairwise order, so
/// `block` does not apply there). `op` is Sum, Prod or Mean and the last
/// step's dtype f32, f64, c64 or c128 (InvalidArgument / DTypeMismatch
/// otherwise); the other checks are fused_elementwise's.
Tensor fused_reduce_all(const FusedElementwise& pass, ReduceOp op,
                        std::span<const Tensor> externals, std::span<const std::int64_t> shape,
                        Backend& backend, std::int64_t block = 2048);

/// A pass checked once for externals of given dtypes (and, with `reduce`,
/// as a fused reduction): the structure and dtype checks of
/// fused_elementwise / fused_reduce_all happen when it is built, so a run
/// checks only what can change per call (the externals' count, dtypes,
/// shapes and placement, and `block`). The traced tier's prepared programs
/// hold their fused groups so. Construction throws what those functions
/// would; run() gives what they give, bit for bit.
class CheckedFusedPass {
 public:
  CheckedFusedPass(FusedElementwise pass, std::vector<DType> external_dtypes,
                   std::optional<ReduceOp> reduce = std::nullopt);

  const FusedElementwise& pass() const { return pass_; }
  /// The dtypes of the externals the pass was checked for.
  std::span<const DType> external_dtypes() const { return dtypes_; }
  std::optional<ReduceOp> reduce() const { return reduce_; }

  Tensor run(std::span<const Tensor> externals, std::span<const std::int64_t> shape,
             Backend& backend, std::int64_t block = 2048) const;
  /// What run() checks of a call, without running it (then a
  /// PreparedFusedPass of this pass may run it).
  void check(std::span<const Tensor> externals, std::span<const std::int64_t> shape,
             Backend& backend, std::int64_t block = 2048) const;

 private:
  FusedElementwise pass_;
  std::vector<DType> dtypes_;
  std::optional<ReduceOp> reduce_;
};

}  // namespace tenferro
