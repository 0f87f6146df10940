// The distributed linear algebra functions (distributed/linalg.hpp): checks
// on the global metadata every rank shares (so they fail alike without
// communication), then one ScaLAPACK op on the local blocks (scalapack_ops.cpp),
// whose results are wrapped with their global shapes and placements.

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "distributed/scalapack.hpp"
#include "distributed/truncation.hpp"
#include "tenferro/ad/composite.hpp"

namespace tenferro::dist::linalg {

namespace {

using detail::SlKind;
using detail::SlParams;

std::string shape_text(const Shape& s) {
  return shape_to_string(s.span());
}

template <class T>
SlParams params_for(SlKind kind, const BasicDTensor<T>& a, const char* op) {
  const BlockCyclicLayout layout = detail::layout_of(a, op);
  SlParams p;
  p.kind = kind;
  p.comm = a.mesh().comm().handle();
  p.grid = layout.grid;
  p.block = layout.block;
  return p;
}

/// Both operands on one mesh, in one ScaLAPACK layout.
template <class T>
void check_pair(const BasicDTensor<T>& a, const BasicDTensor<T>& b, const char* op) {
  detail::layout_of(b, op);
  if (!(a.mesh() == b.mesh())) {
    fail(ErrorKind::ContextMismatch, op, "the operands live on different meshes (",
         a.mesh().to_string(), " and ", b.mesh().to_string(),
         "); redistribute one onto the other's mesh first");
  }
  if (a.placements() != b.placements()) {
    fail(ErrorKind::InvalidArgument, op, "the operands' layouts differ (", a.to_string(), " and ",
         b.to_string(), "); bring both to one block size with dist::to_block_cyclic");
  }
}

template <class T>
void check_square(const BasicDTensor<T>& a, const char* op) {
  if (a.shape()[0] != a.shape()[1]) {
    fail(ErrorKind::ShapeMismatch, op, "needs a square matrix, got ", shape_text(a.shape()));
  }
}

/// The AD policy of `options` into the op's params, checked as the
/// single-process family checks it.
void set_ad(SlParams& p, const tenferro::linalg::SpectralOptions& o, const char* op) {
  if (!(o.eta > 0.0) || !std::isfinite(o.eta)) {
    fail(ErrorKind::InvalidArgument, op, "SpectralOptions::eta must be finite and > 0, got ",
         o.eta);
  }
  if (!(o.gauge_tolerance >= 0.0)) {
    fail(ErrorKind::InvalidArgument, op, "SpectralOptions::gauge_tolerance must be >= 0, got ",
         o.gauge_tolerance);
  }
  if (!(o.degeneracy_tolerance >= 0.0) || !std::isfinite(o.degeneracy_tolerance)) {
    fail(ErrorKind::InvalidArgument, op,
         "SpectralOptions::degeneracy_tolerance must be finite and >= 0, got ",
         o.degeneracy_tolerance);
  }
  if (!(o.component_tolerance >= 0.0) || !std::isfinite(o.component_tolerance)) {
    fail(ErrorKind::InvalidArgument, op,
         "SpectralOptions::component_tolerance must be finite and >= 0, got ",
         o.component_tolerance);
  }
  p.regularised = o.policy == tenferro::linalg::GaugePolicy::Regularised;
  p.eta = o.eta;
  p.gauge_tolerance = o.gauge_tolerance;
  p.degeneracy_tolerance = o.degeneracy_tolerance;
  p.component_tolerance = o.component_tolerance;
}

Placements replicated(const Mesh& mesh) {
  return Placements(static_cast<std::size_t>(mesh.ndim()), Replicate());
}

}  // namespace

template <class T>
BasicDTensor<T> matmul(const BasicDTensor<T>& a, const BasicDTensor<T>& b, char trans_a,
                       char trans_b) {
  const char* op = "dist::linalg::matmul";
  for (const char t : {trans_a, trans_b}) {
    if (t != 'N' && t != 'T' && t != 'C') {
      fail(ErrorKind::InvalidArgument, op, "a transpose flag is 'N', 'T' or 'C', got '", t, "'");
    }
  }
  SlParams p = params_for(SlKind::Gemm, a, op);
  check_pair(a, b, op);
  const bool ta = trans_a != 'N', tb = trans_b != 'N';
  p.m = a.shape()[ta ? 1 : 0];
  p.k = a.shape()[ta ? 0 : 1];
  p.n = b.shape()[tb ? 0 : 1];
  const std::int64_t kb = b.shape()[tb ? 1 : 0];
  if (kb != p.k) {
    fail(ErrorKind::ShapeMismatch, op, "op(A) is [", p.m, ", ", p.k, "] (A ", shape_text(a.shape()),
         ", '", trans_a, "') but op(B) has ", kb, " rows (B ", shape_text(b.shape()), ", '",
         trans_b, "')");
  }
  p.trans_a = trans_a;
  p.trans_b = trans_b;
  const auto out = detail::scalapack_call(p, std::vector<T>{a.local(), b.local()});
  return BasicDTensor<T>(Shape{p.m, p.n}, a.mesh(), a.placements(), out[0]);
}

template <class T>
BasicDTensor<T> transpose(const BasicDTensor<T>& a, bool conjugate) {
  SlParams p = params_for(SlKind::Tran, a, "dist::linalg::transpose");
  p.m = a.shape()[1];
  p.n = a.shape()[0];
  p.trans_a = conjugate ? 'C' : 'T';
  const auto out = detail::scalapack_call(p, std::vector<T>{a.local()});
  return BasicDTensor<T>(Shape{p.m, p.n}, a.mesh(), a.placements(), out[0]);
}

template <class T>
tenferro::linalg::SvdResult<BasicDTensor<T>> svd(const BasicDTensor<T>& a,
                                                 const tenferro::linalg::SpectralOptions& options) {
  SlParams p = params_for(SlKind::Svd, a, "dist::linalg::svd");
  set_ad(p, options, "dist::linalg::svd");
  p.m = a.shape()[0];
  p.n = a.shape()[1];
  const std::int64_t k = std::min(p.m, p.n);
  const auto out = detail::scalapack_call(p, std::vector<T>{a.local()});
  return {BasicDTensor<T>(Shape{p.m, k}, a.mesh(), a.placements(), out[0]),
          BasicDTensor<T>(Shape{k}, a.mesh(), replicated(a.mesh()), out[1]),
          BasicDTensor<T>(Shape{k, p.n}, a.mesh(), a.placements(), out[2])};
}

template <class T>
tenferro::linalg::TruncatedSvd<BasicDTensor<T>> svd_truncated(
    const BasicDTensor<T>& a, const tenferro::linalg::Truncation& truncation,
    const tenferro::linalg::SpectralOptions& options) {
  const char* op = "dist::linalg::svd_truncated";
  (void)tenferro::linalg::truncation_rank({}, truncation);  // validates the options
  const BlockCyclicLayout layout = detail::layout_of(a, op);
  auto f = svd(a, options);
  const std::int64_t k = f.S.shape()[0];
  const T& sv = f.S.local();
  const std::int64_t r = detail::kept_rank(sv, k, truncation, a.mesh(), op);
  // The first r columns of U and rows of Vh: a prefix of each local block.
  const BlacsGrid& g = layout.grid;
  const std::int64_t lr = shard_extent(r, g.rows, g.row, layout.block);
  const std::int64_t lc = shard_extent(r, g.cols, g.col, layout.block);
  auto dims = [](const auto& shape) {
    Shape out;
    for (const auto& d : shape) {
      if constexpr (std::is_same_v<T, TracedTensor>) {
        out.push_back(d.constant());
      } else {
        out.push_back(d);
      }
    }
    return out;
  };
  const Shape ud = dims(f.U.local().shape()), vd = dims(f.Vh.local().shape());
  const T u = slice(f.U.local(), Shape{0, 0}, Shape{ud[0], lc});
  const T vh = slice(f.Vh.local(), Shape{0, 0}, Shape{lr, vd[1]});
  const Placements whole(static_cast<std::size_t>(a.mesh().ndim()), Replicate());
  tenferro::linalg::TruncatedSvd<BasicDTensor<T>> out;
  out.U = BasicDTensor<T>(Shape{f.U.shape()[0], r}, a.mesh(), a.placements(), u);
  out.S = BasicDTensor<T>(Shape{r}, a.mesh(), whole, slice(sv, Shape{0}, Shape{r}));
  out.Vh = BasicDTensor<T>(Shape{r, f.Vh.shape()[1]}, a.mesh(), a.placements(), vh);
  out.rank = r;
  out.discarded_weight =
      BasicDTensor<T>(Shape{}, a.mesh(), whole, detail::discarded_weight(sv, r, k));
  return out;
}

template <class T>
tenferro::linalg::EigResult<BasicDTensor<T>> eigh(const BasicDTensor<T>& a, char uplo,
                                                  const tenferro::linalg::SpectralOptions& options,
                                                  EighSolver solver) {
  const char* op = "dist::linalg::eigh";
  if (uplo != 'L' && uplo != 'U') {
    fail(ErrorKind::InvalidArgument, op, "uplo is 'L' or 'U', got '", uplo, "'");
  }
  if (solver == EighSolver::Elpa && !has_elpa()) {
    fail(ErrorKind::Unsupported, op,
         "EighSolver::Elpa needs a build with ELPA (install libelpa-dev and reconfigure with "
         "TENFERRO_WITH_ELPA=ON); use EighSolver::Auto or EighSolver::ScaLapack");
  }
  SlParams p = params_for(SlKind::Eigh, a, op);
  set_ad(p, options, op);
  check_square(a, op);
  p.m = p.n = a.shape()[0];
  p.uplo = uplo;
  p.elpa = solver != EighSolver::ScaLapack && has_elpa();
  const auto out = detail::scalapack_call(p, std::vector<T>{a.local()});
  return {BasicDTensor<T>(Shape{p.n}, a.mesh(), replicated(a.mesh()), out[0]),
          BasicDTensor<T>(a.shape(), a.mesh(), a.placements(), out[1])};
}

template <class T>
std::pair<BasicDTensor<T>, BasicDTensor<T>> qr(const BasicDTensor<T>& a) {
  SlParams p = params_for(SlKind::Qr, a, "dist::linalg::qr");
  p.m = a.shape()[0];
  p.n = a.shape()[1];
  const std::int64_t k = std::min(p.m, p.n);
  const auto out = detail::scalapack_call(p, std::vector<T>{a.local()});
  return {BasicDTensor<T>(Shape{p.m, k}, a.mesh(), a.placements(), out[0]),
          BasicDTensor<T>(Shape{k, p.n}, a.mesh(), a.placements(), out[1])};
}

template <class T>
BasicDTensor<T> cholesky(const BasicDTensor<T>& a, bool upper) {
  const char* op = "dist::linalg::cholesky";
  SlParams p = params_for(SlKind::Cholesky, a, op);
  check_square(a, op);
  p.m = p.n = a.shape()[0];
  p.uplo = upper ? 'U' : 'L';
  const auto out = detail::scalapack_call(p, std::vector<T>{a.local()});
  return BasicDTensor<T>(a.shape(), a.mesh(), a.placements(), out[0]);
}

template <class T>
BasicDTensor<T> solve(const BasicDTensor<T>& a, const BasicDTensor<T>& b) {
  const char* op = "dist::linalg::solve";
  SlParams p = params_for(SlKind::Solve, a, op);
  check_pair(a, b, op);
  check_square(a, op);
  p.m = p.n = a.shape()[0];
  if (b.shape()[0] != p.n) {
    fail(ErrorKind::ShapeMismatch, op, "A is ", shape_text(a.shape()), " but B ",
         shape_text(b.shape()), " has ", b.shape()[0], " rows");
  }
  p.k = b.shape()[1];
  const auto out = detail::scalapack_call(p, std::vector<T>{a.local(), b.local()});
  return BasicDTensor<T>(b.shape(), b.mesh(), b.placements(), out[0]);
}

#define TENFERRO_DIST_LINALG_INSTANTIATE(T)                                                    \
  template BasicDTensor<T> matmul(const BasicDTensor<T>&, const BasicDTensor<T>&, char, char); \
  template tenferro::linalg::SvdResult<BasicDTensor<T>> svd(                                   \
      const BasicDTensor<T>&, const tenferro::linalg::SpectralOptions&);                       \
  template BasicDTensor<T> transpose(const BasicDTensor<T>&, bool);                            \
  template tenferro::linalg::EigResult<BasicDTensor<T>> eigh(                                  \
      const BasicDTensor<T>&, char, const tenferro::linalg::SpectralOptions&, EighSolver);     \
  template tenferro::linalg::TruncatedSvd<BasicDTensor<T>> svd_truncated(                      \
      const BasicDTensor<T>&, const tenferro::linalg::Truncation&,                             \
      const tenferro::linalg::SpectralOptions&);                                               \
  template std::pair<BasicDTensor<T>, BasicDTensor<T>> qr(const BasicDTensor<T>&);             \
  template BasicDTensor<T> cholesky(const BasicDTensor<T>&, bool);                             \
  template BasicDTensor<T> solve(const BasicDTensor<T>&, const BasicDTensor<T>&);
TENFERRO_DIST_LINALG_INSTANTIATE(EagerTensor)
TENFERRO_DIST_LINALG_INSTANTIATE(TracedTensor)
#undef TENFERRO_DIST_LINALG_INSTANTIATE

}  // namespace tenferro::dist::linalg
