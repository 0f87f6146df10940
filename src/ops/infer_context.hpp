#pragma once
// Internal to the ops layer: the pieces the kinds' inference hooks are built
// from (src/ops/prim_*.cpp), defined in infer_context.cpp.

#include <string>

#include "tenferro/ops/primitives.hpp"

namespace tenferro::detail {

/// State of one inference: the primitive's name (for errors), its inputs and
/// the result being built.
struct InferContext {
  std::string op;
  std::span<const TensorMeta> in;
  InferenceResult result;

  /// Appends a constraint `a == b` unless the two are structurally equal;
  /// two different constants are a ShapeMismatch right away.
  void require_equal(const SymDim& a, const SymDim& b, const std::string& what);
  /// Records `a <= b` (as min(a, b) == a); constants are checked now and a
  /// violation is `kind`.
  void require_at_most(const SymDim& a, const SymDim& b, const std::string& what, ErrorKind kind);
  /// Adds the single output.
  /// Declares an output; a constant shape whose size overflows is refused here,
  /// naming the op, for every primitive alike.
  void emit(DType dtype, SymShape shape) {
    check_constant_size(shape);
    result.outputs.push_back({dtype, std::move(shape)});
  }
  void check_constant_size(const SymShape& shape) const;
};

/// Broadcasts two extents (NumPy rules); an undecidable pair yields a
/// constraint and the constant side when there is one.
SymDim broadcast_dim(InferContext& ctx, const SymDim& a, const SymDim& b, const std::string& what);
SymShape broadcast_shape(InferContext& ctx, const SymShape& a, const SymShape& b);

/// normalize_axis with the primitive's name in the error.
std::int64_t normalize_axis_for(const InferContext& ctx, std::int64_t axis, std::int64_t rank);
/// Normalised axes, rejecting out-of-range (AxisOutOfBounds) and repeated
/// (DuplicateAxis) entries.
Axes normalize_axes_for(const InferContext& ctx, std::span<const std::int64_t> axes,
                        std::int64_t rank);
/// Rejects constant negative extents of a parameter shape (InvalidArgument).
void require_nonnegative(const std::string& op, const SymShape& shape, const char* what);
/// Rejects fill values that have no equivalent in `dtype` (non-finite or
/// out-of-range floats for integer tensors): converting them is undefined.
void check_fill_value(const std::string& op, const Scalar& value, DType dtype);
/// "[1, 2, 3]".
std::string axes_to_string(std::span<const std::int64_t> axes);
/// "axis 3".
std::string axis_text(std::int64_t d);

/// The single input of a one-input kind.
inline const TensorMeta& only_input(const InferContext& ctx) {
  return ctx.in[0];
}
/// Shape after reducing the (normalised) `axes`.
SymShape reduced_shape(const SymShape& shape, const Axes& axes, bool keepdim);
/// DTypeMismatch for complex `x`, with `why` as the advice.
void require_no_complex(const InferContext& ctx, DType x, const char* why);
/// max/min/argmax/argmin have no identity: a constant zero extent on a
/// reduced axis is an error (symbolic extents are checked by the kernel).
void require_nonempty(const InferContext& ctx, const SymShape& shape, const Axes& axes);
/// `list` has one entry per axis of a rank-`rank` tensor (RankMismatch).
void require_entries(const InferContext& ctx, std::span<const std::int64_t> list, std::int64_t rank,
                     const char* what);
/// An index operand is i32 or i64 (DTypeMismatch).
void require_index_dtype(const InferContext& ctx, const TensorMeta& index);
/// `other` has x's rank (RankMismatch).
void require_same_rank(const InferContext& ctx, const TensorMeta& x, const TensorMeta& other,
                       const char* what);
/// x has rank >= `rank` (RankMismatch, naming the `layout` it needs).
void require_rank_at_least(const InferContext& ctx, const TensorMeta& x, std::int64_t rank,
                           const char* layout);

}  // namespace tenferro::detail
