#pragma once
// Triangular solves and the Cholesky factorisation.

#include "tenferro/ad/eager.hpp"
#include "tenferro/ad/ops.hpp"
#include "tenferro/ad/traced.hpp"
#include "tenferro/backend/backend.hpp"

namespace tenferro::linalg {

/// The tensor types of the AD tiers (EagerTensor, TracedTensor); Tensor
/// overloads (the direct tier) take a Backend as their last argument.
template <class T>
concept LinalgTensor = AdTensor<T>;

/// Solves op(A) X = B (left) or X op(A) = B (right) for X, where op(A) is the
/// upper or lower triangle of A (unit diagonal assumed when `unitriangular`;
/// the other triangle is never read). A is [n, n, batch...], B [n, k,
/// batch...] (left) or [k, n, batch...] (right); batch axes broadcast. Same
/// floating or complex dtype. A zero on the used diagonal is Singular
/// (naming the batch index). torch.linalg.solve_triangular.
template <LinalgTensor T>
T solve_triangular(const T& a, const T& b, bool upper, bool left = true,
                   bool unitriangular = false);
Tensor solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left, bool unitriangular,
                        Backend& backend);

/// The Cholesky factor of a Hermitian positive-definite A ([n, n, batch...]):
/// lower L with A = L L^H, or upper U = L^H with A = U^H U when `upper`.
/// Reads the triangle it returns. A matrix that is not positive definite is
/// Singular naming the batch index and the failing leading minor.
/// AD: PyTorch's rules (the gradient is Hermitian).
template <LinalgTensor T>
T cholesky(const T& a, bool upper = false);
Tensor cholesky(const Tensor& a, bool upper, Backend& backend);

/// {L, info}: like cholesky, but a matrix that is not positive definite gives
/// info > 0 (the order of the failing leading minor, an i32 tensor [batch...])
/// instead of an error; its L is then unspecified.
template <LinalgTensor T>
std::pair<T, T> cholesky_ex(const T& a, bool upper = false);
std::pair<Tensor, Tensor> cholesky_ex(const Tensor& a, bool upper, Backend& backend);

}  // namespace tenferro::linalg
