#pragma once
// The abstract emitter AD rules write to. Its values are concrete tensors in
// the eager tier and graph nodes in the traced tier, so every rule is written
// once and serves eager backward, traced transforms and higher order (a rule
// emitting through a recording emitter is itself differentiable).

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tenferro/ops/primitives.hpp"

namespace tenferro::ad {

/// A value inside one emitter (an index into its table). Default: invalid.
struct Val {
  std::int64_t id = -1;
  bool valid() const { return id >= 0; }
};

/// A possibly-absent tangent or cotangent: nullopt is a symbolic zero, never
/// a materialised buffer.
using MaybeVal = std::optional<Val>;

class Emitter {
 public:
  virtual ~Emitter() = default;

  /// Applies `op` to `inputs`, returning one value per op output.
  virtual std::vector<Val> emit(const OpPtr& op, std::span<const Val> inputs) = 0;
  /// dtype and (possibly symbolic) shape of a value.
  virtual TensorMeta meta(Val v) const = 0;
  /// The dtype alone (meta(v).dtype; emitters override it to skip the shape).
  virtual DType dtype_of(Val v) const { return meta(v).dtype; }
  /// Whether v's shape is `shape` (meta(v).shape == shape; emitters whose
  /// values have concrete shapes override it to compare without building one).
  virtual bool has_shape(Val v, const SymShape& shape) const { return meta(v).shape == shape; }

  // ---- conveniences over emit() (all build core primitives) ----------------
  /// emit() of a one-output op (Internal error otherwise). Virtual so an
  /// emitter can apply such ops without the output list.
  virtual Val emit1(const OpPtr& op, std::span<const Val> inputs);
  Val unary(UnaryOp op, Val x);
  Val binary(BinaryOp op, Val a, Val b);
  Val add(Val a, Val b) { return binary(BinaryOp::Add, a, b); }
  Val sub(Val a, Val b) { return binary(BinaryOp::Sub, a, b); }
  Val mul(Val a, Val b) { return binary(BinaryOp::Mul, a, b); }
  Val div(Val a, Val b) { return binary(BinaryOp::Div, a, b); }
  Val neg(Val x) { return unary(UnaryOp::Neg, x); }
  Val conj(Val x) { return unary(UnaryOp::Conj, x); }
  /// x * value, where value is a scalar constant of x's dtype.
  Val scale(Val x, Scalar value);
  /// A rank-0 constant of `dtype`.
  Val scalar(Scalar value, DType dtype);
  /// A constant filled with `value`, of the given (possibly symbolic) shape.
  Val full(const SymShape& shape, Scalar value, DType dtype);
  Val zeros_like(Val x);
  Val ones_like(Val x);
  Val select(Val cond, Val a, Val b);
  Val convert(Val x, DType dtype, bool lossy = false);
  /// Sum over `axes` (keepdim as given).
  Val sum(Val x, Axes axes, bool keepdim = false);
  Val reshape(Val x, SymShape shape);
  Val broadcast_in_dim(Val x, SymShape shape, Axes dims);
  /// NumPy-broadcasts x (right-aligned) to `shape`.
  Val broadcast_to(Val x, const SymShape& shape);
  /// Reverse of broadcast_to: sums x (of a broadcast shape) down to `shape`.
  Val sum_to(Val x, const SymShape& shape);
  Val transpose(Val x, Axes perm);
  Val dot_general(Val a, Val b, DotDims dims);
  /// Real part (as a real value) of a complex value; x itself when real.
  Val real(Val x);
  /// Complex value with the given real and imaginary parts (same real dtype).
  Val complex(Val re, Val im);
  /// x converted to `dtype`, taking the real part when going complex -> real
  /// (used to return cotangents in the dtype of the primal).
  Val to_dtype(Val x, DType dtype);
};

}  // namespace tenferro::ad
