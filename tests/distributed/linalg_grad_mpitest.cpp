// Derivatives of the distributed decompositions (svd, svd_truncated, eigh,
// qr, cholesky) under mpirun -np 1, 2 and 4, on every r x c grid of the
// ranks (1x1; 1x2, 2x1; 1x4, 2x2, 4x1; and the 1-D line as a 1xP grid) with
// blocks of 2 and 3 (partial last blocks): gradients equal the
// single-process family's to 1e-10 relative (f64, c128; eager
// dist::backward and traced dist::grad), forward mode (jvp) equals the
// single-process jvp and the reverse mode's <grad, v> (adjoint
// consistency), and degenerate or phase-dependent losses raise the
// single-process family's error kind on every rank (Strict) or give its
// values (Regularised).

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <type_traits>

#include "distributed/mpi_test_util.hpp"
#include "tenferro/distributed/linalg.hpp"

using namespace tenferro;
using namespace mpitest;
using dist::DTensor;

namespace {

struct Grid {
  std::string name;
  dist::Mesh mesh;
};

/// Every r x c grid of the world's ranks, made once.
const std::vector<Grid>& grids() {
  static const std::vector<Grid> all = [] {
    std::vector<Grid> v;
    const dist::Communicator world = dist::Communicator::world();
    const int p = world.size();
    for (int r = 1; r <= p; ++r) {
      if (p % r == 0) {
        v.push_back(
            {std::to_string(r) + "x" + std::to_string(p / r), dist::Mesh(world, {r, p / r})});
      }
    }
    return v;
  }();
  return all;
}

EagerTensor eager(const Tensor& t) {
  return runtime()->tensor(t);
}

Tensor random_matrix(std::int64_t m, std::int64_t n, DType dt, std::uint64_t seed) {
  Generator gen(seed);
  return randn({m, n}, dt, gen);
}

DTensor place(const Tensor& full, const Grid& g, std::int64_t block) {
  return dist::distribute(eager(full), g.mesh, dist::block_cyclic_placements(g.mesh, block));
}

/// Replicate on every mesh axis.
dist::Placements everywhere(const dist::Mesh& mesh) {
  return dist::Placements(static_cast<std::size_t>(mesh.ndim()), dist::Replicate());
}

DTensor replicate(const Tensor& full, const Grid& g) {
  return dist::distribute(eager(full), g.mesh, everywhere(g.mesh));
}

Tensor whole(const DTensor& d) {
  return dist::full_tensor(d).value();
}

std::string what(const Grid& g, DType dt, std::int64_t block, const std::string& more = "") {
  return g.name + " " + std::string(name(dt)) + " nb=" + std::to_string(block) + " " + more;
}

/// Weights of a gauge-invariant loss of spectral factors: sum(|X|^2 * W)
/// per vector factor (invariant under a phase per vector) plus sum(s * w).
struct Weights {
  Tensor left, right, values;
};
Weights weights(std::int64_t rows, std::int64_t k, std::int64_t cols, std::uint64_t seed) {
  return {random_matrix(rows, k, f64, seed), random_matrix(k, cols, f64, seed + 1),
          random_matrix(k, 1, f64, seed + 2).reshape({k})};
}

template <class T>
T abs2(const T& x) {
  return square(abs(x));
}

/// A constant of tier T.
template <class T>
T lift(const Tensor& t) {
  if constexpr (std::is_same_v<T, TracedTensor>) {
    return constant(t);
  } else {
    return eager(t);
  }
}

/// The single-process loss; `parts` picks its terms (1: vectors, 2:
/// values, 4: the right vectors).
EagerTensor loss_of(const EagerTensor& u, const EagerTensor& s, const EagerTensor& vh,
                    const Weights& w, int parts = 7) {
  std::optional<EagerTensor> l;
  auto add = [&](const EagerTensor& t) { l = l ? *l + t : t; };
  if (parts & 1) add(sum(abs2(u) * eager(w.left)));
  if (parts & 2) add(sum(s * eager(w.values)));
  if (parts & 4) add(sum(abs2(vh) * eager(w.right)));
  return *l;
}

/// The same loss of distributed factors (a Replicate scalar), in tier T.
template <class T>
dist::BasicDTensor<T> loss_of(const dist::BasicDTensor<T>& u, const dist::BasicDTensor<T>& s,
                              const dist::BasicDTensor<T>& vh, const Weights& w, const Grid& g,
                              std::int64_t nb, int parts = 7) {
  using D = dist::BasicDTensor<T>;
  const auto pl = dist::block_cyclic_placements(g.mesh, nb);
  const dist::Placements rep = everywhere(g.mesh);
  auto sq = [](const T& t) { return abs2(t); };
  std::optional<D> l;
  auto add = [&](const D& t) { l = l ? *l + t : t; };
  if (parts & 1) add(dist::sum(dist::map(u, sq) * dist::distribute(lift<T>(w.left), g.mesh, pl)));
  if (parts & 2) add(dist::sum(s * dist::distribute(lift<T>(w.values), g.mesh, rep)));
  if (parts & 4) add(dist::sum(dist::map(vh, sq) * dist::distribute(lift<T>(w.right), g.mesh, pl)));
  return dist::redistribute(*l, rep);
}

/// The derivative of loss(A) along v in the distributed eager tier: forward
/// mode through the local blocks (the jvp rules).
double dist_jvp(const Tensor& a, const Tensor& v, const Grid& g, std::int64_t nb,
                const std::function<DTensor(const DTensor&)>& loss) {
  const DTensor da = place(a, g, nb), dv = place(v, g, nb);
  const auto f = [&](const EagerTensor& x) {
    return loss(DTensor(da.shape(), g.mesh, da.placements(), x)).local();
  };
  return jvp_tangent(f, da.local(), dv.local()).value().item<double>();
}

/// Re <a, b> = Re sum(conj(a) b) of two tensors.
double inner(const Tensor& a, const Tensor& b) {
  return sum(real(conj(eager(a)) * eager(b))).value().item<double>();
}

constexpr std::int64_t kBlocks[] = {2, 3};

/// The error kind of `f` on one process (Internal when it does not throw).
ErrorKind error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  return ErrorKind::Internal;
}

/// The gradient and the jvp along v of a loss of one matrix, distributed
/// (on every grid and block size) against one process: gradients to 1e-10
/// relative, jvp to one process's and to <grad, v> (adjoint consistency).
void expect_derivatives_match(
    const Tensor& a, const Tensor& v,
    const std::function<EagerTensor(const EagerTensor&)>& local_loss,
    const std::function<DTensor(const DTensor&, const Grid&, std::int64_t)>& dist_loss,
    const std::string& label) {
  const EagerTensor ref_grad = grad(local_loss, eager(a));
  const double ref_jvp = jvp_tangent(local_loss, eager(a), eager(v)).value().item<double>();
  const double scale = 1 + std::abs(ref_jvp);
  for (const auto& g : grids()) {
    for (const std::int64_t nb : kBlocks) {
      const std::string at = what(g, a.dtype(), nb, label);
      const auto loss = [&](const DTensor& x) { return dist_loss(x, g, nb); };
      DTensor da = place(a, g, nb);
      da.requires_grad_();
      dist::backward(loss(da));
      EXPECT_EQ(da.grad().placements(), da.placements()) << at;
      EXPECT_LT(rel(whole(da.grad()), ref_grad.value()), 1e-10) << at;
      const double forward = dist_jvp(a, v, g, nb, loss);
      EXPECT_LT(std::abs(forward - ref_jvp), 1e-10 * scale) << at;
      EXPECT_LT(std::abs(forward - inner(whole(da.grad()), v)), 1e-10 * scale) << at;
    }
  }
}

/// sum(Re(X) * W) of a distributed matrix (a Replicate scalar).
DTensor sum_real_weighted(const DTensor& x, const Tensor& w, const Grid& g, std::int64_t nb) {
  const auto re = [](const EagerTensor& t) { return real(t); };
  return dist::sum(dist::map(x, re) * place(w, g, nb));
}

}  // namespace

TEST(ScalapackGrad, SvdGradientsEqualOneProcess) {
  const std::pair<std::int64_t, std::int64_t> shapes[] = {{9, 7}, {7, 9}, {8, 8}};
  for (const DType dt : {f64, c128}) {
    for (const auto& [m, n] : shapes) {
      const std::int64_t k = std::min(m, n);
      const Tensor a = random_matrix(m, n, dt, 100 + static_cast<std::uint64_t>(m));
      const Weights w = weights(m, k, n, 200);
      // Every cotangent, then one factor at a time (the rules' branches).
      for (const int parts : {7, 1, 2, 4}) {
        EagerTensor ea = runtime()->variable(a);
        const auto ref = tenferro::linalg::svd(ea, false);
        loss_of(ref.U, ref.S, ref.Vh, w, parts).backward();
        for (const auto& g : grids()) {
          for (const std::int64_t nb : kBlocks) {
            if (parts != 7 && nb != 2) continue;
            DTensor da = place(a, g, nb);
            da.requires_grad_();
            const auto f = dist::linalg::svd(da);
            dist::backward(loss_of(f.U, f.S, f.Vh, w, g, nb, parts));
            const std::string at = what(g, dt, nb, std::to_string(m) + "x" + std::to_string(n)) +
                                   " parts " + std::to_string(parts);
            EXPECT_EQ(da.grad().placements(), da.placements()) << at;
            EXPECT_LT(rel(whole(da.grad()), ea.grad().value()), 1e-10) << at;
          }
        }
      }
    }
  }
}

TEST(ScalapackGrad, SvdJvpEqualsOneProcessAndTheVjp) {
  const std::pair<std::int64_t, std::int64_t> shapes[] = {{9, 7}, {7, 9}};
  for (const DType dt : {f64, c128}) {
    for (const auto& [m, n] : shapes) {
      const std::int64_t k = std::min(m, n);
      const Weights w = weights(m, k, n, 210);
      expect_derivatives_match(
          random_matrix(m, n, dt, 110), random_matrix(m, n, dt, 111),
          [&](const EagerTensor& x) {
            const auto f = tenferro::linalg::svd(x, false);
            return loss_of(f.U, f.S, f.Vh, w);
          },
          [&](const DTensor& x, const Grid& g, std::int64_t nb) {
            const auto f = dist::linalg::svd(x);
            return loss_of(f.U, f.S, f.Vh, w, g, nb);
          },
          "svd " + std::to_string(m) + "x" + std::to_string(n));
    }
  }
}

TEST(ScalapackGrad, TruncatedSvdGradientsEqualOneProcess) {
  using tenferro::linalg::Truncation;
  std::vector<Truncation> truncations(2);
  truncations[0].max_rank = 4;
  truncations[1].cutoff = 0.3;
  for (const DType dt : {f64, c128}) {
    const Tensor a = random_matrix(9, 7, dt, 120);
    for (std::size_t t = 0; t < truncations.size(); ++t) {
      EagerTensor ea = runtime()->variable(a);
      const auto ref = tenferro::linalg::svd_truncated(ea, truncations[t]);
      const std::int64_t r = ref.rank;
      ASSERT_LT(r, 7);  // something is cut
      const Weights w = weights(9, r, 7, 220);
      (loss_of(ref.U, ref.S, ref.Vh, w) + ref.discarded_weight * eager(Tensor::scalar(Scalar(3.0))))
          .backward();
      for (const auto& g : grids()) {
        for (const std::int64_t nb : kBlocks) {
          const std::string at = what(g, dt, nb, "truncation " + std::to_string(t));
          DTensor da = place(a, g, nb);
          da.requires_grad_();
          const auto f = dist::linalg::svd_truncated(da, truncations[t]);
          ASSERT_EQ(f.rank, r) << at;
          dist::backward(loss_of(f.U, f.S, f.Vh, w, g, nb) +
                         f.discarded_weight * replicate(Tensor::scalar(Scalar(3.0)), g));
          EXPECT_LT(rel(whole(da.grad()), ea.grad().value()), 1e-10) << at;
        }
      }
    }
  }
}

TEST(ScalapackGrad, EighGradientsAndJvpEqualOneProcess) {
  const std::int64_t n = 8;
  for (const DType dt : {f64, c128}) {
    // Not Hermitian: each uplo reads its own triangle, and so does its gradient.
    const Tensor a = random_matrix(n, n, dt, 130), v = random_matrix(n, n, dt, 131);
    const Weights w = weights(n, n, n, 230);
    for (const char uplo : {'L', 'U'}) {
      expect_derivatives_match(
          a, v,
          [&](const EagerTensor& x) {
            const auto f = tenferro::linalg::eigh(x, uplo);
            return loss_of(f.eigenvectors, f.eigenvalues, f.eigenvectors, w, 3);
          },
          [&](const DTensor& x, const Grid& g, std::int64_t nb) {
            const auto f = dist::linalg::eigh(x, uplo);
            return loss_of(f.eigenvectors, f.eigenvalues, f.eigenvectors, w, g, nb, 3);
          },
          std::string("eigh ") + uplo);
    }
  }
}

TEST(ScalapackGrad, TruncatedEighGradientsAndJvpEqualOneProcess) {
  using tenferro::linalg::Truncation;
  const std::int64_t n = 8;
  std::vector<Truncation> truncations(2);
  truncations[0].max_rank = 4;
  truncations[1].cutoff = 2.0;
  for (const DType dt : {f64, c128}) {
    const Tensor a = random_matrix(n, n, dt, 135), v = random_matrix(n, n, dt, 136);
    for (std::size_t t = 0; t < truncations.size(); ++t) {
      const std::int64_t r = tenferro::linalg::eigh_truncated(eager(a), truncations[t]).rank;
      ASSERT_LT(r, n);  // something is cut
      const Weights w = weights(n, r, n, 235);
      const Tensor three = Tensor::scalar(Scalar(3.0));
      expect_derivatives_match(
          a, v,
          [&](const EagerTensor& x) {
            const auto f = tenferro::linalg::eigh_truncated(x, truncations[t]);
            return loss_of(f.eigenvectors, f.eigenvalues, f.eigenvectors, w, 3) +
                   f.discarded_weight * eager(three);
          },
          [&](const DTensor& x, const Grid& g, std::int64_t nb) {
            const auto f = dist::linalg::eigh_truncated(x, truncations[t]);
            return loss_of(f.eigenvectors, f.eigenvalues, f.eigenvectors, w, g, nb, 3) +
                   f.discarded_weight * replicate(three, g);
          },
          "eigh_truncated " + std::to_string(t));
    }
  }
}

namespace {

/// Q1 diag(s) Q2^H with orthonormal Q1 [m, k], Q2 [n, k] (the same on every
/// rank); Q1 diag(s) Q1^H when `hermitian`.
Tensor with_values(std::int64_t m, std::int64_t n, const std::vector<double>& s, DType dt,
                   std::uint64_t seed, bool hermitian = false) {
  const auto k = static_cast<std::int64_t>(s.size());
  const EagerTensor q1 = tenferro::linalg::qr(eager(random_matrix(m, k, dt, seed))).first;
  const EagerTensor q2 =
      hermitian ? q1 : tenferro::linalg::qr(eager(random_matrix(n, k, dt, seed + 1))).first;
  const EagerTensor d = convert(eager(Tensor::from_col_major(Shape{k}, s)), dt);
  return matmul(q1 * d, conj(transpose(q2))).value();
}

}  // namespace

TEST(ScalapackGrad, DegenerateSpectraGiveTheSameErrorsOrValuesAsOneProcess) {
  using tenferro::linalg::GaugePolicy;
  using tenferro::linalg::SpectralOptions;
  const std::vector<double> s = {5, 3, 3, 2, 1, 0.5, 0.25};
  SpectralOptions regularised;
  regularised.policy = GaugePolicy::Regularised;
  for (const DType dt : {f64, c128}) {
    const Tensor a = with_values(9, 7, s, dt, 140);
    const Weights w = weights(9, 7, 7, 240);
    // Strict, a loss of the basis inside the degenerate pair: GaugeIllDefined.
    EagerTensor ea = runtime()->variable(a);
    const auto ref = tenferro::linalg::svd(ea, false);
    EXPECT_EQ(error_of([&] { loss_of(ref.U, ref.S, ref.Vh, w).backward(); }),
              ErrorKind::GaugeIllDefined);
    EXPECT_EQ(error_of([&] {
                (void)jvp_tangent(
                    [&](const EagerTensor& x) {
                      const auto fx = tenferro::linalg::svd(x, false);
                      return loss_of(fx.U, fx.S, fx.Vh, w);
                    },
                    eager(a), eager(random_matrix(9, 7, dt, 242)));
              }),
              ErrorKind::GaugeIllDefined);
    // A loss of the whole subspace (U Vh) and sum(S): exact values.
    const Weights ones{random_matrix(9, 7, f64, 241), {}, {}};
    EagerTensor eb = runtime()->variable(a);
    const auto rb = tenferro::linalg::svd(eb, false);
    (sum(rb.S) + sum(abs2(matmul(rb.U, rb.Vh)) * eager(ones.left))).backward();
    // Regularised: the same loss through the broadened gap factors.
    EagerTensor ec = runtime()->variable(a);
    const auto rc = tenferro::linalg::svd(ec, false, regularised);
    (sum(rc.S) + sum(abs2(matmul(rc.U, rc.Vh)) * eager(ones.left))).backward();
    for (const auto& g : grids()) {
      const std::string at = what(g, dt, 2);
      DTensor da = place(a, g, 2);
      da.requires_grad_();
      const auto f = dist::linalg::svd(da);
      EXPECT_EQ(same_error_everywhere([&] { dist::backward(loss_of(f.U, f.S, f.Vh, w, g, 2)); },
                                      g.mesh.comm()),
                ErrorKind::GaugeIllDefined)
          << at;
      // Forward mode: a tangent that splits the pair makes dU undefined.
      const Tensor v = random_matrix(9, 7, dt, 242);
      EXPECT_EQ(same_error_everywhere(
                    [&] {
                      (void)dist_jvp(a, v, g, 2, [&](const DTensor& x) {
                        const auto fx = dist::linalg::svd(x);
                        return loss_of(fx.U, fx.S, fx.Vh, w, g, 2);
                      });
                    },
                    g.mesh.comm()),
                ErrorKind::GaugeIllDefined)
          << at;
      const auto sq = [](const EagerTensor& t) { return abs2(t); };
      const dist::Placements rep = everywhere(g.mesh);
      DTensor db = place(a, g, 2);
      db.requires_grad_();
      const auto fb = dist::linalg::svd(db);
      dist::backward(dist::redistribute(
          dist::sum(fb.S) +
              dist::sum(dist::map(dist::linalg::matmul(fb.U, fb.Vh), sq) * place(ones.left, g, 2)),
          rep));
      EXPECT_LT(rel(whole(db.grad()), eb.grad().value()), 1e-10) << at;
      DTensor dc = place(a, g, 2);
      dc.requires_grad_();
      const auto fc = dist::linalg::svd(dc, regularised);
      dist::backward(dist::redistribute(
          dist::sum(fc.S) +
              dist::sum(dist::map(dist::linalg::matmul(fc.U, fc.Vh), sq) * place(ones.left, g, 2)),
          rep));
      // Complex pairs: the Regularised rule keeps the imaginary diagonal of
      // the pair's block of U^H gU - V^H gV but drops its off-diagonal, a
      // split that depends on the basis LAPACK or ScaLAPACK picked inside
      // the subspace (two single-process bases differ as much), so its
      // values are compared for real dtypes.
      if (dt == f64) {
        EXPECT_LT(rel(whole(dc.grad()), ec.grad().value()), 1e-10) << at;
      }
      EXPECT_LT(rel(whole(dc.grad()), whole(db.grad())), 0.1) << at;
    }
  }
  // eigh: a degenerate pair of eigenvalues; the eigenvector loss is an error.
  const Tensor sym = with_values(8, 8, {4, 2, 2, 1, -1, -3, 0.5, 6}, f64, 150, true);
  const Weights w = weights(8, 8, 8, 250);
  EagerTensor ea = runtime()->variable(sym);
  const auto ref = tenferro::linalg::eigh(ea);
  EXPECT_EQ(error_of([&] {
              loss_of(ref.eigenvectors, ref.eigenvalues, ref.eigenvectors, w, 1).backward();
            }),
            ErrorKind::GaugeIllDefined);
  for (const auto& g : grids()) {
    DTensor da = place(sym, g, 3);
    da.requires_grad_();
    const auto f = dist::linalg::eigh(da);
    EXPECT_EQ(
        same_error_everywhere(
            [&] {
              dist::backward(loss_of(f.eigenvectors, f.eigenvalues, f.eigenvectors, w, g, 3, 1));
            },
            g.mesh.comm()),
        ErrorKind::GaugeIllDefined)
        << g.name;
  }
  // A loss of V diag(c) V^H with c equal on the pair (eigenvalues 4 and 5,
  // ascending): blind to the pair's basis; Strict and Regularised values
  // equal one process's.
  const Tensor c = Tensor::from_col_major(Shape{8}, std::vector<double>{1, 2, 3, 4, 5, 5, 6, 7});
  for (const bool reg : {false, true}) {
    SpectralOptions o;
    if (reg) o.policy = GaugePolicy::Regularised;
    EagerTensor eb = runtime()->variable(sym);
    const auto rb = tenferro::linalg::eigh(eb, 'L', o);
    sum(abs2(matmul(rb.eigenvectors * eager(c), transpose(rb.eigenvectors))) * eager(w.left))
        .backward();
    for (const auto& g : grids()) {
      DTensor db = place(sym, g, 3);
      db.requires_grad_();
      const auto f = dist::linalg::eigh(db, 'L', o);
      const DTensor vc = f.eigenvectors * replicate(c, g);
      const auto sq = [](const EagerTensor& t) { return abs2(t); };
      dist::backward(dist::redistribute(
          dist::sum(dist::map(dist::linalg::matmul(vc, f.eigenvectors, 'N', 'C'), sq) *
                    place(w.left, g, 3)),
          everywhere(g.mesh)));
      EXPECT_LT(rel(whole(db.grad()), eb.grad().value()), 1e-10)
          << g.name << (reg ? " regularised" : " strict");
    }
  }
}

TEST(ScalapackGrad, PhaseDependentLossesAreGaugeErrorsOnEveryRank) {
  const Tensor a = random_matrix(9, 7, c128, 160);
  const Tensor w = random_matrix(9, 7, f64, 161);
  EagerTensor ea = runtime()->variable(a);
  const auto ref = tenferro::linalg::svd(ea, false);
  EXPECT_EQ(error_of([&] { sum(real(ref.U) * eager(w)).backward(); }), ErrorKind::GaugeIllDefined);
  for (const auto& g : grids()) {
    DTensor da = place(a, g, 2);
    da.requires_grad_();
    const auto f = dist::linalg::svd(da);
    const auto re = [](const EagerTensor& t) { return real(t); };
    EXPECT_EQ(same_error_everywhere(
                  [&] {
                    dist::backward(dist::redistribute(
                        dist::sum(dist::map(f.U, re) * place(w, g, 2)), everywhere(g.mesh)));
                  },
                  g.mesh.comm()),
              ErrorKind::GaugeIllDefined)
        << g.name;
  }
}

TEST(ScalapackGrad, TracedGradientsEqualOneProcess) {
  const Tensor a = random_matrix(9, 7, c128, 170);
  const Tensor h = random_matrix(8, 8, c128, 171);
  const Weights w = weights(9, 7, 7, 270), wt = weights(9, 3, 7, 271), we = weights(8, 8, 8, 272);
  tenferro::linalg::Truncation keep3;
  keep3.max_rank = 3;
  EagerTensor ea = runtime()->variable(a), et = runtime()->variable(a), eh = runtime()->variable(h);
  const auto rs = tenferro::linalg::svd(ea, false);
  loss_of(rs.U, rs.S, rs.Vh, w).backward();
  const auto rt = tenferro::linalg::svd_truncated(et, keep3);
  loss_of(rt.U, rt.S, rt.Vh, wt).backward();
  const auto re = tenferro::linalg::eigh(eh);
  loss_of(re.eigenvectors, re.eigenvalues, re.eigenvectors, we, 3).backward();
  // qr and cholesky (of H H^H + 8 I) in one program.
  EagerTensor eq = runtime()->variable(a), ec = runtime()->variable(h);
  const EagerTensor spd = matmul(ec, conj(transpose(ec))) + eager(eye(8, 8, c128)) * Scalar(8.0);
  const auto [q, r] = tenferro::linalg::qr(eq);
  (sum(real(q) * eager(w.left)) + sum(real(tenferro::linalg::cholesky(spd)) * eager(we.left)))
      .backward();
  for (const auto& g : grids()) {
    const TracedTensor xa = placeholder(c128, {9, 7}), xh = placeholder(c128, {8, 8});
    const auto pl = dist::block_cyclic_placements(g.mesh, 2);
    const dist::TracedDTensor da = dist::distribute(xa, g.mesh, pl);
    const dist::TracedDTensor dh = dist::distribute(xh, g.mesh, pl);
    const auto fs = dist::linalg::svd(da);
    const auto ft = dist::linalg::svd_truncated(da, keep3);
    const auto fe = dist::linalg::eigh(dh);
    const auto gs = dist::grad(loss_of(fs.U, fs.S, fs.Vh, w, g, 2), {da});
    const auto gt = dist::grad(loss_of(ft.U, ft.S, ft.Vh, wt, g, 2), {da});
    const auto ge =
        dist::grad(loss_of(fe.eigenvectors, fe.eigenvalues, fe.eigenvectors, we, g, 2, 3), {dh});
    const auto [dq, dr] = dist::linalg::qr(da);
    const dist::TracedDTensor dspd =
        dist::linalg::matmul(dh, dh, 'N', 'C') +
        dist::distribute(constant((eager(eye(8, 8, c128)) * Scalar(8.0)).value()), g.mesh, pl);
    const auto re_of = [](const TracedTensor& t) { return real(t); };
    const auto wl = [&](const Tensor& t) { return dist::distribute(constant(t), g.mesh, pl); };
    const auto gf =
        dist::grad(dist::redistribute(
                       dist::sum(dist::map(dq, re_of) * wl(w.left)) +
                           dist::sum(dist::map(dist::linalg::cholesky(dspd), re_of) * wl(we.left)),
                       everywhere(g.mesh)),
                   {da, dh});
    const Program p =
        compile({dist::full_tensor(gs[0]), dist::full_tensor(gt[0]), dist::full_tensor(ge[0]),
                 dist::full_tensor(gf[0]), dist::full_tensor(gf[1])},
                {xa, xh});
    const auto out = run_compiled(*runtime()->runtime(), p, {a, h});
    EXPECT_LT(rel(out[0], ea.grad().value()), 1e-10) << g.name;
    EXPECT_LT(rel(out[1], et.grad().value()), 1e-10) << g.name;
    EXPECT_LT(rel(out[2], eh.grad().value()), 1e-10) << g.name;
    EXPECT_LT(rel(out[3], eq.grad().value()), 1e-10) << g.name;
    EXPECT_LT(rel(out[4], ec.grad().value()), 1e-10) << g.name;
  }
}

TEST(ScalapackGrad, QrDerivativesEqualOneProcess) {
  const std::pair<std::int64_t, std::int64_t> shapes[] = {{9, 7}, {7, 9}, {8, 8}};
  for (const DType dt : {f64, c128}) {
    for (const auto& [m, n] : shapes) {
      const std::int64_t k = std::min(m, n);
      const Tensor a = random_matrix(m, n, dt, 180), v = random_matrix(m, n, dt, 181);
      const Tensor wq = random_matrix(m, k, f64, 182), wr = random_matrix(k, n, f64, 183);
      // QR has no gauge freedom: a loss of the real parts sees every phase.
      expect_derivatives_match(
          a, v,
          [&](const EagerTensor& x) {
            const auto [q, r] = tenferro::linalg::qr(x);
            return sum(real(q) * eager(wq)) + sum(real(r) * eager(wr));
          },
          [&](const DTensor& x, const Grid& g, std::int64_t nb) {
            const auto [q, r] = dist::linalg::qr(x);
            return dist::redistribute(
                sum_real_weighted(q, wq, g, nb) + sum_real_weighted(r, wr, g, nb),
                everywhere(g.mesh));
          },
          "qr " + std::to_string(m) + "x" + std::to_string(n));
    }
  }
}

TEST(ScalapackGrad, CholeskyDerivativesEqualOneProcess) {
  const std::int64_t n = 8;
  for (const DType dt : {f64, c128}) {
    const EagerTensor b = eager(random_matrix(n, n, dt, 190));
    const Tensor a =
        (matmul(b, conj(transpose(b))) + eager(eye(n, n, dt)) * Scalar(double(n))).value();
    const EagerTensor c = eager(random_matrix(n, n, dt, 191));
    const Tensor v = (c + conj(transpose(c))).value();  // a Hermitian direction
    const Tensor w = random_matrix(n, n, f64, 192);
    for (const bool upper : {false, true}) {
      expect_derivatives_match(
          a, v,
          [&](const EagerTensor& x) {
            return sum(real(tenferro::linalg::cholesky(x, upper)) * eager(w));
          },
          [&](const DTensor& x, const Grid& g, std::int64_t nb) {
            return dist::redistribute(sum_real_weighted(dist::linalg::cholesky(x, upper), w, g, nb),
                                      everywhere(g.mesh));
          },
          upper ? "cholesky upper" : "cholesky lower");
    }
  }
}
