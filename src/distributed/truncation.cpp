// The truncated decompositions' shared parts (truncation.hpp) and
// dist::linalg::eigh_truncated: eigh, then the eigenpairs of largest |w|.
// svd_truncated (scalapack_linalg.cpp) keeps a prefix of each rank's local
// blocks; eigh_truncated's kept vectors are not a prefix (the largest |w|
// sit at both ends of eigh's ascending order, interleaved), so it gathers
// them with a product by a selection matrix, a pdgemm.

#include "distributed/truncation.hpp"

#include <mpi.h>

#include <type_traits>

#include "tenferro/ad/composite.hpp"
#include "tenferro/distributed/linalg.hpp"

namespace tenferro::dist::detail {

template <class T>
std::int64_t kept_rank(const T& sorted, std::int64_t k,
                       const tenferro::linalg::Truncation& truncation, const Mesh& mesh,
                       const char* op) {
  (void)tenferro::linalg::truncation_rank({}, truncation);  // validates the options
  if constexpr (std::is_same_v<T, TracedTensor>) {
    (void)sorted;
    (void)mesh;
    if (truncation.cutoff != 0 || truncation.max_discarded_weight != 0) {
      fail(ErrorKind::Unsupported, op,
           "a traced program over sharded tensors needs a constant rank: set only max_rank "
           "(a cutoff or a weight bound makes the rank depend on the values)");
    }
    return k == 0 ? 0
                  : std::max<std::int64_t>(
                        1, truncation.max_rank < 0 ? k : std::min(k, truncation.max_rank));
  } else {
    NoGradGuard off;
    const std::vector<double> mags = convert(abs(sorted), f64).value().template to_vector<double>();
    const std::int64_t r = tenferro::linalg::truncation_rank(mags, truncation);
    // The values are bitwise equal on every rank (broadcast by the
    // decomposition), so is r; checked.
    std::int64_t lo = 0, hi = 0;
    const MPI_Comm comm = mesh.comm().handle();
    MPI_Allreduce(&r, &lo, 1, MPI_INT64_T, MPI_MIN, comm);
    MPI_Allreduce(&r, &hi, 1, MPI_INT64_T, MPI_MAX, comm);
    if (lo != hi) {
      fail(ErrorKind::Internal, op, "the ranks chose kept ranks from ", lo, " to ", hi,
           " from values that should be equal everywhere; please report this");
    }
    return r;
  }
}

template <class T>
T discarded_weight(const T& sorted, std::int64_t r, std::int64_t k) {
  if (k == 0) return sum(sorted);
  const T mag = abs(sorted);
  const T top = amax(mag, {0}, true);
  const T rel = div(mag, where(gt(top, zeros_like(top)), top, ones_like(top)));
  const T sq = mul(rel, rel);
  const T total = sum(sq, {0});
  const T tail = sum(slice(sq, Shape{r}, Shape{k}), {0});
  const T positive = gt(total, zeros_like(total));
  return where(positive, div(tail, where(positive, total, ones_like(total))), zeros_like(total));
}

namespace {

/// A filled tensor of tier T (the eager one on `like`'s runtime).
template <class T>
T filled(const T& like, const Shape& shape, double value, DType dtype) {
  if constexpr (std::is_same_v<T, TracedTensor>) {
    (void)like;
    return traced_full(SymShape(shape.begin(), shape.end()), Scalar(value), dtype);
  } else {
    return like.runtime()->tensor(full(shape.span(), Scalar(value), dtype));
  }
}

}  // namespace

#define TENFERRO_DIST_TRUNCATION(T)                                                               \
  template std::int64_t kept_rank<T>(const T&, std::int64_t, const tenferro::linalg::Truncation&, \
                                     const Mesh&, const char*);                                   \
  template T discarded_weight<T>(const T&, std::int64_t, std::int64_t);
TENFERRO_DIST_TRUNCATION(EagerTensor)
TENFERRO_DIST_TRUNCATION(TracedTensor)
#undef TENFERRO_DIST_TRUNCATION

}  // namespace tenferro::dist::detail

namespace tenferro::dist::linalg {

template <class T>
tenferro::linalg::TruncatedEigh<BasicDTensor<T>> eigh_truncated(
    const BasicDTensor<T>& a, const tenferro::linalg::Truncation& truncation, char uplo,
    const tenferro::linalg::SpectralOptions& options, EighSolver solver) {
  const char* op = "dist::linalg::eigh_truncated";
  // Bad options fail before the decomposition, on every rank alike.
  (void)tenferro::linalg::truncation_rank({}, truncation);
  const auto f = eigh(a, uplo, options, solver);
  const std::int64_t n = f.eigenvalues.shape()[0];
  const Placements whole(static_cast<std::size_t>(a.mesh().ndim()), Replicate());
  tenferro::linalg::TruncatedEigh<BasicDTensor<T>> out;
  const T& w = f.eigenvalues.local();
  if (n == 0) {
    out.eigenvalues = f.eigenvalues;
    out.eigenvectors = f.eigenvectors;
    out.discarded_weight = BasicDTensor<T>(Shape{}, a.mesh(), whole, sum(w));
    return out;
  }
  // Descending |w|, stable (equal magnitudes keep eigh's ascending order):
  // the single-process family's order. w is Replicate, so every rank sorts
  // the same bits.
  const T order = argsort(abs(w), 0, /*descending=*/true);
  const T sorted = take_along_axis(w, order, 0);
  const std::int64_t r = detail::kept_rank(sorted, n, truncation, a.mesh(), op);
  out.rank = r;
  out.eigenvalues = BasicDTensor<T>(Shape{r}, a.mesh(), whole, slice(sorted, Shape{0}, Shape{r}));
  out.discarded_weight =
      BasicDTensor<T>(Shape{}, a.mesh(), whole, detail::discarded_weight(sorted, r, n));
  // The kept vectors V[:, order[:r]] = V P with P [n, r], P[order[j], j] = 1
  // (exact: one product by 1 and sums of zeros per element), in A's layout:
  // 2 n^2 r flops, small beside eigh's, and pdgemm's traffic. P is built on
  // every rank from the Replicate order (no data of its own to send) and
  // carries no derivative; V's gradient is P's transpose applied by matmul's
  // rule.
  const DType vt = f.eigenvectors.dtype();
  const T index = reshape(slice(order, Shape{0}, Shape{r}), Shape{1, r});
  const T select = scatter_add(detail::filled(w, Shape{n, r}, 0.0, vt), 0, index,
                               detail::filled(w, Shape{1, r}, 1.0, vt));
  const BasicDTensor<T> p = distribute(select, a.mesh(), a.placements());
  out.eigenvectors = dist::linalg::matmul(f.eigenvectors, p);
  return out;
}

#define TENFERRO_DIST_EIGH_TRUNCATED(T)                                     \
  template tenferro::linalg::TruncatedEigh<BasicDTensor<T>> eigh_truncated( \
      const BasicDTensor<T>&, const tenferro::linalg::Truncation&, char,    \
      const tenferro::linalg::SpectralOptions&, EighSolver);
TENFERRO_DIST_EIGH_TRUNCATED(EagerTensor)
TENFERRO_DIST_EIGH_TRUNCATED(TracedTensor)
#undef TENFERRO_DIST_EIGH_TRUNCATED

}  // namespace tenferro::dist::linalg
