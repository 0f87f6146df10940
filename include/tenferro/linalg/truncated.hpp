#pragma once
// Truncated decompositions, the tensor-network workhorse: an SVD (or a
// Hermitian eigendecomposition) that keeps a fixed number of values, or every
// value above a cutoff, or as many as a bound on the discarded weight allows,
// and reports the weight it discarded.

#include <cstdint>
#include <string>

#include "tenferro/linalg/spectral.hpp"

namespace tenferro::linalg {

/// Which values a truncated decomposition keeps. Values are sorted by
/// magnitude, largest first; every criterion that is set must hold, so the
/// kept rank is the smallest of the ranks they allow, and at least 1 for a
/// non-empty matrix.
struct Truncation {
  /// Keep at most this many values (< 0: no limit).
  std::int64_t max_rank = -1;
  /// Drop values <= cutoff, where the cutoff is relative to the largest value
  /// when `relative_cutoff` (the default) and absolute otherwise. 0: none.
  double cutoff = 0.0;
  bool relative_cutoff = true;
  /// Drop the smallest values while the discarded weight (the sum of their
  /// squares over the sum of all squares) stays <= this bound. 0: none.
  double max_discarded_weight = 0.0;
  /// Traced tier only: the name of the kept rank when it is a dynamic size
  /// (see below). Empty: a name unique within the graph ("rank_<id>"). Naming it
  /// makes programs readable and their fingerprints (hence run_compiled's
  /// cache) stable across re-tracing; names must be unique per program.
  std::string rank_name = {};
};

/// A truncated SVD: A ~ U diag(S) Vh with U [m, r, batch...], S [r,
/// batch...], Vh [r, n, batch...].
template <class T>
struct TruncatedSvd {
  T U;
  T S;
  T Vh;
  /// The kept rank r (one rank for the whole batch: the largest any matrix
  /// of the batch needs). -1 in a traced program whose rank is a dynamic
  /// size: it is S.shape()[0] there, fixed when the program runs.
  std::int64_t rank = 0;
  /// Per matrix, the discarded weight sum_{i >= r} s_i^2 / sum_i s_i^2
  /// (real, [batch...]; 0 for an all-zero matrix). Differentiable.
  T discarded_weight;
};

/// Truncated SVD of A [m, n, batch...]: the reduced svd (svd(a, false,
/// options)), then the leading r singular triplets. Its AD is the AD of the
/// kept factors (PyTorch's svd rules on the reduced factors, then slicing),
/// with the gauge and degeneracy policy of `options`.
///
/// The kept rank depends on the values, so it is fixed when the eager or the
/// direct call runs. In a traced program with only `max_rank` set and
/// constant extents the rank is a constant. Otherwise (a cutoff, a weight
/// bound, or a symbolic extent) it is a dynamic size (SymDim::dynamic) with
/// upper bound min(m, n, max_rank): U is [m, r], S [r], Vh [r, n] with r
/// fixed each time the program runs, without re-preparing it; the factors
/// are gathers of the full ones, so their AD is the decomposition's followed
/// by the gather's. The discarded weight is a graph value like the factors.
/// Errors: a negative cutoff or weight bound, or a weight bound >= 1, is
/// InvalidArgument; otherwise as svd.
template <LinalgTensor T>
TruncatedSvd<T> svd_truncated(const T& a, const Truncation& truncation,
                              const SpectralOptions& options = {});
TruncatedSvd<Tensor> svd_truncated(const Tensor& a, const Truncation& truncation, Backend& backend);

/// A truncated Hermitian eigendecomposition: A ~ V diag(w) V^H with the
/// eigenvalues of largest magnitude, w [r, batch...] in descending order of
/// magnitude and V [n, r, batch...].
template <class T>
struct TruncatedEigh {
  T eigenvalues;
  T eigenvectors;
  std::int64_t rank = 0;
  /// sum of the discarded w_i^2 over the sum of all w_i^2, per matrix.
  T discarded_weight;
};

/// Truncated eigh of a Hermitian A [n, n, batch...] (reads the `uplo`
/// triangle): eigh(a, uplo, options), then the r eigenpairs of largest
/// |eigenvalue| (the Truncation criteria apply to |w|; equal magnitudes keep
/// eigh's ascending order). In a traced program the pairs are picked in the
/// graph by an argsort of |w| (so which pairs are kept follows the values),
/// and the rank is a constant or a dynamic size as for svd_truncated.
template <LinalgTensor T>
TruncatedEigh<T> eigh_truncated(const T& a, const Truncation& truncation, char uplo = 'L',
                                const SpectralOptions& options = {});
TruncatedEigh<Tensor> eigh_truncated(const Tensor& a, const Truncation& truncation, char uplo,
                                     Backend& backend);

/// The rank a Truncation keeps for one vector of non-negative magnitudes in
/// descending order (exposed for tests and for callers that truncate their
/// own spectra). InvalidArgument for bad options.
std::int64_t truncation_rank(std::span<const double> descending_magnitudes,
                             const Truncation& truncation);

}  // namespace tenferro::linalg
