#pragma once
// Traced tier: graphs of TracedTensor nodes, built once and compiled to a
// Program (tenferro/ad/program.hpp), transformed with grad/vjp/jvp
// (tenferro/ad/transforms.hpp), prepared once and run many times.
//
// A TracedTensor is a cheap handle to one output of a graph node: the op, its
// inputs and the output's TensorMeta (dtype and a possibly symbolic shape).
// Building a node runs the op's inference, so dtype, rank and constant-extent
// errors surface at build time; requirements that depend on symbolic extents
// become shape constraints, checked when dimensions bind at run time.

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tenferro/ops/extension_op.hpp"
#include "tenferro/ops/primitives.hpp"

namespace tenferro {

class TracedTensor;

namespace detail {
struct TracedNode;
}  // namespace detail

class TracedTensor {
 public:
  /// Undefined (defined() == false); builders reject it.
  TracedTensor() = default;
  TracedTensor(std::shared_ptr<const detail::TracedNode> node, std::uint32_t index)
      : node_(std::move(node)), index_(index) {}

  bool defined() const { return node_ != nullptr; }
  const TensorMeta& meta() const;
  DType dtype() const { return meta().dtype; }
  const SymShape& shape() const { return meta().shape; }
  std::int64_t rank() const { return meta().rank(); }
  bool is_placeholder() const;
  /// The op producing this value (null for a placeholder).
  const OpPtr& op() const;

  const std::shared_ptr<const detail::TracedNode>& node() const { return node_; }
  std::uint32_t index() const { return index_; }
  /// Same node and output (identity, not structure).
  friend bool operator==(const TracedTensor& a, const TracedTensor& b) {
    return a.node_ == b.node_ && a.index_ == b.index_;
  }

 private:
  std::shared_ptr<const detail::TracedNode> node_;
  std::uint32_t index_ = 0;
};

namespace detail {
/// One graph node. Immutable once built; shared by every handle to it.
struct TracedNode {
  OpPtr op;  // null for a placeholder
  std::vector<TracedTensor> inputs;
  std::vector<TensorMeta> outputs;
  std::vector<ShapeConstraint> constraints;
  std::string label;  // placeholder name (for messages)
};
/// Builds a node for `op` on `inputs`: checks the count and definedness, runs
/// inference and checks the output count. Throws naming the op.
std::vector<TracedTensor> make_traced(const OpPtr& op, std::span<const TracedTensor> inputs);
TracedTensor make_traced1(const OpPtr& op, std::span<const TracedTensor> inputs);
}  // namespace detail

// ---- sources ---------------------------------------------------------------------

/// A program input. Extents may be constants or named sizes
/// ({SymDim::var("n"), 3}); named sizes bind from the actual input at run time.
TracedTensor placeholder(DType dtype, SymShape shape, std::string label = {});
/// A constant holding `value` (no copy; the program keeps the tensor).
TracedTensor constant(const Tensor& value);
/// A filled tensor of a (possibly symbolic) shape; holds no data.
TracedTensor traced_full(const SymShape& shape, Scalar value, DType dtype);
TracedTensor full_like(const TracedTensor& like, Scalar value);
TracedTensor zeros_like(const TracedTensor& like);
TracedTensor ones_like(const TracedTensor& like);
/// A rank-0 constant typed like a Python number mixed with `like` (real
/// scalars take a floating tensor's dtype, as in the eager tier).
TracedTensor scalar_like(const TracedTensor& like, Scalar value);

// ---- elementwise (NumPy broadcasting, dtype rules of backend/elementwise.hpp) ------
TracedTensor unary(UnaryOp op, const TracedTensor& x);
TracedTensor binary(BinaryOp op, const TracedTensor& a, const TracedTensor& b);
TracedTensor abs(const TracedTensor& x);
TracedTensor neg(const TracedTensor& x);
TracedTensor conj(const TracedTensor& x);
TracedTensor exp(const TracedTensor& x);
TracedTensor expm1(const TracedTensor& x);
TracedTensor log(const TracedTensor& x);
TracedTensor log1p(const TracedTensor& x);
TracedTensor sqrt(const TracedTensor& x);
TracedTensor rsqrt(const TracedTensor& x);
TracedTensor square(const TracedTensor& x);
TracedTensor reciprocal(const TracedTensor& x);
TracedTensor sin(const TracedTensor& x);
TracedTensor cos(const TracedTensor& x);
TracedTensor tan(const TracedTensor& x);
TracedTensor sinh(const TracedTensor& x);
TracedTensor cosh(const TracedTensor& x);
TracedTensor tanh(const TracedTensor& x);
TracedTensor asin(const TracedTensor& x);
TracedTensor acos(const TracedTensor& x);
TracedTensor atan(const TracedTensor& x);
TracedTensor sigmoid(const TracedTensor& x);
TracedTensor erf(const TracedTensor& x);
TracedTensor sign(const TracedTensor& x);
TracedTensor floor(const TracedTensor& x);
TracedTensor real(const TracedTensor& x);
TracedTensor imag(const TracedTensor& x);
TracedTensor isfinite(const TracedTensor& x);
TracedTensor exp2(const TracedTensor& x);
TracedTensor log2(const TracedTensor& x);
TracedTensor log10(const TracedTensor& x);
TracedTensor asinh(const TracedTensor& x);
TracedTensor acosh(const TracedTensor& x);
TracedTensor atanh(const TracedTensor& x);
TracedTensor erfc(const TracedTensor& x);
TracedTensor sgn(const TracedTensor& x);
TracedTensor ceil(const TracedTensor& x);
TracedTensor round(const TracedTensor& x);
TracedTensor trunc(const TracedTensor& x);
TracedTensor angle(const TracedTensor& x);
TracedTensor isnan(const TracedTensor& x);
TracedTensor logical_not(const TracedTensor& x);
// special functions (see backend/elementwise.hpp)
TracedTensor erfinv(const TracedTensor& x);
TracedTensor lgamma(const TracedTensor& x);
TracedTensor digamma(const TracedTensor& x);
/// 0 <= n <= kMaxPolygammaOrder, else InvalidArgument.
TracedTensor polygamma(std::int64_t n, const TracedTensor& x);
/// Multivariate log-gamma of dimension p >= 1 (PyTorch's mvlgamma):
/// sum_{i<p} lgamma(x - i/2) + p(p-1)/4 log(pi).
TracedTensor mvlgamma(const TracedTensor& x, std::int64_t p);
TracedTensor i0(const TracedTensor& x);
TracedTensor i0e(const TracedTensor& x);
TracedTensor i1(const TracedTensor& x);
TracedTensor i1e(const TracedTensor& x);
TracedTensor erfcx(const TracedTensor& x);
TracedTensor ndtr(const TracedTensor& x);
TracedTensor ndtri(const TracedTensor& x);
TracedTensor log_ndtr(const TracedTensor& x);
TracedTensor entr(const TracedTensor& x);
TracedTensor logit(const TracedTensor& x);
TracedTensor frac(const TracedTensor& x);
TracedTensor sinc(const TracedTensor& x);
/// {mantissa, exponent (i32, not differentiable)}.
std::pair<TracedTensor, TracedTensor> frexp(const TracedTensor& x);
TracedTensor add(const TracedTensor& a, const TracedTensor& b);
TracedTensor sub(const TracedTensor& a, const TracedTensor& b);
TracedTensor mul(const TracedTensor& a, const TracedTensor& b);
TracedTensor div(const TracedTensor& a, const TracedTensor& b);
TracedTensor pow(const TracedTensor& a, const TracedTensor& b);
TracedTensor maximum(const TracedTensor& a, const TracedTensor& b);
TracedTensor minimum(const TracedTensor& a, const TracedTensor& b);
TracedTensor atan2(const TracedTensor& a, const TracedTensor& b);
TracedTensor hypot(const TracedTensor& a, const TracedTensor& b);
TracedTensor copysign(const TracedTensor& a, const TracedTensor& b);
TracedTensor fmod(const TracedTensor& a, const TracedTensor& b);
TracedTensor remainder(const TracedTensor& a, const TracedTensor& b);
TracedTensor logical_and(const TracedTensor& a, const TracedTensor& b);
TracedTensor logical_or(const TracedTensor& a, const TracedTensor& b);
TracedTensor xlogy(const TracedTensor& a, const TracedTensor& b);
TracedTensor xlog1py(const TracedTensor& a, const TracedTensor& b);
TracedTensor logaddexp(const TracedTensor& a, const TracedTensor& b);
TracedTensor eq(const TracedTensor& a, const TracedTensor& b);
TracedTensor ne(const TracedTensor& a, const TracedTensor& b);
TracedTensor lt(const TracedTensor& a, const TracedTensor& b);
TracedTensor le(const TracedTensor& a, const TracedTensor& b);
TracedTensor gt(const TracedTensor& a, const TracedTensor& b);
TracedTensor ge(const TracedTensor& a, const TracedTensor& b);
TracedTensor where(const TracedTensor& cond, const TracedTensor& a, const TracedTensor& b);
TracedTensor clamp(const TracedTensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi);

TracedTensor operator+(const TracedTensor& a, const TracedTensor& b);
TracedTensor operator-(const TracedTensor& a, const TracedTensor& b);
TracedTensor operator*(const TracedTensor& a, const TracedTensor& b);
TracedTensor operator/(const TracedTensor& a, const TracedTensor& b);
TracedTensor operator-(const TracedTensor& a);
TracedTensor operator+(const TracedTensor& a, Scalar b);
TracedTensor operator-(const TracedTensor& a, Scalar b);
TracedTensor operator*(const TracedTensor& a, Scalar b);
TracedTensor operator/(const TracedTensor& a, Scalar b);
TracedTensor operator+(Scalar a, const TracedTensor& b);
TracedTensor operator-(Scalar a, const TracedTensor& b);
TracedTensor operator*(Scalar a, const TracedTensor& b);
TracedTensor operator/(Scalar a, const TracedTensor& b);

// ---- reductions (empty axes reduce nothing; the axis-free forms reduce all) --------
TracedTensor reduce(ReduceOp op, const TracedTensor& x, Axes axes, bool keepdim = false);
TracedTensor sum(const TracedTensor& x, Axes axes, bool keepdim = false);
TracedTensor sum(const TracedTensor& x);
TracedTensor prod(const TracedTensor& x, Axes axes, bool keepdim = false);
TracedTensor prod(const TracedTensor& x);
TracedTensor mean(const TracedTensor& x, Axes axes, bool keepdim = false);
TracedTensor mean(const TracedTensor& x);
TracedTensor max(const TracedTensor& x, Axes axes, bool keepdim = false);
TracedTensor max(const TracedTensor& x);
TracedTensor min(const TracedTensor& x, Axes axes, bool keepdim = false);
TracedTensor min(const TracedTensor& x);
TracedTensor all(const TracedTensor& x, Axes axes, bool keepdim = false);
TracedTensor all(const TracedTensor& x);
TracedTensor any(const TracedTensor& x, Axes axes, bool keepdim = false);
TracedTensor any(const TracedTensor& x);
TracedTensor logsumexp(const TracedTensor& x, Axes axes, bool keepdim = false);
TracedTensor logsumexp(const TracedTensor& x);
TracedTensor var(const TracedTensor& x, Axes axes, double correction = 1.0, bool keepdim = false);
TracedTensor std_dev(const TracedTensor& x, Axes axes, double correction = 1.0,
                     bool keepdim = false);
TracedTensor argmax(const TracedTensor& x, std::int64_t axis, bool keepdim = false);
TracedTensor argmin(const TracedTensor& x, std::int64_t axis, bool keepdim = false);

// ---- contractions ------------------------------------------------------------------
TracedTensor dot_general(const TracedTensor& lhs, const TracedTensor& rhs, const DotDims& dims);
/// [m, k, batch...] x [k, n, batch...] -> [m, n, batch...] (batch extents must
/// match); rank-1 operands act as row/column vectors as in the direct matmul.
TracedTensor matmul(const TracedTensor& a, const TracedTensor& b);

// ---- structural ------------------------------------------------------------------
TracedTensor permute(const TracedTensor& x, Axes perm);
TracedTensor transpose(const TracedTensor& x, std::int64_t a = 0, std::int64_t b = 1);
TracedTensor reshape(const TracedTensor& x, SymShape shape);
TracedTensor broadcast_in_dim(const TracedTensor& x, SymShape shape, Axes dims);
/// NumPy broadcast (right-aligned) to `shape`.
TracedTensor broadcast_to(const TracedTensor& x, const SymShape& shape);
TracedTensor slice(const TracedTensor& x, Shape start, Shape limit, Shape stride = {});
TracedTensor pad(const TracedTensor& x, Shape low, Shape high, Scalar value, Shape interior = {});
TracedTensor concatenate(std::span<const TracedTensor> xs, std::int64_t axis);
/// Joins tensors of one shape along a new axis.
TracedTensor stack(std::span<const TracedTensor> xs, std::int64_t axis);
TracedTensor reverse(const TracedTensor& x, Axes axes);
TracedTensor index_select(const TracedTensor& x, std::int64_t axis, const TracedTensor& index);
TracedTensor take_along_axis(const TracedTensor& x, const TracedTensor& index, std::int64_t axis);
TracedTensor scatter_add(const TracedTensor& x, std::int64_t axis, const TracedTensor& index,
                         const TracedTensor& src);
TracedTensor diagonal(const TracedTensor& x, std::int64_t offset = 0, std::int64_t axis1 = 0,
                      std::int64_t axis2 = 1);
TracedTensor diag_embed(const TracedTensor& x, std::int64_t offset = 0);
TracedTensor tril(const TracedTensor& x, std::int64_t k = 0);
TracedTensor triu(const TracedTensor& x, std::int64_t k = 0);
/// Lossless conversion (DTypeMismatch otherwise); cast converts lossily on request.
TracedTensor convert(const TracedTensor& x, DType dtype);
TracedTensor cast(const TracedTensor& x, DType dtype);

/// Applies any op to traced inputs: one TracedTensor per op output.
std::vector<TracedTensor> apply(const OpPtr& op, std::span<const TracedTensor> inputs);

namespace extension {
/// An extension op on traced inputs: one TracedTensor per declared output.
/// The input count and the metadata from op->infer() are checked now; its
/// shape constraints are checked when dimensions bind.
std::vector<TracedTensor> apply(const ExtensionOpPtr& op, std::span<const TracedTensor> inputs);
inline std::vector<TracedTensor> apply(const ExtensionOpPtr& op,
                                       std::initializer_list<TracedTensor> inputs) {
  return apply(op, std::span<const TracedTensor>(inputs.begin(), inputs.size()));
}
}  // namespace extension

// ---- checkpointing ------------------------------------------------------------------

using TracedFn = std::function<std::vector<TracedTensor>(std::span<const TracedTensor>)>;

/// Runs `fn` on `inputs` as one marked region: the forward pass keeps only the
/// region's outputs, and reverse mode recomputes the region's intermediates
/// from its inputs instead of storing them. Values and derivatives equal those
/// of fn(inputs). Values fn captures from outside become extra region inputs.
std::vector<TracedTensor> checkpoint(const TracedFn& fn, std::span<const TracedTensor> inputs);
/// Single-input, single-output form.
TracedTensor checkpoint(const std::function<TracedTensor(const TracedTensor&)>& fn,
                        const TracedTensor& x);

}  // namespace tenferro
