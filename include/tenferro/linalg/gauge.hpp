#pragma once
// Gauge fixing: reproducible factors. QR, SVD and eigh factors are unique
// only up to a phase per column (a sign for real dtypes); these functions
// pick one, differentiably, so results can be compared across runs,
// libraries and platforms, and losses of the fixed factors have derivatives.
//
//   auto [Q, R] = linalg::positive_diagonal(linalg::qr(a));
//   auto f = linalg::canonical_phase(linalg::svd(a, false));
//
// Because each function is invariant under the phase freedom of its input,
// the gradient it passes back has no component along it: the gauge check of
// the Strict policy (SpectralOptions) passes for any loss of the fixed
// factors. The phase choice is piecewise constant (where the largest
// component of a vector changes, it jumps), like any gauge fixing.

#include <utility>

#include "tenferro/linalg/spectral.hpp"

namespace tenferro::linalg {

/// QR with a non-negative real diagonal of R: Q' = Q diag(s), R' =
/// diag(conj s) R with s = sgn(diag(R)) (1 where the diagonal is 0), so
/// A = Q' R' still and diag(R') = |diag(R)|. Takes {Q, R} as qr returns them
/// (reduced or complete; Q [m, q, batch...], R [q', n, batch...], the first
/// min(m, n) columns / rows are rescaled). Mode "r" (empty Q) is
/// InvalidArgument: use abs on the diagonal instead.
template <LinalgTensor T>
std::pair<T, T> positive_diagonal(const std::pair<T, T>& qr);
std::pair<Tensor, Tensor> positive_diagonal(const std::pair<Tensor, Tensor>& qr, Backend& backend);

/// SVD factors with each left singular vector's largest-magnitude component
/// real and positive (the first such component on ties); the matching right
/// singular vector takes the same phase, so U' diag(S) Vh' = A. Right
/// singular vectors without a partner (full_matrices with n > m) get the same
/// convention on their own.
template <LinalgTensor T>
SvdResult<T> canonical_phase(const SvdResult<T>& f);
SvdResult<Tensor> canonical_phase(const SvdResult<Tensor>& f, Backend& backend);

/// eigh / eig factors with each eigenvector's largest-magnitude component real
/// and positive; the eigenvalues are unchanged.
template <LinalgTensor T>
EigResult<T> canonical_phase(const EigResult<T>& f);
EigResult<Tensor> canonical_phase(const EigResult<Tensor>& f, Backend& backend);

}  // namespace tenferro::linalg
