#pragma once
// Control flow in traced programs (cond, while_loop, scan) and fixed points
// with implicit differentiation (traced and eager).
//
// Each control-flow call traces its functions once into sub-programs and
// adds one node with bodies to the graph (ad/program/body_op.hpp): the
// bodies are compiled once with the program, prepared once with it (fused
// passes and named sizes included) and run as often as the data decides.
// Values a function captures from outside become extra inputs of the node,
// so a body never holds tensor data.
//
//   auto x = placeholder(f64, {SymDim::var("n")});
//   auto r = while_loop(
//       [](std::span<const TracedTensor> c) { return lt(sum(c[0] * c[0]), 100.0); },
//       [](std::span<const TracedTensor> c) { return std::vector{c[0] * 2.0}; }, {x});
//
// Derivatives: cond has jvp and vjp (each through the branch taken); scan
// has jvp and vjp (a reverse scan over stored carries, or over carries
// recomputed from checkpoints every ScanOptions::checkpoint_every steps);
// while_loop has forward mode only: reverse mode through a loop of unknown
// length is UnsupportedAdRule (use fixed_point for a loop that converges, or
// scan for one of known length). fixed_point differentiates its solution by
// the implicit function theorem, in both modes and to any order, without
// unrolling the iterations.

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "tenferro/ad/eager.hpp"
#include "tenferro/ad/traced.hpp"
#include "tenferro/core/list_ref.hpp"

namespace tenferro {

// ---- cond ------------------------------------------------------------------------------

/// then_fn(operands) when `pred` (a rank-0 bool) holds, else else_fn(operands).
/// Both functions are traced once on placeholders like the operands; only the
/// branch taken runs. Their results must agree in count, dtype and shape:
/// otherwise ShapeMismatch (or DTypeMismatch) naming the result.
std::vector<TracedTensor> cond(const TracedTensor& pred, const TracedFn& then_fn,
                               const TracedFn& else_fn, ListRef<TracedTensor> operands);

// ---- while_loop ------------------------------------------------------------------------

/// A loop predicate: the carries in, a rank-0 bool out.
using TracedPredicate = std::function<TracedTensor(std::span<const TracedTensor>)>;

struct WhileOptions {
  /// More iterations than this is NoConvergence naming the count (negative:
  /// no limit).
  std::int64_t max_iterations = -1;
};

/// carry = init; while (cond_fn(carry)) carry = body(carry); returns carry.
/// body must return as many carries as `init`, each of the same dtype and
/// shape: a carry that would change is refused now (ShapeMismatch or
/// DTypeMismatch naming the carry). A run keeps one set of carries: nothing
/// of an iteration outlives it.
std::vector<TracedTensor> while_loop(const TracedPredicate& cond_fn, const TracedFn& body,
                                     ListRef<TracedTensor> init, const WhileOptions& options = {});

// ---- scan ------------------------------------------------------------------------------

/// One step of a scan: the new carries and this step's outputs.
struct ScanStep {
  std::vector<TracedTensor> carry;
  std::vector<TracedTensor> ys;
};
/// A scan body: the carries and this step's slices of the scanned inputs.
using ScanFn =
    std::function<ScanStep(std::span<const TracedTensor> carry, std::span<const TracedTensor> x)>;

struct ScanOptions {
  /// Steps run from the last slice to the first (the ys are still stacked
  /// in slice order).
  bool reverse = false;
  /// Reverse mode keeps the carry of every k-th step only and recomputes the
  /// steps between (memory O(n / k + k) carries instead of O(n)); 0 or 1
  /// keeps every carry. That reverse pass is first order only: its own
  /// derivatives (an HVP through it) are UnsupportedAdRule; use 0 for a scan
  /// differentiated twice.
  std::int64_t checkpoint_every = 0;
  /// The number of steps when `xs` is empty (ignored otherwise; negative
  /// with no xs is InvalidArgument).
  std::int64_t length = -1;
};

struct ScanResult {
  std::vector<TracedTensor> carry;
  std::vector<TracedTensor> ys;
};

/// for t in 0..n-1: (carry, y_t) = body(carry, xs[..., t]). Each scanned input
/// is sliced along its last axis (column-major: slices are contiguous), all
/// with the same extent n (symbolic extents allowed); each output y is
/// stacked along a new last axis. Carries that would change dtype or shape
/// are refused as in while_loop.
ScanResult scan(const ScanFn& body, ListRef<TracedTensor> init, ListRef<TracedTensor> xs,
                const ScanOptions& options = {});

// ---- fixed points ----------------------------------------------------------------------

/// How a fixed point's derivatives solve their linear system (I - df/dx) dx = c
/// (or its transpose): by iterating the linearised map (Iterate: memory O(state),
/// converges only where df/dx is a contraction at x*), or by building df/dx as a
/// dense matrix from one jvp (vjp) of f per unknown and eliminating with partial
/// pivoting (Direct: n jvps and O(n^3) work for n unknowns, exact in one step,
/// any df/dx without the eigenvalue 1). A complex element counts as two real
/// unknowns. Auto: Direct for at most kFixedPointDirectAuto unknowns with constant
/// extents, else Iterate.
enum class FixedPointLinearSolver : unsigned char { Iterate, Direct, Auto };
/// Auto's bound on the unknowns of a direct solve.
inline constexpr std::int64_t kFixedPointDirectAuto = 64;
/// Direct's bound (more is InvalidArgument: the graph holds one jvp per unknown).
inline constexpr std::int64_t kFixedPointDirectMax = 1024;

struct FixedPointOptions {
  /// Converged when max |f(x) - x| <= tol * max(1, max |x|) over every
  /// state tensor (the max norm of the update, relative above 1).
  double tol = 1e-10;
  /// Iterations at most (at least 1).
  std::int64_t max_iter = 1000;
  /// Not converged after max_iter: NoConvergence naming the residual when
  /// true; when false the last iterate is returned and the caller reads
  /// FixedPointResult::converged and ::residual.
  bool throw_on_failure = true;
  /// Tolerance and iteration cap of the linear systems the derivatives solve
  /// (negative: tol and max_iter above).
  double linear_tol = -1;
  std::int64_t linear_max_iter = -1;
  /// Direct needs constant extents (else InvalidArgument); linear_tol and
  /// linear_max_iter apply to Iterate only.
  FixedPointLinearSolver linear_solver = FixedPointLinearSolver::Auto;
};

/// f(x, params): the new state from the state and the parameters.
using TracedFixedPointFn = std::function<std::vector<TracedTensor>(
    std::span<const TracedTensor> x, std::span<const TracedTensor> params)>;

template <class T>
struct FixedPointResult {
  std::vector<T> value;  ///< x* with f(x*, params) = x* (within tol)
  T iterations;          ///< i64 rank 0: iterations run
  T residual;            ///< f64 rank 0: max |f(x) - x| at the last iteration
  T converged;           ///< bool rank 0
};

/// Iterates x <- f(x, params) from x0 until the update is below tol, in one
/// traced node (a while loop). Its derivatives treat x* as the solution of
/// x = f(x, params) (implicit function theorem): the jvp solves
/// (I - df/dx) dx = df/dp dp and the vjp (I - df/dx)^T lambda = ybar, so
/// memory does not grow with the iteration count and x0 gets no derivative.
/// Iterated (FixedPointOptions::linear_solver), the linear solves converge
/// where the forward iteration does (a contraction at x*); one that does not
/// is NoConvergence. Derivatives of any order: the iterated solves are fixed
/// points themselves, the direct ones differentiable ops. f must keep each
/// state tensor's dtype and shape.
FixedPointResult<TracedTensor> fixed_point(const TracedFixedPointFn& f, ListRef<TracedTensor> x0,
                                           ListRef<TracedTensor> params,
                                           const FixedPointOptions& options = {});
/// Single-state form: the solution alone.
TracedTensor fixed_point(
    const std::function<TracedTensor(const TracedTensor&, std::span<const TracedTensor>)>& f,
    const TracedTensor& x0, ListRef<TracedTensor> params, const FixedPointOptions& options = {});

/// f(x, params) on eager tensors.
using EagerFixedPointFn = std::function<std::vector<EagerTensor>(
    std::span<const EagerTensor> x, std::span<const EagerTensor> params)>;

/// The eager tier's fixed point: iterates f without recording, then, when a
/// parameter requires grad, records one op whose derivatives are the implicit
/// ones above (f is traced once at x* for them: it must be a function of its
/// arguments, with the same ops for any values). backward(), grad, vjp, jvp
/// and their compositions (an HVP) work through it.
FixedPointResult<EagerTensor> fixed_point(const EagerFixedPointFn& f, ListRef<EagerTensor> x0,
                                          ListRef<EagerTensor> params,
                                          const FixedPointOptions& options = {});
EagerTensor fixed_point(
    const std::function<EagerTensor(const EagerTensor&, std::span<const EagerTensor>)>& f,
    const EagerTensor& x0, ListRef<EagerTensor> params, const FixedPointOptions& options = {});

}  // namespace tenferro
