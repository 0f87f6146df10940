#pragma once
// Distributed linear algebra on ScaLAPACK (docs/distributed.md, "Distributed
// linear algebra (ScaLAPACK)").
//
//   dist::Mesh grid(dist::Communicator::world(), {2, 2});
//   dist::DTensor a = dist::to_block_cyclic(dist::distribute(full, grid, {dist::Shard(0)}), 4);
//   auto [U, S, Vh] = dist::linalg::svd(a);      // U, Vh block-cyclic, S on every rank
//   dist::DTensor c = dist::linalg::matmul(U, Vh);
//
// ScaLAPACK's layout is a DTensor matrix [m, n] sharded block-cyclically
// over a BLACS process grid, the same block size for rows and columns,
// blocks dealt from grid coordinate 0 (RSRC = CSRC = 0), each rank's local
// block column-major with leading dimension its local row count:
//   2-D mesh r x c:  {Shard(0, nb), Shard(1, nb)}  on the r x c grid;
//   1-D mesh of P:   {Shard(1, nb)}                on a 1 x P grid (rows whole),
//                    {Shard(0, nb)}                on a P x 1 grid (columns whole).
// The grid is row-major over the mesh's communicator, so a rank's grid
// coordinates are its mesh coordinates. to_block_cyclic brings any matrix
// there (all-to-alls on a 1-D mesh, dist::redistribute otherwise; nothing
// is gathered to one rank).
//
// The ops run as eager extension ops on the local blocks, in both tiers
// (DTensor and TracedDTensor), for f32, f64, c64 and c128. Every one is
// differentiable (jvp and vjp; dist::backward, dist::grad): its rules are
// written with these ops (and a triangular solve, p?trsm), elementwise ops
// on the local blocks and all-reduces, so cotangents stay in the operands'
// layout and the rules differentiate again; the decompositions' rules are
// the single-process family's, svd's and eigh's with its SpectralOptions
// (gauge policy, degeneracy handling). Every check on data agrees across the mesh: a
// singular matrix, a matrix that is not positive definite, non-finite input to svd / eigh, a rank
// whose local block has another dtype, raise the same typed tenferro::Error on every rank.

#include <array>
#include <cstdint>
#include <utility>

#include "tenferro/distributed/distributed.hpp"
#include "tenferro/linalg/spectral.hpp"
#include "tenferro/linalg/truncated.hpp"

namespace tenferro::dist {

/// A BLACS process grid over a mesh's communicator (row-major: grid
/// coordinates = mesh coordinates). Contexts are made once per
/// (communicator, rows, cols) and kept until MPI is finalised, as split
/// communicators are: ops and caches name a context by its number.
/// Making one is collective over the communicator (the first call with a
/// new shape must be made by every rank of it, as every dist call is).
struct BlacsGrid {
  int context = -1;
  int rows = 1;
  int cols = 1;
  int row = 0;  ///< this rank's grid row
  int col = 0;  ///< this rank's grid column
};

/// The rows x cols grid over mesh.comm() (rows * cols must be its size;
/// InvalidArgument otherwise).
BlacsGrid blacs_grid(const Mesh& mesh, int rows, int cols);

/// ScaLAPACK's placements of a matrix with square blocks of `block` on
/// `mesh` (see above): {Shard(0, block), Shard(1, block)} on a 2-D mesh,
/// {Shard(1, block)} on a 1-D one (a 1 x P grid).
Placements block_cyclic_placements(const Mesh& mesh, std::int64_t block);

/// The grid and block size of a matrix DTensor in ScaLAPACK's layout; an
/// InvalidArgument naming its placements and saying how to get there
/// (to_block_cyclic) otherwise. The same on every rank (metadata only), but
/// collective the first time a grid shape is used on a communicator (it
/// makes the grid): call it on every rank of the mesh, as descriptor().
struct BlockCyclicLayout {
  BlacsGrid grid;
  std::int64_t block = 0;
};
template <class T>
BlockCyclicLayout block_cyclic_layout(const BasicDTensor<T>& a);

/// ScaLAPACK's array descriptor (DESC: dtype 1, context, M, N, MB, NB,
/// RSRC 0, CSRC 0, LLD = max(1, local rows)) of a matrix in that layout.
template <class T>
std::array<int, 9> descriptor(const BasicDTensor<T>& a);

/// The matrix redistributed to ScaLAPACK's layout with square blocks of
/// `block` (block_cyclic_placements). Back: dist::redistribute(x, placements).
/// On a 1-D mesh a sharded matrix moves by all-to-alls (no rank holds more
/// than its old and new parts); elsewhere this is dist::redistribute.
/// Differentiable.
template <class T>
BasicDTensor<T> to_block_cyclic(const BasicDTensor<T>& a, std::int64_t block);

}  // namespace tenferro::dist

namespace tenferro::dist::linalg {

/// op(A) op(B) (PBLAS p?gemm) with op 'N' (as is), 'T' (transpose) or 'C'
/// (conjugate transpose): op(A) [m, k], op(B) [k, n]; the result [m, n] in
/// the operands' layout. Both operands in ScaLAPACK's layout on one mesh,
/// with one block size and one dtype. Differentiable (eager backward, grad,
/// vjp, jvp; dist::grad in traced programs): the vjp is gC op_b(B)^H and
/// op_a(A)^H gC (transposed back through op_a, op_b), each one p?gemm.
template <class T>
BasicDTensor<T> matmul(const BasicDTensor<T>& a, const BasicDTensor<T>& b, char trans_a = 'N',
                       char trans_b = 'N');

/// A^T, or A^H when `conjugate` (PBLAS p?tran / p?tranc), [n, m] for A [m,
/// n], in A's layout. Differentiable (its derivative is itself).
template <class T>
BasicDTensor<T> transpose(const BasicDTensor<T>& a, bool conjugate = false);

/// The reduced SVD A = U diag(S) Vh of A [m, n] (LAPACK gesdd's algorithm:
/// p?gebrd, ?bdsdc on every rank, p?ormbr / p?unmbr), k = min(m, n):
/// U [m, k] and Vh [k, n] in A's layout, S [k] real, descending, Replicate
/// (the whole vector on every rank). Non-finite input is NoConvergence, as
/// a failed convergence is.
/// AD: the single-process tenferro::linalg::svd rules (PyTorch's
/// svd_backward / linalg_svd_jvp on the reduced factors) with `options`'
/// gauge policy: Strict zeroes the 1 / gap factors of degenerate pairs and
/// raises GaugeIllDefined, on every rank, when the (co)tangent has a
/// component there, or when a complex loss depends on the vectors' phases;
/// Regularised broadens them. The F matrices are built per local block from
/// the replicated S; diagonals read into replicated vectors are all-reduced.
template <class T>
tenferro::linalg::SvdResult<BasicDTensor<T>> svd(
    const BasicDTensor<T>& a, const tenferro::linalg::SpectralOptions& options = {});

/// The truncated SVD: svd(a), then the leading r singular triplets, r chosen
/// by `truncation` (max rank, cutoff, discarded weight: the single-process
/// family's tenferro::linalg::Truncation and truncation_rank) from S, which
/// is bitwise equal on every rank, so every rank keeps the same r (checked
/// collectively). U [m, r] and Vh [r, n] keep A's layout (a prefix of each
/// rank's local block: no communication); S [r] and the discarded weight
/// (a real scalar, sum_{i >= r} s_i^2 / sum_i s_i^2, 0 for a zero matrix)
/// are Replicate. In a traced program the rank must be a constant: only
/// max_rank may be set (a cutoff or a weight bound is Unsupported there).
/// Bad options are InvalidArgument, as in the single-process family.
/// AD: svd's rules (with `options`), then the prefix slices, as the
/// single-process svd_truncated; the discarded weight is differentiable.
template <class T>
tenferro::linalg::TruncatedSvd<BasicDTensor<T>> svd_truncated(
    const BasicDTensor<T>& a, const tenferro::linalg::Truncation& truncation,
    const tenferro::linalg::SpectralOptions& options = {});

/// Which library eigh runs. Auto: ELPA where the build has it (its one-stage
/// solver was 1.2-1.4x faster than pdsyevd on 2 ranks; docs/distributed.md),
/// ScaLAPACK otherwise. Elpa without ELPA in the build is Unsupported.
/// ELPA runs f64 and c128 on matrices that give every grid row and column a
/// block; f32, c64 and smaller matrices run p?syevd / p?heevd.
enum class EighSolver : unsigned char { Auto, ScaLapack, Elpa };

/// Whether this build has ELPA (TENFERRO_WITH_ELPA).
bool has_elpa();

/// The eigendecomposition of a Hermitian (real symmetric) A [n, n] read from
/// its `uplo` triangle ('L' or 'U'; p?syevd / p?heevd, or ELPA's one-stage
/// solver on the matrix completed from that triangle, per `solver`):
/// eigenvalues [n] real, ascending, Replicate; eigenvectors [n, n] in A's
/// layout. Non-finite input is NoConvergence on every rank.
/// AD: the single-process tenferro::linalg::eigh rules, as derivatives of
/// the function of the `uplo` triangle (the gradient lives on that
/// triangle), with `options`' gauge policy (as svd).
template <class T>
tenferro::linalg::EigResult<BasicDTensor<T>> eigh(
    const BasicDTensor<T>& a, char uplo = 'L',
    const tenferro::linalg::SpectralOptions& options = {}, EighSolver solver = EighSolver::Auto);

/// The truncated eigh: eigh(a), then the r eigenpairs of largest |w|, r
/// chosen by `truncation` as for svd_truncated, in the single-process
/// eigh_truncated's order (descending |w|; equal magnitudes keep eigh's
/// ascending order): eigenvalues [r] and the discarded weight (sum of the
/// dropped w_i^2 over the sum of all, 0 for a zero matrix) Replicate,
/// eigenvectors [n, r] in A's layout. The kept vectors sit at both ends of
/// eigh's order, interleaved, so they are gathered as V P with a 0/1
/// selection matrix P [n, r] (exact; a pdgemm, 2 n^2 r flops). In a traced
/// program only max_rank may be set, as for svd_truncated.
/// AD: eigh's rules (with `options`), then the gather, as the single-process
/// eigh_truncated; the discarded weight is differentiable.
template <class T>
tenferro::linalg::TruncatedEigh<BasicDTensor<T>> eigh_truncated(
    const BasicDTensor<T>& a, const tenferro::linalg::Truncation& truncation, char uplo = 'L',
    const tenferro::linalg::SpectralOptions& options = {}, EighSolver solver = EighSolver::Auto);

/// The reduced QR A = Q R of A [m, n] (p?geqrf, then p?orgqr / p?ungqr),
/// k = min(m, n): Q [m, k], R [k, n] upper triangular, both in A's layout.
/// AD: the single-process qr rules (PyTorch's linalg_qr_jvp on A's first k
/// columns, dR = Q^H (dA - dQ R)) and their transpose as the vjp, for tall
/// and wide A; R's leading k x k block is a prefix of each local block.
template <class T>
std::pair<BasicDTensor<T>, BasicDTensor<T>> qr(const BasicDTensor<T>& a);

/// The Cholesky factor of a Hermitian positive-definite A [n, n] (p?potrf):
/// lower L with A = L L^H, or upper U = L^H when `upper`; reads that
/// triangle, zeroes the other. Not positive definite: Singular naming the
/// failing leading minor, on every rank.
/// AD: the single-process rules, dL = L Phi(L^{-1} dA L^{-H}) and
/// gA = L^{-H} Psi(L^H gL) L^{-1}, with p?trsm solves.
template <class T>
BasicDTensor<T> cholesky(const BasicDTensor<T>& a, bool upper = false);

/// X with A X = B for square A [n, n] and B [n, k] (p?gesv: LU with partial
/// pivoting), X in B's layout. A singular A is Singular on every rank.
/// Differentiable: dX = A^{-1} (dB - dA X); gB = A^{-H} gX (p?tranc, then
/// p?gesv), gA = -gB X^H (p?gemm).
template <class T>
BasicDTensor<T> solve(const BasicDTensor<T>& a, const BasicDTensor<T>& b);

}  // namespace tenferro::dist::linalg
