#pragma once
// Norms and the linalg ops composed of other ops (docs/linalg.md):
// vector_norm, matrix_norm, norm, vecdot, vander, multi_dot, cross,
// matrix_power, matrix_exp, pinv, lstsq, cond, tensorinv, tensorsolve. Most
// are compositions of the core op surface (tenferro/ad/ops.hpp) and of the
// other linalg functions, written once for the eager and the traced tier, so
// AD (first and higher order) comes from the composed ops. Where a
// composition has a kink, it is guarded so the derivative is PyTorch's
// (linalg_vector_norm_backward / norm_jvp in FunctionsManual.cpp).
// matrix_exp and pinv are extension ops with their own kernels and rules.
//
// Axes are OUR axes (column-major, batch axes last): PyTorch's dim d of a
// rank-r tensor is our axis r - 1 - d, so torch's default dim=-1 is our axis 0
// and a matrix's rows and columns (torch dims (-2, -1)) are our axes (0, 1).
// Negative axes count from the end (-1 is the last axis). Every result of a
// norm is real (f32 for f32/c64, f64 for f64/c128).

#include <optional>
#include <string_view>
#include <vector>

#include "tenferro/linalg/triangular.hpp"

namespace tenferro::linalg {

/// The ord-norm of x over `dims` (empty: every axis), torch.linalg.vector_norm:
///   ord = 0: the number of non-zero entries;  ord = inf: max |x|;
///   ord = -inf: min |x|;  other ord: (sum |x|^ord)^(1/ord) (ord < 0 too).
/// `keepdim` keeps the reduced axes with extent 1. Input f32/f64/c64/c128
/// (else DTypeMismatch); an axis out of range is AxisOutOfBounds, a repeated
/// one DuplicateAxis; a NaN ord is InvalidArgument; ord < 0 or ord = inf over
/// an empty reduction (no identity) is InvalidArgument, as in PyTorch.
/// AD (PyTorch's conventions): ord 0 has a zero derivative; ord 1 and the
/// +-inf norms use sgn(x) (0 at x = 0) and split the gradient evenly between
/// tied extrema; ord = 2 and ord > 1 give 0 where the norm is 0; ord < 1
/// gives 0 for the entries that are 0.
template <LinalgTensor T>
T vector_norm(const T& x, double ord = 2.0, Axes dims = {}, bool keepdim = false);

/// Matrix norm of the matrices spanned by `dims` = {row axis, column axis}
/// (default {0, 1}: the [m, n, batch...] layout), torch.linalg.matrix_norm:
///   "fro": sqrt(sum |a_ij|^2);  1 / -1: max / min column sum of |a|;
///   inf / -inf: max / min row sum of |a|;
///   "nuc": the sum of the singular values; 2 / -2: the largest / smallest
///   singular value (svdvals; empty matrices are InvalidArgument for +-2).
/// An ord other than these is InvalidArgument; fewer than two
/// axes is RankMismatch; dims must be two distinct axes (AxisOutOfBounds /
/// DuplicateAxis / InvalidArgument). A max or min over an empty set of
/// columns or rows is InvalidArgument, as in PyTorch. AD: from the
/// composition (ties in the max/min split the gradient evenly; "nuc" and +-2
/// through svdvals' rules, which need distinct singular values to be smooth,
/// like PyTorch's).
template <LinalgTensor T>
T matrix_norm(const T& a, double ord, Axes dims = {0, 1}, bool keepdim = false);
/// The string forms: "fro" (the default) and "nuc".
template <LinalgTensor T>
T matrix_norm(const T& a, std::string_view ord = "fro", Axes dims = {0, 1}, bool keepdim = false);

/// torch.linalg.norm: a vector norm or a matrix norm depending on ord and dims.
///   dims with one axis: vector_norm(x, ord or 2, dims);
///   dims with two axes: matrix_norm(x, ord or "fro", dims);
///   no dims, no ord: the 2-norm of every entry (x flattened);
///   no dims, an ord: x must be 1-D (vector_norm) or 2-D (matrix_norm over
///   axes {0, 1}), else RankMismatch.
/// Other dims sizes are InvalidArgument. A string ord needs a matrix.
template <LinalgTensor T>
T norm(const T& x, std::optional<double> ord = std::nullopt,
       std::optional<Axes> dims = std::nullopt, bool keepdim = false);
template <LinalgTensor T>
T norm(const T& x, std::string_view ord, std::optional<Axes> dims = std::nullopt,
       bool keepdim = false);

/// sum(conj(x) * y) along `dim` (default 0: torch's dim=-1),
/// torch.linalg.vecdot. x and y have the same floating or complex dtype
/// (DTypeMismatch otherwise) and broadcast like any binary op of the tier
/// (right-aligned on our shapes, i.e. batch axes align); the result has the
/// broadcast shape without `dim`.
template <LinalgTensor T>
T vecdot(const T& x, const T& y, std::int64_t dim = 0);

// ---- products ------------------------------------------------------------------------

/// The Vandermonde matrix of x, torch.linalg.vander: x [n, batch...] gives
/// V [n, N, batch...] with V[i, j] = x[i]^j (increasing powers, column 0 all
/// ones); N defaults to n. A rank-0 x is a vector of one entry (V is [1, N]).
/// (torch's (*, n) -> (*, n, N) is our [n, *] -> [n, N, *].) N < 2 is
/// InvalidArgument, as in PyTorch. f32/f64/c64/c128.
/// AD: from the products x * x * ... (the derivative of x^j is j x^(j-1)).
template <LinalgTensor T>
T vander(const T& x, std::optional<std::int64_t> N = std::nullopt);

/// The product of two or more matrices, parenthesised to minimise the
/// multiply count (the matrix-chain dynamic programme over the constant
/// extents; left to right when an extent is symbolic), torch.linalg.multi_dot.
/// The first operand may be 1-D (a row vector [k]), the last 1-D (a column
/// vector [k]); the others are 2-D [m, k] (no batch axes), with matching
/// inner extents (ShapeMismatch) and one dtype (DTypeMismatch). The result
/// drops the vector axes like PyTorch (both 1-D: rank 0). Fewer than two
/// operands is InvalidArgument. AD: from the matmuls.
template <LinalgTensor T>
T multi_dot(const std::vector<T>& matrices);

/// The cross product of 3-vectors along `dim` (default 0: torch's dim=-1),
/// torch.linalg.cross: no conjugation for complex inputs. a and b have the
/// same rank (RankMismatch; pad with unit axes first) and extent 3 along
/// `dim` (ShapeMismatch); other axes broadcast like the tier's binary ops.
/// AD: from the products (linear in each operand).
template <LinalgTensor T>
T cross(const T& a, const T& b, std::int64_t dim = 0);

/// A^n for square A [n, n, batch...] by repeated squaring,
/// torch.linalg.matrix_power. n = 0 gives the identity (zero derivative, no
/// dependence on A); n < 0 is matrix_power(inv(A), -n) (singular A is
/// Singular naming the batch index; floating or complex A only).
/// AD: from the matmuls (and inv's rules).
template <LinalgTensor T>
T matrix_power(const T& a, std::int64_t n);

/// The matrix exponential of square A [n, n, batch...], torch.linalg.matrix_exp:
/// scaling and squaring with the [13/13] Padé approximant (Higham 2005), one
/// extension op with a LAPACK kernel. Non-finite input gives NaN.
/// f32/f64/c64/c128 (DTypeMismatch), square (ShapeMismatch), rank >= 2
/// (RankMismatch). AD: the Fréchet derivative through the block identity
/// exp([[A, E], [0, A]]) = [[exp(A), L(A, E)], [0, exp(A)]]: jvp L(A, dA),
/// vjp L(A^H, G) (PyTorch's linalg_matrix_exp_differential); both emit
/// matrix_exp again, so every order works. Derivatives need constant extents.
template <LinalgTensor T>
T matrix_exp(const T& a);
Tensor matrix_exp(const Tensor& a, Backend& backend);

// ---- pseudo-inverse, least squares, condition numbers, tensor solves -------------------

/// The Moore-Penrose pseudo-inverse of A [m, n, batch...] -> [n, m, batch...],
/// torch.linalg.pinv: singular values (or, with `hermitian`, eigenvalues by
/// modulus; A then square and only its lower triangle read) at or below
/// max(atol, rtol * largest) are treated as zero. rtol defaults to
/// eps(dtype) * max(m, n), or to 0 when only atol > 0 is given, as in
/// PyTorch. Negative or NaN tolerances are InvalidArgument; non-finite
/// input is NoConvergence naming the batch index. One extension op (gesdd /
/// heevd). AD: PyTorch's pinv_jvp and pinv_backward (valid where the rank is
/// locally constant; with a cutoff that drops non-zero singular values they
/// are PyTorch's formulas, not the derivative of the truncated function).
template <LinalgTensor T>
T pinv(const T& a, std::optional<double> atol = std::nullopt,
       std::optional<double> rtol = std::nullopt, bool hermitian = false);
Tensor pinv(const Tensor& a, std::optional<double> atol, std::optional<double> rtol, bool hermitian,
            Backend& backend);

/// The four outputs of torch.linalg.lstsq (lstsq_full).
template <LinalgTensor T>
struct LstsqResult {
  T solution;         ///< [n, k, batch...]
  T residuals;        ///< [k, batch...] or empty [0]
  T rank;             ///< i64 [batch...] or empty [0] (driver "gels")
  T singular_values;  ///< [min(m, n), batch...] (real) or empty [0]
};

/// min ||A X - B||_F, torch.linalg.lstsq, for A [m, n, batch...] and
/// B [m, k, batch...] (batch axes broadcast): solution X = pinv(A, rtol =
/// rcond) B [n, k, batch...] (the minimum-norm solution; every driver gives
/// it, through the SVD). driver: "gels", "gelsy", "gelsd", "gelss", or ""
/// (= "gelsy", PyTorch's CPU default); anything else is InvalidArgument;
/// rcond negative or NaN is InvalidArgument. Which outputs are empty [0]
/// tensors follows PyTorch:
///   residuals: the squared column norms of A X - B [k, batch...] when
///     m > n and driver is not "gelsy" (PyTorch also empties them for
///     gelsd/gelss when some matrix is rank deficient; we return them:
///     documented difference);
///   rank (i64 [batch...]): all drivers but "gels"; the number of singular
///     values above rcond * the largest (rcond's default eps * max(m, n)),
///     from the SVD also for "gelsy" (LAPACK's gelsy estimates it by pivoted
///     QR: borderline ranks can differ);
///   singular_values [min(m, n), batch...] (descending, real): "gelsd" and
///     "gelss" only.
/// AD: through pinv's rules and the products (PyTorch's lstsq rules are
/// these compositions); rank is not differentiable.
template <LinalgTensor T>
LstsqResult<T> lstsq_full(const T& a, const T& b, std::optional<double> rcond = std::nullopt,
                          std::string_view driver = "");
/// {solution, residuals} of lstsq_full.
template <LinalgTensor T>
std::pair<T, T> lstsq(const T& a, const T& b, std::optional<double> rcond = std::nullopt,
                      std::string_view driver = "");

/// The condition number of A, torch.linalg.cond: p = nullopt or 2: the ratio
/// of the largest to the smallest singular value (-2: the inverse ratio),
/// via svdvals, for any [m, n, batch...]; p = 1, -1, inf, -inf, "fro" or
/// "nuc": matrix_norm(A, p) * matrix_norm(inv(A), p) for square A. A
/// singular matrix gives inf for every p (0 for p = -2), as PyTorch; for
/// p = None/2 that needs an exactly zero singular value (a numerically
/// singular matrix gives a large finite ratio, as PyTorch). Real result.
template <LinalgTensor T>
T cond(const T& a, std::optional<double> p = std::nullopt);
template <LinalgTensor T>
T cond(const T& a, std::string_view p);

/// The inverse of A viewed as a matrix, torch.linalg.tensorinv, in our axis
/// order: the first `ind` axes of A index the rows, the others the columns
/// (column-major flattening), both of one size; the result has shape
/// (A's last rank - ind axes, then its first ind axes). PyTorch's ind on a
/// row-major tensor of rank r is our r - ind. ind outside [1, rank - 1] is
/// InvalidArgument; sizes that differ are ShapeMismatch; singular is Singular.
template <LinalgTensor T>
T tensorinv(const T& a, std::int64_t ind = 2);

/// X with sum over x of A[x..., y...] X[x...] = B[y...], torch.linalg.tensorsolve
/// in our axis order: A's trailing axes are B's shape and its leading axes
/// X's shape (PyTorch's a.shape = b.shape + x.shape, reversed). `dims`: axes
/// of A moved to the front first, dims[i] becoming axis i (PyTorch moves its
/// dims to the end; its dims (d_0, ..., d_k-1) of a rank-r tensor are our
/// (r-1-d_k-1, ..., r-1-d_0)). Shapes that do not fit are ShapeMismatch /
/// RankMismatch; bad dims are AxisOutOfBounds / DuplicateAxis; singular is
/// Singular.
template <LinalgTensor T>
T tensorsolve(const T& a, const T& b, const Axes& dims = {});

}  // namespace tenferro::linalg
