#pragma once
// ScaLAPACK routines as eager extension ops on the local blocks of matrices
// in ScaLAPACK's layout (scalapack_ops.cpp); the public functions
// (scalapack_linalg.cpp) check the global metadata and build their params.

#include <cstdint>
#include <vector>

#include "tenferro/ad/rules.hpp"
#include "tenferro/distributed/linalg.hpp"
#include "tenferro/runtime/engine.hpp"

namespace tenferro::dist::detail {

enum class SlKind : unsigned char { Gemm, Svd, Eigh, Qr, Cholesky, Solve, Tran, Trsm };

/// One routine call on whole matrices (IA = JA = 1) of one grid and block.
struct SlParams {
  SlKind kind = SlKind::Gemm;
  MPI_Comm comm = MPI_COMM_NULL;  ///< the grid's communicator (agreement)
  BlacsGrid grid;
  std::int64_t block = 1;
  /// Gemm: op(A) [m, k], op(B) [k, n]. Svd, Qr: A [m, n]. Eigh, Cholesky:
  /// A [n, n]. Solve: A [n, n], B [n, k]. Tran: C [m, n] = op(A), A [n, m],
  /// op = trans_a ('T' or 'C'). Trsm: X [m, n] = op(A)^{-1} B (trans_b
  /// 'L', A [m, m]) or B op(A)^{-1} (trans_b 'R', A [n, n]) with A's `uplo`
  /// triangle, op = trans_a ('N' or 'C').
  std::int64_t m = 0, n = 0, k = 0;
  char trans_a = 'N', trans_b = 'N';
  char uplo = 'L';  ///< Eigh: the triangle read; Cholesky: 'U' for the upper factor
  /// Svd, Eigh: the AD policy (tenferro::linalg::SpectralOptions).
  bool regularised = false;
  double eta = 1e-8;
  double gauge_tolerance = 1e-2;
  double degeneracy_tolerance = 1e-10;
  double component_tolerance = 1e-6;
  /// Eigh: ELPA's one-stage solver instead of p?syevd / p?heevd (f64, c128).
  bool elpa = false;
  friend bool operator==(const SlParams& a, const SlParams& b) {
    return a.kind == b.kind && a.comm == b.comm && a.grid.context == b.grid.context &&
           a.block == b.block && a.m == b.m && a.n == b.n && a.k == b.k && a.trans_a == b.trans_a &&
           a.trans_b == b.trans_b && a.uplo == b.uplo && a.regularised == b.regularised &&
           a.eta == b.eta && a.gauge_tolerance == b.gauge_tolerance &&
           a.degeneracy_tolerance == b.degeneracy_tolerance &&
           a.component_tolerance == b.component_tolerance && a.elpa == b.elpa;
  }
};
std::size_t hash_value(const SlParams& p);

/// The grid of the first used_rows x used_cols positions of the row-major
/// rows x cols grid over `comm` (all of it when used = rows, cols), made
/// once and kept until MPI_Finalize; collective over `comm`. Ranks outside
/// it get row = col = -1 and context -1.
BlacsGrid blacs_subgrid(MPI_Comm comm, int rows, int cols, int used_rows, int used_cols);

/// block_cyclic_layout with `op` naming the caller in its errors.
template <class T>
BlockCyclicLayout layout_of(const BasicDTensor<T>& a, const char* op);
/// descinit for a global [m, n] matrix in `layout` (Internal if refused).
std::array<int, 9> descriptor_of(std::int64_t m, std::int64_t n, const BlockCyclicLayout& layout,
                                 const char* op);

/// Runs (and, when an input is tracked, records) the routine on the local
/// blocks; on traced values, adds its node to the graph.
std::vector<EagerTensor> scalapack_call(const SlParams& params,
                                        const std::vector<EagerTensor>& inputs);
std::vector<TracedTensor> scalapack_call(const SlParams& params,
                                         const std::vector<TracedTensor>& inputs);

/// Does nothing; calling it links gemv_guard.cpp, whose cgemv_ / zgemv_
/// keep OpenBLAS 0.3.21 from reading past ScaLAPACK's vectors.
void link_gemv_guard();

/// The user-facing name errors start with ("dist::linalg::svd", ...).
std::string op_name(SlKind k);
/// This rank's local extents of a global [rows, cols] matrix on the grid.
Shape local_of(const SlParams& p, std::int64_t rows, std::int64_t cols);
/// ELPA's one-stage eigensolver on the local blocks of the full Hermitian
/// matrix `a` (overwritten) on `layout`'s grid over `comm`: eigenvalues
/// `w` (every rank), eigenvectors `z`; ELPA's error code, ELPA_OK = 0
/// (elpa_eigh.cpp; not agreed here). Only with TENFERRO_HAVE_ELPA.
template <class S>
int elpa_eigh(MPI_Comm comm, const BlockCyclicLayout& layout, std::int64_t n, S* a, double* w, S* z,
              std::int64_t local_rows, std::int64_t local_cols);
/// ELPA's message for an error code.
std::string elpa_error_text(int code);

/// Runs the routine on the local blocks (scalapack_kernels.cpp).
std::vector<Tensor> run_scalapack(const SlParams& p, ExecutionScope& scope,
                                  std::span<const Tensor> in);

/// The global shapes of the op's inputs (Gemm: A and B before their
/// transposes).
std::vector<Shape> input_globals(const SlParams& p);

/// Emits one op on local blocks (for AD rules), params as given; its outputs.
std::vector<ad::Val> emit_scalapack(ad::Emitter& emitter, const SlParams& params,
                                    std::span<const ad::Val> inputs);
inline ad::Val emit_gemm(ad::Emitter& emitter, const SlParams& params, ad::Val a, ad::Val b) {
  const ad::Val in[2] = {a, b};
  return emit_scalapack(emitter, params, in)[0];
}
/// The params of a ScaLAPACK op (the op its rules are called with).
const SlParams& scalapack_params(const Op& op);
/// The rules of the ops that have them (scalapack_rules.cpp): Gemm, Tran,
/// Solve, Svd and Eigh (scalapack_grad_spectral.cpp), Trsm, Qr and Cholesky
/// (scalapack_grad_factor.cpp).
const ad::RuleSet* scalapack_rules(SlKind kind);
const ad::RuleSet& svd_rules();
const ad::RuleSet& eigh_rules();
const ad::RuleSet& trsm_rules();
const ad::RuleSet& qr_rules();
const ad::RuleSet& cholesky_rules();

/// A factor of a product in a rule: op(v) with op 'N', 'T', 'C' (as p?gemm)
/// or 'K' (conj(v), which p?gemm has no flag for: conjugated locally).
struct Factor {
  ad::Val v;
  Shape global;  ///< v's global shape
  char op = 'N';
};
/// op(l) op(r) as one gemm op on `like`'s grid and block.
ad::Val product(ad::Emitter& e, const SlParams& like, const Factor& l, const Factor& r);

}  // namespace tenferro::dist::detail
