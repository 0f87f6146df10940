// The ScaLAPACK kernels behind the ops of scalapack_ops.cpp: p?gemm, the
// SVD (p?gebrd, LAPACK's ?bdsdc on every rank, p?ormbr / p?unmbr),
// p?syevd / p?heevd (or ELPA, elpa_eigh.cpp), p?geqrf + p?orgqr / p?ungqr,
// p?potrf, p?gesv for f32, f64, c64 and c128, with workspace queries.
// Each agrees across the grid on its inputs (local extents, one dtype,
// finite values for the iterative solvers) before the routine runs, and on
// the routine's info after it, so every rank raises the same typed error.

#include <algorithm>
#include <cmath>
#include <complex>

#include "distributed/internal.hpp"
#include "distributed/scalapack.hpp"
#include "distributed/scalapack_api.hpp"

namespace tenferro::dist::detail {

namespace {

using scalapack::fint;

// ---- checks ---------------------------------------------------------------------------

/// Local blocks of the expected extents and a floating or complex dtype,
/// one for all inputs (this rank's view; agreed by the caller).
void check_local_inputs(const SlParams& p, std::span<const Tensor> in) {
  const std::string name = op_name(p.kind);
  const auto globals = input_globals(p);
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (!is_inexact(in[i].dtype())) {
      fail(ErrorKind::DTypeMismatch, name, "ScaLAPACK works on f32, f64, c64 and c128; operand ", i,
           " is ", tenferro::name(in[i].dtype()));
    }
    if (in[i].dtype() != in[0].dtype()) {
      fail(ErrorKind::DTypeMismatch, name, "the operands are ", tenferro::name(in[0].dtype()),
           " and ", tenferro::name(in[i].dtype()), "; convert one");
    }
    const Shape want = local_of(p, globals[i][0], globals[i][1]);
    if (in[i].shape() != want) {
      fail(ErrorKind::ShapeMismatch, name, "operand ", i, "'s local block is ",
           shape_to_string(in[i].shape().span()), " but the global ",
           shape_to_string(globals[i].span()), " matrix gives grid position (", p.grid.row, ", ",
           p.grid.col, ") ", shape_to_string(want.span()),
           "; every rank holds its own block of the same matrix");
    }
  }
}

/// One dtype on every rank of the grid (every rank sees the min and max).
void check_same_dtype(const SlParams& p, DType dtype) {
  int mine = static_cast<int>(dtype), lo = 0, hi = 0;
  check_mpi(MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, p.comm), "scalapack check");
  check_mpi(MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, p.comm), "scalapack check");
  if (lo != hi) {
    fail(ErrorKind::DTypeMismatch, op_name(p.kind), "the ranks' local blocks differ in dtype (",
         tenferro::name(static_cast<DType>(lo)), " and ", tenferro::name(static_cast<DType>(hi)),
         "); every rank holds a block of the same matrix");
  }
}

template <class S>
struct Real {
  using type = S;
};
template <class R>
struct Real<std::complex<R>> {
  using type = R;
};
template <class S>
constexpr bool kComplex = !std::is_same_v<S, typename Real<S>::type>;

template <class S>
S* ptr(const Tensor& t) {
  return static_cast<S*>(t.raw_data());
}

/// A compact copy the routine may overwrite.
Tensor scratch_copy(Backend& backend, const Tensor& x) {
  Tensor y = backend.empty(x.shape().span(), x.dtype());
  backend.copy(x, y);
  return y;
}

template <class S>
bool all_finite(const Tensor& x) {
  const S* v = ptr<S>(x);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    if constexpr (kComplex<S>) {
      if (!std::isfinite(v[i].real()) || !std::isfinite(v[i].imag())) return false;
    } else {
      if (!std::isfinite(v[i])) return false;
    }
  }
  return true;
}

/// A workspace size from a query's first element (rounded up, with slack:
/// some ScaLAPACK 2.x queries round down).
template <class V>
fint queried(V v) {
  double d;
  if constexpr (kComplex<V>) {
    d = static_cast<double>(v.real());
  } else {
    d = static_cast<double>(v);
  }
  return static_cast<fint>(std::ceil(d * 1.1)) + 64;
}

/// Every rank raises the error of the first rank whose info is not 0:
/// Internal for an argument ScaLAPACK refused (info < 0), else `kind` with
/// `what_failed(info)`.
template <class Message>
void agree_info(const SlParams& p, fint info, ErrorKind kind, Message&& what_failed) {
  agreed(p.comm, [&] {
    if (info < 0) {
      fail(ErrorKind::Internal, op_name(p.kind), "ScaLAPACK refused argument ", -info, " (info ",
           info, "); please report this");
    }
    if (info > 0) fail(kind, op_name(p.kind), what_failed(info), " (info ", info, ")");
  });
}

std::string query_failed(fint) {
  return "the workspace query failed";
}

/// The singular or eigen values from grid position (0, 0) (communicator
/// rank 0, which holds the first block) to every rank: ScaLAPACK leaves them
/// wrong on a rank whose grid row or column owns no block (a matrix smaller
/// than the grid), and truncation needs them bitwise equal everywhere.
void share_values(const SlParams& p, const Tensor& values) {
  check_mpi(MPI_Bcast(values.raw_data(), static_cast<int>(values.numel()), mpi_type(values.dtype()),
                      0, p.comm),
            op_name(p.kind).c_str());
  int me = 0;
  MPI_Comm_rank(p.comm, &me);
  if (me == 0) {
    count_sent(static_cast<std::uint64_t>(values.numel()) * itemsize(values.dtype()));
  }
}

/// Zeroes the local entries of a global [rows, cols] matrix strictly below
/// (lower = false keeps the upper triangle) or above the diagonal.
template <class S>
void keep_triangle(const SlParams& p, const Tensor& local, std::int64_t rows, std::int64_t cols,
                   bool upper) {
  const auto ri = shard_indices(rows, p.grid.rows, p.grid.row, p.block);
  const auto ci = shard_indices(cols, p.grid.cols, p.grid.col, p.block);
  S* v = ptr<S>(local);
  const std::size_t ld = ri.size();
  for (std::size_t j = 0; j < ci.size(); ++j)
    for (std::size_t i = 0; i < ri.size(); ++i)
      if (upper ? ri[i] > ci[j] : ri[i] < ci[j]) v[i + j * ld] = S(0);
}

// ---- kernels ------------------------------------------------------------------------------

/// The grid a routine runs on: the grid's first rows x cols, where rows and
/// cols are the grid rows and columns that own a block of some operand.
/// ScaLAPACK (p?gesvd, p?syevd seen; every routine is kept off them) gives
/// wrong results on ranks whose grid row or column owns no block; on the
/// smaller grid every local block is the same (each coordinate still owns
/// the same blocks), and ranks outside it hold empty blocks and skip the
/// routine (but not the agreements).
struct RoutineGrid {
  BlockCyclicLayout layout;
  bool inside = true;
  /// The descriptor of a global [m, n] matrix (zeros outside the grid).
  std::array<int, 9> desc(std::int64_t m, std::int64_t n, const char* op) const {
    if (!inside) return {};
    return descriptor_of(m, n, layout, op);
  }
};

RoutineGrid routine_grid(const SlParams& p) {
  std::int64_t rows = 0, cols = 0;
  for (const Shape& s : input_globals(p)) {
    rows = std::max(rows, s[0]);
    cols = std::max(cols, s[1]);
  }
  if (p.kind == SlKind::Gemm || p.kind == SlKind::Tran) {
    rows = std::max(rows, p.m);
    cols = std::max(cols, p.n);
  }
  auto used = [&](std::int64_t extent, int parts) {
    const std::int64_t blocks = std::max<std::int64_t>(1, (extent + p.block - 1) / p.block);
    return static_cast<int>(std::min<std::int64_t>(parts, blocks));
  };
  RoutineGrid g;
  g.layout = {p.grid, p.block};
  const int ur = used(rows, p.grid.rows), uc = used(cols, p.grid.cols);
  if (ur == p.grid.rows && uc == p.grid.cols) return g;
  g.layout.grid = blacs_subgrid(p.comm, p.grid.rows, p.grid.cols, ur, uc);
  g.inside = g.layout.grid.row >= 0;
  return g;
}

template <class S>
std::vector<Tensor> run_gemm(const SlParams& p, ExecutionScope& scope, std::span<const Tensor> in) {
  Backend& backend = scope.backend();
  const auto g = input_globals(p);
  const RoutineGrid rg = routine_grid(p);
  const char* name = "dist::linalg::matmul";
  const Tensor a = scope.compact(in[0]), b = scope.compact(in[1]);
  Tensor c = backend.empty(local_of(p, p.m, p.n).span(), in[0].dtype());
  std::fill(ptr<S>(c), ptr<S>(c) + c.numel(), S(0));
  if (p.m == 0 || p.n == 0 || p.k == 0) return {c};
  const auto da = rg.desc(g[0][0], g[0][1], name);
  const auto db = rg.desc(g[1][0], g[1][1], name);
  const auto dc = rg.desc(p.m, p.n, name);
  if (rg.inside)
    scalapack::pgemm(p.trans_a, p.trans_b, static_cast<fint>(p.m), static_cast<fint>(p.n),
                     static_cast<fint>(p.k), S(1), ptr<S>(a), da.data(), ptr<S>(b), db.data(), S(0),
                     ptr<S>(c), dc.data());
  return {c};
}

template <class S>
std::vector<Tensor> run_tran(const SlParams& p, ExecutionScope& scope, std::span<const Tensor> in) {
  Tensor c = scope.backend().empty(local_of(p, p.m, p.n).span(), in[0].dtype());
  std::fill(ptr<S>(c), ptr<S>(c) + c.numel(), S(0));
  if (p.m == 0 || p.n == 0) return {c};
  const Tensor a = scope.compact(in[0]);
  const RoutineGrid rg = routine_grid(p);
  const auto da = rg.desc(p.n, p.m, "dist::linalg::transpose");
  const auto dc = rg.desc(p.m, p.n, "dist::linalg::transpose");
  if (rg.inside)
    scalapack::ptran(p.trans_a == 'C', static_cast<fint>(p.m), static_cast<fint>(p.n), ptr<S>(a),
                     da.data(), ptr<S>(c), dc.data());
  return {c};
}

template <class S>
std::vector<Tensor> run_trsm(const SlParams& p, ExecutionScope& scope, std::span<const Tensor> in) {
  const Tensor a = scope.compact(in[0]);
  const Tensor b = scratch_copy(scope.backend(), in[1]);
  if (p.m == 0 || p.n == 0) return {b};
  const RoutineGrid rg = routine_grid(p);
  const std::int64_t na = p.trans_b == 'L' ? p.m : p.n;
  const auto da = rg.desc(na, na, "dist::linalg (triangular solve)");
  const auto db = rg.desc(p.m, p.n, "dist::linalg (triangular solve)");
  if (rg.inside)
    scalapack::ptrsm(p.trans_b, p.uplo, p.trans_a, static_cast<fint>(p.m), static_cast<fint>(p.n),
                     ptr<S>(a), da.data(), ptr<S>(b), db.data());
  return {b};
}

// ---- SVD -------------------------------------------------------------------------------
//
// LAPACK gesdd's algorithm, distributed where the work is: p?gebrd reduces A
// to bidiagonal form B = Q^H A P (8/3 N^3 for square A, block-cyclic); every
// rank gathers B's diagonal and off-diagonal (2k - 1 reals) and runs LAPACK's
// divide-and-conquer ?bdsdc on the k x k bidiagonal, redundantly, so the
// singular values and the real factors U_B, V_B^T are the same on every rank
// with no further communication; each rank copies its own block-cyclic
// blocks of [U_B; 0] and [V_B^T, 0], and p?ormbr / p?unmbr apply Q on the
// left and P^H on the right (4/3 N^3 each). ScaLAPACK's only SVD driver,
// p?gesvd, runs the bidiagonal QR iteration (dbdsqr) instead, on every rank
// over the whole bidiagonal, with memory-bound rotations of the rank's rows
// of U and columns of Vh: about 20 times slower at 2048^2 on 2 ranks
// (docs/distributed.md, "Scaling"). It is not kept as a fallback for a
// ?bdsdc failure: ?bdsdc is the solver inside one process's gesdd, which
// reports the same bidiagonal as NoConvergence, and the two families raise
// the same errors on the same matrices.

/// B's diagonal d [k] and off-diagonal e [k - 1] from the local blocks of
/// `a` after p?gebrd (which leaves B on the diagonal and the first super-
/// (m >= n) or sub- (m < n) diagonal of A; real even for complex A), bitwise
/// the same on every rank of the communicator: each entry's owner writes it
/// into a zeroed vector [d, e] and an MPI sum fills in the rest (x + 0 = x).
template <class S>
std::vector<typename Real<S>::type> gather_bidiagonal(const SlParams& p, const Tensor& a,
                                                      std::int64_t k) {
  using R = typename Real<S>::type;
  std::vector<R> de(static_cast<std::size_t>(2 * k), R(0));
  const auto ri = shard_indices(p.m, p.grid.rows, p.grid.row, p.block);
  const auto ci = shard_indices(p.n, p.grid.cols, p.grid.col, p.block);
  const S* v = ptr<S>(a);
  const std::size_t ld = ri.size();
  const bool upper = p.m >= p.n;
  for (std::size_t j = 0; j < ci.size(); ++j) {
    for (std::size_t i = 0; i < ri.size(); ++i) {
      const std::int64_t r = ri[i], c = ci[j];
      const R x = std::real(v[i + j * ld]);
      if (r == c && r < k) {
        de[static_cast<std::size_t>(r)] = x;
      } else if (upper ? (c == r + 1 && r < k - 1) : (r == c + 1 && c < k - 1)) {
        de[static_cast<std::size_t>(k + std::min(r, c))] = x;
      }
    }
  }
  const int count = static_cast<int>(2 * k - 1);  // d and e
  const MPI_Datatype type = mpi_type(std::is_same_v<R, float> ? DType::F32 : DType::F64);
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, de.data(), count, type, MPI_SUM, p.comm),
            "dist::linalg::svd");
  int ranks = 1;
  MPI_Comm_size(p.comm, &ranks);
  count_sent(2 * static_cast<std::uint64_t>(ranks - 1) * count * sizeof(R) / ranks);
  return de;
}

template <class S>
std::vector<Tensor> run_svd(const SlParams& p, ExecutionScope& scope, std::span<const Tensor> in) {
  using R = typename Real<S>::type;
  Backend& backend = scope.backend();
  const DType dt = in[0].dtype();
  const std::int64_t k = std::min(p.m, p.n);
  const char* name = "dist::linalg::svd";
  Tensor u = backend.empty(local_of(p, p.m, k).span(), dt);
  Tensor s = backend.empty(Shape{k}.span(), real_dtype(dt));
  Tensor vt = backend.empty(local_of(p, k, p.n).span(), dt);
  const Tensor a = scratch_copy(backend, in[0]);
  agreed(p.comm, [&] {
    if (!all_finite<S>(a)) {
      fail(ErrorKind::NoConvergence, name,
           "the matrix has non-finite entries (NaN or Inf) on this rank; the SVD is undefined");
    }
  });
  if (k == 0) return {u, s, vt};
  const RoutineGrid rg = routine_grid(p);
  const auto da = rg.desc(p.m, p.n, name);
  const auto du = rg.desc(p.m, k, name);
  const auto dvt = rg.desc(k, p.n, name);
  const fint m = static_cast<fint>(p.m), n = static_cast<fint>(p.n), kk = static_cast<fint>(k);

  // 1. B = Q^H A P: the reflectors stay in `a`, their scales in tauq / taup
  // (tied to A's local columns and rows); d and e also land on A's diagonals.
  const std::size_t local_rows = static_cast<std::size_t>(std::max<std::int64_t>(1, a.dim(0)));
  const std::size_t local_cols = static_cast<std::size_t>(std::max<std::int64_t>(1, a.dim(1)));
  std::vector<S> tauq(local_cols), taup(local_rows);
  std::vector<R> d(std::max(local_rows, local_cols) + 1), e(d.size());
  S wq{};
  fint info = 0;
  if (rg.inside)
    scalapack::pgebrd(m, n, ptr<S>(a), da.data(), d.data(), e.data(), tauq.data(), taup.data(), &wq,
                      -1, &info);
  agree_info(p, info, ErrorKind::Internal, query_failed);
  std::vector<S> work(static_cast<std::size_t>(queried(wq)));
  if (rg.inside)
    scalapack::pgebrd(m, n, ptr<S>(a), da.data(), d.data(), e.data(), tauq.data(), taup.data(),
                      work.data(), static_cast<fint>(work.size()), &info);
  agree_info(p, info, ErrorKind::Internal, [](fint) { return "p?gebrd failed"; });

  // 2, 3. B's SVD on every rank: the same input, so the same values and
  // vectors (LAPACK's ?bdsdc: upper B for m >= n, lower for m < n).
  std::vector<R> de = gather_bidiagonal<S>(p, a, k);
  std::vector<R> ub(static_cast<std::size_t>(k * k)), vtb(ub.size());
  std::vector<R> bwork(static_cast<std::size_t>(3 * k * k + 4 * k));
  std::vector<fint> biwork(static_cast<std::size_t>(8 * k));
  scalapack::bdsdc(p.m >= p.n ? 'U' : 'L', kk, de.data(), de.data() + k, ub.data(), kk, vtb.data(),
                   kk, bwork.data(), biwork.data(), &info);
  agree_info(p, info, ErrorKind::NoConvergence, [](fint) {
    return "the divide-and-conquer SVD of the bidiagonal form (LAPACK ?bdsdc) did not converge";
  });
  std::copy(de.begin(), de.begin() + k, ptr<R>(s));
  std::vector<R>().swap(bwork);  // ?bdsdc's 3 k^2 + 4 k reals, freed now

  // 4. This rank's blocks of U = [U_B; 0] [m, k] and Vh = [V_B^T, 0] [k, n].
  {
    const auto ri = shard_indices(p.m, p.grid.rows, p.grid.row, p.block);
    const auto ci = shard_indices(k, p.grid.cols, p.grid.col, p.block);
    S* x = ptr<S>(u);
    for (std::size_t j = 0; j < ci.size(); ++j)
      for (std::size_t i = 0; i < ri.size(); ++i)
        x[i + j * ri.size()] =
            ri[i] < k ? S(ub[static_cast<std::size_t>(ri[i] + ci[j] * k)]) : S(0);
  }
  {
    const auto ri = shard_indices(k, p.grid.rows, p.grid.row, p.block);
    const auto ci = shard_indices(p.n, p.grid.cols, p.grid.col, p.block);
    S* x = ptr<S>(vt);
    for (std::size_t j = 0; j < ci.size(); ++j)
      for (std::size_t i = 0; i < ri.size(); ++i)
        x[i + j * ri.size()] =
            ci[j] < k ? S(vtb[static_cast<std::size_t>(ri[i] + ci[j] * k)]) : S(0);
  }

  // U_B and V_B^T (2 k^2 reals on every rank) freed before p?ormbr runs.
  std::vector<R>().swap(ub);
  std::vector<R>().swap(vtb);

  // 5. U = Q [U_B; 0] and Vh = [V_B^T, 0] P^H (K: A's other extent).
  const char adj = kComplex<S> ? 'C' : 'T';
  if (rg.inside)
    scalapack::pormbr('Q', 'L', 'N', m, kk, n, ptr<S>(a), da.data(), tauq.data(), ptr<S>(u),
                      du.data(), &wq, -1, &info);
  agree_info(p, info, ErrorKind::Internal, query_failed);
  work.resize(std::max(work.size(), static_cast<std::size_t>(queried(wq))));
  if (rg.inside)
    scalapack::pormbr('Q', 'L', 'N', m, kk, n, ptr<S>(a), da.data(), tauq.data(), ptr<S>(u),
                      du.data(), work.data(), static_cast<fint>(work.size()), &info);
  agree_info(p, info, ErrorKind::Internal, [](fint) { return "p?ormbr / p?unmbr (Q) failed"; });
  if (rg.inside)
    scalapack::pormbr('P', 'R', adj, kk, n, m, ptr<S>(a), da.data(), taup.data(), ptr<S>(vt),
                      dvt.data(), &wq, -1, &info);
  agree_info(p, info, ErrorKind::Internal, query_failed);
  work.resize(std::max(work.size(), static_cast<std::size_t>(queried(wq))));
  if (rg.inside)
    scalapack::pormbr('P', 'R', adj, kk, n, m, ptr<S>(a), da.data(), taup.data(), ptr<S>(vt),
                      dvt.data(), work.data(), static_cast<fint>(work.size()), &info);
  agree_info(p, info, ErrorKind::Internal, [](fint) { return "p?ormbr / p?unmbr (P) failed"; });
  // Bitwise the same everywhere already (one input, one LAPACK call); the
  // broadcast keeps truncation's agreement independent of that.
  share_values(p, s);
  return {u, s, vt};
}

template <class S>
void syevd(char uplo, fint n, S* a, const fint* da, typename Real<S>::type* w, S* z, const fint* dz,
           S* work, fint lwork, typename Real<S>::type* rwork, fint lrwork, fint* iwork,
           fint liwork, fint* info) {
  const fint one = 1;
  const char job = 'V';
  if constexpr (std::is_same_v<S, float>) {
    scalapack::pssyevd_(&job, &uplo, &n, a, &one, &one, da, w, z, &one, &one, dz, work, &lwork,
                        iwork, &liwork, info, 1, 1);
  } else if constexpr (std::is_same_v<S, double>) {
    scalapack::pdsyevd_(&job, &uplo, &n, a, &one, &one, da, w, z, &one, &one, dz, work, &lwork,
                        iwork, &liwork, info, 1, 1);
  } else if constexpr (std::is_same_v<S, scalapack::c64>) {
    scalapack::pcheevd_(&job, &uplo, &n, a, &one, &one, da, w, z, &one, &one, dz, work, &lwork,
                        rwork, &lrwork, iwork, &liwork, info, 1, 1);
  } else {
    scalapack::pzheevd_(&job, &uplo, &n, a, &one, &one, da, w, z, &one, &one, dz, work, &lwork,
                        rwork, &lrwork, iwork, &liwork, info, 1, 1);
  }
}

/// The whole Hermitian matrix from its `uplo` triangle, in place on the
/// local blocks of `a`: the other triangle from A^H (p?tranc), the diagonal
/// made real (ELPA reads every entry; p?syevd only the triangle).
template <class S>
void complete_hermitian(const SlParams& p, const BlockCyclicLayout& layout, Backend& backend,
                        const Tensor& a) {
  Tensor t = backend.empty(a.shape().span(), a.dtype());
  const auto d = descriptor_of(p.n, p.n, layout, "dist::linalg::eigh");
  scalapack::ptran(/*conjugate=*/true, static_cast<fint>(p.n), static_cast<fint>(p.n), ptr<S>(a),
                   d.data(), ptr<S>(t), d.data());
  const auto ri = shard_indices(p.n, p.grid.rows, p.grid.row, p.block);
  const auto ci = shard_indices(p.n, p.grid.cols, p.grid.col, p.block);
  S* v = ptr<S>(a);
  const S* h = ptr<S>(t);
  const std::size_t ld = ri.size();
  for (std::size_t j = 0; j < ci.size(); ++j)
    for (std::size_t i = 0; i < ri.size(); ++i) {
      const std::size_t k = i + j * ld;
      if (ri[i] == ci[j]) {
        v[k] = S(std::real(v[k]));
      } else if (p.uplo == 'L' ? ri[i] < ci[j] : ri[i] > ci[j]) {
        v[k] = h[k];
      }
    }
}

/// eigh on ELPA's one-stage solver: f64 and c128 (ELPA's double precision)
/// on the whole grid (ELPA wants a block on every grid row and column);
/// false where p?syevd / p?heevd runs instead.
template <class S>
bool eigh_on_elpa(const SlParams& p, const RoutineGrid& rg, Backend& backend, const Tensor& a,
                  const Tensor& w, const Tensor& z) {
  constexpr bool double_precision =
      std::is_same_v<S, double> || std::is_same_v<S, std::complex<double>>;
  if constexpr (double_precision) {
    if (!p.elpa || rg.layout.grid.context != p.grid.context) return false;
    complete_hermitian<S>(p, rg.layout, backend, a);
    const int err = elpa_eigh<S>(p.comm, rg.layout, p.n, ptr<S>(a), ptr<double>(w), ptr<S>(z),
                                 a.dim(0), a.dim(1));
    agreed(p.comm, [&] {
      if (err != 0) {
        fail(ErrorKind::NoConvergence, "dist::linalg::eigh",
             "ELPA's one-stage solver failed: ", elpa_error_text(err), " (error ", err, ")");
      }
    });
    share_values(p, w);
    return true;
  } else {
    return false;
  }
}

template <class S>
std::vector<Tensor> run_eigh(const SlParams& p, ExecutionScope& scope, std::span<const Tensor> in) {
  using R = typename Real<S>::type;
  Backend& backend = scope.backend();
  const DType dt = in[0].dtype();
  const char* name = "dist::linalg::eigh";
  Tensor w = backend.empty(Shape{p.n}.span(), real_dtype(dt));
  Tensor z = backend.empty(local_of(p, p.n, p.n).span(), dt);
  const Tensor a = scratch_copy(backend, in[0]);
  // Only the triangle read must be finite; checking all keeps the rule simple.
  agreed(p.comm, [&] {
    if (!all_finite<S>(a)) {
      fail(ErrorKind::NoConvergence, name,
           "the matrix has non-finite entries (NaN or Inf) on this rank; the eigendecomposition "
           "is undefined");
    }
  });
  if (p.n == 0) return {w, z};
  const RoutineGrid rg = routine_grid(p);
  if (eigh_on_elpa<S>(p, rg, backend, a, w, z)) return {w, z};
  const auto da = rg.desc(p.n, p.n, name);
  const fint n = static_cast<fint>(p.n);
  S wq{};
  R rq{};
  fint iq = 0, info = 0;
  if (rg.inside)
    syevd<S>(p.uplo, n, ptr<S>(a), da.data(), ptr<R>(w), ptr<S>(z), da.data(), &wq, -1, &rq, -1,
             &iq, -1, &info);
  agree_info(p, info, ErrorKind::Internal, query_failed);
  std::vector<S> work(static_cast<std::size_t>(queried(wq)));
  std::vector<R> rwork(static_cast<std::size_t>(kComplex<S> ? queried(rq) : 1));
  // p?syevd's documented minimum: 7n + 8 npcol + 2.
  std::vector<fint> iwork(
      static_cast<std::size_t>(std::max<fint>(queried(iq), 7 * n + 8 * rg.layout.grid.cols + 2)));
  if (rg.inside)
    syevd<S>(p.uplo, n, ptr<S>(a), da.data(), ptr<R>(w), ptr<S>(z), da.data(), work.data(),
             static_cast<fint>(work.size()), rwork.data(), static_cast<fint>(rwork.size()),
             iwork.data(), static_cast<fint>(iwork.size()), &info);
  agree_info(p, info, ErrorKind::NoConvergence,
             [](fint) { return "p?syevd / p?heevd did not converge"; });
  share_values(p, w);
  return {w, z};
}

template <class S>
std::vector<Tensor> run_qr(const SlParams& p, ExecutionScope& scope, std::span<const Tensor> in) {
  Backend& backend = scope.backend();
  const DType dt = in[0].dtype();
  const std::int64_t k = std::min(p.m, p.n);
  const char* name = "dist::linalg::qr";
  const Tensor a = scratch_copy(backend, in[0]);
  const Shape q_local = local_of(p, p.m, k), r_local = local_of(p, k, p.n);
  Tensor r = backend.empty(r_local.span(), dt);
  Tensor q = backend.empty(q_local.span(), dt);
  if (k == 0) {
    std::fill(ptr<S>(r), ptr<S>(r) + r.numel(), S(0));
    return {q, r};
  }
  const RoutineGrid rg = routine_grid(p);
  const auto da = rg.desc(p.m, p.n, name);
  const fint m = static_cast<fint>(p.m), n = static_cast<fint>(p.n), kk = static_cast<fint>(k);
  std::vector<S> tau(static_cast<std::size_t>(std::max<std::int64_t>(1, a.dim(1))));
  S wq{};
  fint info = 0;
  if (rg.inside) scalapack::pgeqrf(m, n, ptr<S>(a), da.data(), tau.data(), &wq, -1, &info);
  agree_info(p, info, ErrorKind::Internal, query_failed);
  std::vector<S> work(static_cast<std::size_t>(queried(wq)));
  if (rg.inside)
    scalapack::pgeqrf(m, n, ptr<S>(a), da.data(), tau.data(), work.data(),
                      static_cast<fint>(work.size()), &info);
  agree_info(p, info, ErrorKind::Internal, [](fint) { return "p?geqrf failed"; });
  // R: the first k rows (a prefix of the local rows: blocks are dealt from
  // grid row 0 in increasing order), upper triangle.
  backend.copy(a.slice(0, 0, r_local[0]), r);
  keep_triangle<S>(p, r, k, p.n, /*upper=*/true);
  if (rg.inside) scalapack::porgqr(m, kk, kk, ptr<S>(a), da.data(), tau.data(), &wq, -1, &info);
  agree_info(p, info, ErrorKind::Internal, query_failed);
  work.resize(std::max(work.size(), static_cast<std::size_t>(queried(wq))));
  if (rg.inside)
    scalapack::porgqr(m, kk, kk, ptr<S>(a), da.data(), tau.data(), work.data(),
                      static_cast<fint>(work.size()), &info);
  agree_info(p, info, ErrorKind::Internal, [](fint) { return "p?orgqr / p?ungqr failed"; });
  backend.copy(a.slice(1, 0, q_local[1]), q);  // Q: the first k columns
  return {q, r};
}

template <class S>
std::vector<Tensor> run_cholesky(const SlParams& p, ExecutionScope& scope,
                                 std::span<const Tensor> in) {
  const Tensor a = scratch_copy(scope.backend(), in[0]);
  if (p.n == 0) return {a};
  const RoutineGrid rg = routine_grid(p);
  const auto da = rg.desc(p.n, p.n, "dist::linalg::cholesky");
  fint info = 0;
  if (rg.inside) scalapack::ppotrf(p.uplo, static_cast<fint>(p.n), ptr<S>(a), da.data(), &info);
  agree_info(p, info, ErrorKind::Singular, [](fint i) {
    return "the matrix is not positive definite: its leading minor of order " + std::to_string(i) +
           " is not; pass a Hermitian positive-definite matrix";
  });
  keep_triangle<S>(p, a, p.n, p.n, p.uplo == 'U');
  return {a};
}

template <class S>
std::vector<Tensor> run_solve(const SlParams& p, ExecutionScope& scope,
                              std::span<const Tensor> in) {
  Backend& backend = scope.backend();
  const Tensor a = scratch_copy(backend, in[0]), b = scratch_copy(backend, in[1]);
  if (p.n == 0 || p.k == 0) return {b};
  const RoutineGrid rg = routine_grid(p);
  const auto da = rg.desc(p.n, p.n, "dist::linalg::solve");
  const auto db = rg.desc(p.n, p.k, "dist::linalg::solve");
  std::vector<fint> ipiv(static_cast<std::size_t>(a.dim(0) + p.block));
  fint info = 0;
  if (rg.inside)
    scalapack::pgesv(static_cast<fint>(p.n), static_cast<fint>(p.k), ptr<S>(a), da.data(),
                     ipiv.data(), ptr<S>(b), db.data(), &info);
  agree_info(p, info, ErrorKind::Singular, [](fint i) {
    return "the matrix is singular: U(" + std::to_string(i) + ", " + std::to_string(i) +
           ") of its LU factorisation is exactly zero";
  });
  return {b};
}

template <class S>
std::vector<Tensor> run_typed(const SlParams& p, ExecutionScope& scope,
                              std::span<const Tensor> in) {
  switch (p.kind) {
    case SlKind::Gemm:
      return run_gemm<S>(p, scope, in);
    case SlKind::Svd:
      return run_svd<S>(p, scope, in);
    case SlKind::Eigh:
      return run_eigh<S>(p, scope, in);
    case SlKind::Qr:
      return run_qr<S>(p, scope, in);
    case SlKind::Cholesky:
      return run_cholesky<S>(p, scope, in);
    case SlKind::Tran:
      return run_tran<S>(p, scope, in);
    case SlKind::Trsm:
      return run_trsm<S>(p, scope, in);
    case SlKind::Solve:
      break;
  }
  return run_solve<S>(p, scope, in);
}
}  // namespace

std::vector<Tensor> run_scalapack(const SlParams& p, ExecutionScope& scope,
                                  std::span<const Tensor> in) {
  if (scope.backend().kind() != "cpu") {
    fail(ErrorKind::Unsupported, op_name(p.kind),
         "ScaLAPACK works on host memory; this engine's backend is ", scope.backend().kind());
  }
  link_gemv_guard();
  agreed(p.comm, [&] { check_local_inputs(p, in); });
  check_same_dtype(p, in[0].dtype());
  switch (in[0].dtype()) {
    case DType::F32:
      return run_typed<float>(p, scope, in);
    case DType::F64:
      return run_typed<double>(p, scope, in);
    case DType::C64:
      return run_typed<scalapack::c64>(p, scope, in);
    default:
      break;
  }
  return run_typed<scalapack::c128>(p, scope, in);
}

}  // namespace tenferro::dist::detail
