#pragma once
// Factorisations and what is built on them: LU (lu_factor, lu, lu_solve),
// general solves and inverses (solve, inv), determinants (det, slogdet), QR
// and Householder products. docs/linalg.md describes them.
//
// Layout: matrices are column-major with batch axes last, [m, n, batch...];
// a PyTorch batch shape (b1, b2) is our trailing axes (b2, b1). Every
// function works for f32, f64, c64 and c128, for zero-size matrices and
// batches, and for strided inputs. Integer outputs (pivots, info) are i32.
// Singular matrices are ErrorKind::Singular naming the op and the batch
// index (the _ex forms return info instead). The traced tier needs
// constant extents (a symbolic one is Unsupported).

#include <string_view>
#include <tuple>
#include <utility>

#include "tenferro/linalg/triangular.hpp"

namespace tenferro::linalg {

/// {LU, pivots}: the LU factorisation with partial pivoting A = P L U of A
/// [m, n, batch...] (LAPACK getrf), packed as in torch.linalg.lu_factor: LU
/// [m, n, batch...] holds L's strict lower triangle (unit diagonal implied)
/// and U's upper triangle; pivots [min(m, n), batch...] are LAPACK's 1-based
/// row swaps (i32). `pivot = false` is InvalidArgument (PyTorch supports it
/// on CUDA only). An exactly singular U (a zero pivot) is Singular; use
/// lu_factor_ex to get info instead. AD: PyTorch's rules (linalg_lu_jvp;
/// reverse mode by transposing it), for square, tall and wide A.
template <LinalgTensor T>
std::pair<T, T> lu_factor(const T& a, bool pivot = true);
std::pair<Tensor, Tensor> lu_factor(const Tensor& a, bool pivot, Backend& backend);

/// {LU, pivots, info}: lu_factor without the singularity error; info
/// [batch...] (i32) is 0, or i > 0 when U[i-1, i-1] is exactly zero
/// (torch.linalg.lu_factor_ex).
template <LinalgTensor T>
std::tuple<T, T, T> lu_factor_ex(const T& a, bool pivot = true);
std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& a, bool pivot, Backend& backend);

/// {P, L, U} with A = P L U (torch.linalg.lu): P [m, m, batch...] a
/// permutation matrix of A's dtype, L [m, k, batch...] unit lower
/// triangular, U [k, n, batch...] upper triangular, k = min(m, n). Singular
/// matrices factor without error (as in PyTorch). AD through lu_factor's rules.
template <LinalgTensor T>
std::tuple<T, T, T> lu(const T& a, bool pivot = true);
std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& a, bool pivot, Backend& backend);

/// Solves A X = B (left) or X A = B (right) with A = P L U given by
/// lu_factor's {LU, pivots} (torch.linalg.lu_solve); `adjoint` solves with
/// A^H instead. LU [n, n, batch...], pivots [n, batch...], B [n, k,
/// batch...] (left) or [k, n, batch...] (right). Batch axes broadcast as in
/// PyTorch: ours are PyTorch's reversed, so a shorter batch gets trailing
/// unit axes and unit extents stretch; others are ShapeMismatch.
/// Invalid pivots are InvalidArgument naming the batch index. AD: in LU and
/// B (PyTorch's linalg_lu_solve_jvp; reverse mode by transposition).
template <LinalgTensor T>
T lu_solve(const T& lu, const T& pivots, const T& b, bool left = true, bool adjoint = false);
Tensor lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool left, bool adjoint,
                Backend& backend);

/// X with A X = B (left) or X A = B (right) for square A [n, n, batch...]
/// (torch.linalg.solve). B is [n, k, batch...] (left; [k, n, batch...] right)
/// or a batch of vectors (PyTorch's rule: B of rank 1, or of rank
/// A.rank() - 1 with A's extents without its column axis), which gives
/// vectors. Batch axes broadcast as in lu_solve. A singular A is Singular
/// naming the batch index. AD: the composition lu_factor + lu_solve (same values as
/// PyTorch's rules: dX = A^{-1}(dB - dA X)).
template <LinalgTensor T>
T solve(const T& a, const T& b, bool left = true);
Tensor solve(const Tensor& a, const Tensor& b, bool left, Backend& backend);

/// {X, info}: solve without the singularity error (torch.linalg.solve_ex);
/// info [batch...] (i32) as lu_factor_ex's. X is not meaningful where info != 0.
template <LinalgTensor T>
std::pair<T, T> solve_ex(const T& a, const T& b, bool left = true);
std::pair<Tensor, Tensor> solve_ex(const Tensor& a, const Tensor& b, bool left, Backend& backend);

/// The inverse of square A [n, n, batch...] (torch.linalg.inv), computed as
/// lu_solve(lu_factor(A), I). Singular A is Singular naming the batch index.
/// AD: dA^{-1} = -A^{-1} dA A^{-1} through the composition.
template <LinalgTensor T>
T inv(const T& a);
Tensor inv(const Tensor& a, Backend& backend);

/// {inverse, info}: inv without the singularity error (torch.linalg.inv_ex).
template <LinalgTensor T>
std::pair<T, T> inv_ex(const T& a);
std::pair<Tensor, Tensor> inv_ex(const Tensor& a, Backend& backend);

/// The determinant of square A [n, n, batch...], shape [batch...]
/// (torch.linalg.det); 1 for n = 0, 0 for an exactly singular matrix.
/// AD: d det = tr(adj(A) dA), with the adjugate adj(A) = det(A) A^{-1} from
/// an LU where A is invertible and, where an LU pivot is exactly zero, from
/// the SVD A = U S V^H: adj(A) = det(U) det(V^H) V diag(prod_{j != i} s_j)
/// U^H (finite and right at singular matrices, as PyTorch's SVD-based
/// formula). Second derivatives: where A is invertible (Singular otherwise).
template <LinalgTensor T>
T det(const T& a);
Tensor det(const Tensor& a, Backend& backend);

/// {sign, logabsdet} with det = sign exp(logabsdet) (torch.linalg.slogdet):
/// sign has A's dtype (+-1, a unit complex number for complex A, 0 when A is
/// singular), logabsdet is real (-inf when singular). AD: d logabsdet =
/// Re tr(A^{-1} dA), d sign = sign i Im tr(A^{-1} dA) (0 for real A).
template <LinalgTensor T>
std::pair<T, T> slogdet(const T& a);
std::pair<Tensor, Tensor> slogdet(const Tensor& a, Backend& backend);

/// {Q, R} with A = Q R (torch.linalg.qr; LAPACK geqrf + orgqr/ungqr), A [m,
/// n, batch...], k = min(m, n). mode "reduced": Q [m, k], R [k, n];
/// "complete": Q [m, m], R [m, n]; "r": only R [k, n], Q is an empty [0, 0,
/// batch...] tensor (PyTorch returns an empty Q too). Other modes are
/// InvalidArgument. R's diagonal is real (LAPACK's convention, as PyTorch).
/// AD: PyTorch's linalg_qr_jvp (reverse mode by transposition) for m >= n and
/// m < n; mode "r", and "complete" with m > n, are UnsupportedAdRule when
/// differentiated (as in PyTorch).
template <LinalgTensor T>
std::pair<T, T> qr(const T& a, std::string_view mode = "reduced");
std::pair<Tensor, Tensor> qr(const Tensor& a, std::string_view mode, Backend& backend);

/// The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H, where v_i
/// is column i of V [m, n, batch...] below the diagonal with a unit i-th
/// entry, tau [k, batch...], k <= n <= m (torch.linalg.householder_product,
/// LAPACK orgqr/ungqr). AD: the AD tiers compose the product from
/// differentiable ops (exact; any order), O(k m n) per matrix.
template <LinalgTensor T>
T householder_product(const T& v, const T& tau);
Tensor householder_product(const Tensor& v, const Tensor& tau, Backend& backend);

}  // namespace tenferro::linalg
