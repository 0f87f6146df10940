#pragma once
// Spectral decompositions: the singular value decomposition (svd, svdvals),
// the Hermitian eigendecomposition (eigh, eigvalsh) and the general
// eigendecomposition (eig, eigvals), on LAPACK (gesdd, syevd/heevd, geev),
// with AD rules in every tier.
//
// Layout: matrices are column-major [m, n, batch...] (batch axes last), so a
// PyTorch input of shape [..., m, n] is our [m, n, ...]; vectors of values are
// [k, batch...]. Element types f32, f64, c64, c128.
//
// Gauge: singular and eigen vectors are defined up to a phase (a sign for
// real dtypes) per vector, and only up to a unitary mixing within a
// degenerate subspace. Their derivatives are well defined only for losses
// that do not depend on that choice. See SpectralOptions.

#include "tenferro/linalg/triangular.hpp"

namespace tenferro::linalg {

/// How the reverse rules of the vector-returning decompositions (svd, eigh,
/// eig) treat gauge freedom.
enum class GaugePolicy {
  /// The default. Phase: a loss that depends on the phase of complex
  /// singular/eigen vectors (|Im diag(U^H gU) + Im diag(V^H gV)|, or
  /// |Im diag(V^H gV)| for eigenvectors, above `gauge_tolerance`) raises
  /// ErrorKind::GaugeIllDefined when the gradient is computed (eager
  /// backward or running a traced program), giving the offending magnitude,
  /// as PyTorch does.
  /// Degeneracy (where PyTorch gives Inf/NaN): for a pair of degenerate values
  /// (see `degeneracy_tolerance`) the 1/(gap) factor is 0, and the component
  /// it would multiply must be negligible (see `component_tolerance`), else
  /// GaugeIllDefined names the pair, the batch index, the gap and |c|. In the
  /// reverse rules c is the derivative of the loss along a rotation of the
  /// pair (skew(V^H gV)(i, j) / 2; svd: (skew(U^H gU) + skew(V^H gV))(i, j) / 2
  /// and, for a pair of zero singular values, the difference too; eig: the
  /// off-diagonal (V^H gV - V^H V Re diag(V^H gV))(i, j)) and, when vector
  /// cotangents are present, the split gL_j - gL_i of the values cotangent.
  /// In the jvp rules c is the part of the tangent that splits the pair
  /// ((V^H dA V)(i, j); svd: the Hermitian part of (U^H dA V)(i, j), and the
  /// skew part for zero pairs), checked on the vector tangents. So losses of
  /// the values only (sum(S), sum(eigenvalues)), projectors onto a whole
  /// degenerate subspace, U Vh, |U| at the identity... get finite exact
  /// gradients; losses that depend on the basis inside a degenerate subspace
  /// are errors. In svd the factor 1/(s_j^2 - s_i^2) is split as
  /// 1/(2(s_j - s_i)) + 1/(2(s_j + s_i)), so the well-defined second part is
  /// kept for degenerate non-zero pairs. svd's 1/s_i factors (complex
  /// diagonal term, non-square completions) are treated alike for a zero
  /// singular value s_i <= tol * ||S||_2: 0, with the component they multiply
  /// (Im diag(U^H gU)_i, the columns (I - U U^H) gU(:, i) and rows
  /// gVh(i, :) (I - V Vh); in the jvp the matching parts of dA) and, when such
  /// a term exists, gS_i (s_i is not differentiable at 0) checked; the error
  /// then names the zero singular value.
  /// Limits: a forward-mode tangent (or a Hessian-vector product) through
  /// the vector outputs at a degenerate point raises even when the vector
  /// tangent is not used in the end (use the values-only functions, whose
  /// first derivatives have no gap factors); a loss invariant only through a
  /// compensation between values and vectors whose values cotangent happens
  /// not to split the pair is not detected, and gets the zeroed term.
  Strict,
  /// The same phase check, but every 1/d factor (d = s_j^2 - s_i^2,
  /// lambda_j - lambda_i, and 1/s_i for non-square svd) is broadened to
  /// d / (d^2 + eta_abs^2) with eta_abs = `eta` times the 2-norm of the vector
  /// whose differences are taken (s^2 for svd, the eigenvalues for eigh/eig,
  /// s for 1/s), so degenerate or zero spectra give finite derivatives (the
  /// exact ones away from degeneracy, up to O(eta^2)).
  Regularised,
};

/// Per-call AD options of svd, eigh and eig (trailing parameter, default
/// Strict). They change the derivative rules only, never the forward values.
struct SpectralOptions {
  GaugePolicy policy = GaugePolicy::Strict;
  /// Relative Lorentzian width of the Regularised policy (must be > 0).
  double eta = 1e-8;
  /// Largest accepted phase dependence of the loss (PyTorch: 1e-2; must be
  /// >= 0).
  double gauge_tolerance = 1e-2;
  /// Strict: two values are degenerate when their gap |d_j - d_i| is at most
  /// max(degeneracy_tolerance, 100 eps) times the 2-norm of the vector d
  /// (d = S for svd, the eigenvalues for eigh / eig; eps of the dtype, so
  /// 1.2e-5 for f32 / c64 and this value for f64 / c128); for svd a pair of
  /// zero values is s_i + s_j at most that. Must be finite and >= 0.
  double degeneracy_tolerance = 1e-10;
  /// Strict: a (co)tangent component on a degenerate pair is negligible when
  /// it is at most max(component_tolerance, sqrt(eps)) times the largest
  /// component of the same kind in that matrix (sqrt(eps): 3.5e-4 for f32 /
  /// c64, 1.5e-8 for f64 / c128). Must be finite and >= 0.
  double component_tolerance = 1e-6;
};

/// The factors of svd: A = U diag(S) Vh.
template <class T>
struct SvdResult {
  T U;
  T S;
  T Vh;
};

/// The factors of eigh / eig: A V = V diag(eigenvalues).
template <class T>
struct EigResult {
  T eigenvalues;
  T eigenvectors;
};

/// Singular value decomposition of A [m, n, batch...] (torch.linalg.svd):
/// U [m, m] (full_matrices) or [m, k] (k = min(m, n)), S real [k, batch...]
/// in descending order, Vh [n, n] or [k, n], batches appended. U and Vh have
/// orthonormal columns / rows; S is f32 for f32/c64 input, f64 for f64/c128.
/// LAPACK gesdd (divide and conquer). Zero-size matrices give empty S and, for
/// full_matrices, identity U / Vh. Non-finite input is NoConvergence naming
/// the batch index; so is a failed convergence.
/// AD: PyTorch's svd_backward / linalg_svd_jvp. With full_matrices, the
/// columns of U (rows of Vh) beyond k are arbitrary: their cotangents are
/// ignored and their tangents are zero (as in PyTorch). Gauge and degeneracy:
/// see SpectralOptions.
template <LinalgTensor T>
SvdResult<T> svd(const T& a, bool full_matrices = true, const SpectralOptions& options = {});
SvdResult<Tensor> svd(const Tensor& a, bool full_matrices, Backend& backend);

/// The singular values of A (descending, real [k, batch...];
/// torch.linalg.svdvals). Computes no vectors (gesdd jobz='N'), except in an
/// eager call that is recorded for AD (an input requires grad): there, as in
/// PyTorch, the reduced svd runs once and its factors are the residuals of
/// gA = U diag(gS) Vh. In a traced program the reverse and forward rules
/// compute the reduced svd of the input when the program is differentiated.
template <LinalgTensor T>
T svdvals(const T& a);
Tensor svdvals(const Tensor& a, Backend& backend);

/// Eigendecomposition of a Hermitian (real symmetric) A [n, n, batch...]
/// (torch.linalg.eigh): eigenvalues real [n, batch...] in ascending order,
/// eigenvectors [n, n, batch...] orthonormal columns. Only the lower
/// (`uplo` = 'L') or upper ('U') triangle is read (the imaginary part of the
/// diagonal is ignored). LAPACK syevd / heevd. `uplo` other than 'L'/'U' is
/// InvalidArgument; failed convergence is NoConvergence naming the batch.
/// AD: PyTorch's eigh rules, as derivatives of the function actually
/// computed, which reads one triangle: the tangent used is the Hermitian
/// matrix built from dA's triangle, and the gradient is supported on that
/// triangle (tril(G + G^H, -1) + Re diag(G) for 'L', G = V (...) V^H being
/// PyTorch's Hermitian gradient). For a Hermitian input parametrised as
/// X + X^H (PyTorch's gradcheck wrapper) both give the same gradient of X.
/// Gauge and degeneracy: see SpectralOptions.
template <LinalgTensor T>
EigResult<T> eigh(const T& a, char uplo = 'L', const SpectralOptions& options = {});
EigResult<Tensor> eigh(const Tensor& a, char uplo, Backend& backend);

/// The eigenvalues of a Hermitian A (ascending, real; torch.linalg.eigvalsh).
/// Computes no vectors (jobz='N'), except in an eager call recorded for AD,
/// where eigh runs once and keeps its vectors for the rules (as PyTorch); in
/// a traced program the rules compute the vectors when differentiated. Reads
/// one triangle, like eigh.
template <LinalgTensor T>
T eigvalsh(const T& a, char uplo = 'L');
Tensor eigvalsh(const Tensor& a, char uplo, Backend& backend);

/// Eigendecomposition of a general square A [n, n, batch...]
/// (torch.linalg.eig): complex eigenvalues [n, batch...] and eigenvectors
/// [n, n, batch...] (c64 for f32/c64 input, c128 for f64/c128), in LAPACK's
/// order, each eigenvector of unit 2-norm with its largest component real
/// (LAPACK geev). Failed convergence is NoConvergence naming the batch.
/// AD: PyTorch's linalg_eig_backward / linalg_eig_jvp (the vectors keep unit
/// norm to first order); for real input the gradient is the real part.
/// The rules solve with V: an exactly singular V (a defective A) is Singular
/// naming the batch index; a nearly defective A gives large derivatives.
/// Gauge and degeneracy: see SpectralOptions.
template <LinalgTensor T>
EigResult<T> eig(const T& a, const SpectralOptions& options = {});
EigResult<Tensor> eig(const Tensor& a, Backend& backend);

/// The eigenvalues of a general square A (complex [n, batch...], LAPACK's
/// order; torch.linalg.eigvals). Computes no vectors; its AD rules recompute
/// them with eig when differentiated.
template <LinalgTensor T>
T eigvals(const T& a);
Tensor eigvals(const Tensor& a, Backend& backend);

}  // namespace tenferro::linalg
