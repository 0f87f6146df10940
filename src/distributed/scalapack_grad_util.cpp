// The helpers of the distributed decompositions' AD rules
// (scalapack_grad.hpp), and the gauge checks as ops: (x, ...) -> x that
// raise GaugeIllDefined when run, with the single-process family's
// messages, on every rank alike (the maxima are all-reduced first).

#include <cmath>
#include <limits>
#include <sstream>

#include "distributed/collectives.hpp"
#include "distributed/internal.hpp"
#include "distributed/scalapack_grad.hpp"
#include "tenferro/ad/ops.hpp"
#include "tenferro/runtime/simple_family.hpp"

namespace tenferro::dist::detail {

namespace {

using ad::Val;

// ---- the check op ----------------------------------------------------------------------

struct CheckParams {
  MPI_Comm comm = MPI_COMM_NULL;
  bool degeneracy = false;  ///< (x, c2, gap, all); else the phase check (x, g)
  bool svd = true;          ///< which decomposition the message names
  bool tangent = false;
  double tolerance = 0;
  BlacsGrid grid;
  std::int64_t block = 1;
  std::int64_t k = 0;  ///< the [k, k] matrix of the degeneracy check
  bool operator==(const CheckParams& o) const {
    return comm == o.comm && degeneracy == o.degeneracy && svd == o.svd && tangent == o.tangent &&
           tolerance == o.tolerance && grid.context == o.grid.context && block == o.block &&
           k == o.k;
  }
};
std::size_t hash_value(const CheckParams& p) {
  std::size_t h = hash_combine(comm_key(p.comm), std::hash<double>{}(p.tolerance));
  for (const std::int64_t v : {std::int64_t{p.degeneracy}, std::int64_t{p.svd},
                               std::int64_t{p.tangent}, std::int64_t{p.grid.context}, p.block, p.k})
    h = hash_combine(h, static_cast<std::size_t>(v));
  return h;
}

const char* owner_name(bool svd) {
  return svd ? "dist::linalg::svd" : "dist::linalg::eigh";
}

/// A real local block's values (f32 or f64).
std::vector<double> doubles(const Tensor& t) {
  if (t.numel() == 0) return {};
  const Tensor c = t.contiguous();
  if (c.dtype() == DType::F64) return c.to_vector<double>();
  const std::vector<float> f = c.to_vector<float>();
  return {f.begin(), f.end()};
}

double all_max(double v, MPI_Comm comm) {
  double out = 0;
  check_mpi(MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, comm), "gauge check");
  return out;
}

class SpectralCheck final : public ExtensionOpWithParams<SpectralCheck, CheckParams>,
                            public SelfInstallingOp,
                            public ad::RuleCarryingOp {
 public:
  static constexpr std::string_view kFamily = "tenferro.dist.spectral_check.v1";
  using ExtensionOpWithParams::ExtensionOpWithParams;
  std::size_t input_count() const override { return params().degeneracy ? 4 : 2; }
  std::size_t output_count() const override { return 1; }
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    InferenceResult r;
    r.outputs.push_back(in[0]);
    return r;
  }
  ExtensionModulePtr module_for(const EngineRegistration& engine) const override {
    static const ModulesByEngine modules([](const EngineId& id) {
      auto module = std::make_shared<SimpleModule>("tenferro.dist.spectral_check");
      module->family<SpectralCheck>(
          [](const SpectralCheck& op, ExecutionScope& scope, ExtensionCaches&,
             std::span<const Tensor> in) {
            op.check(in);
            // A fresh tensor, as every op's output (never an alias of an input).
            Tensor out = scope.backend().empty(in[0].shape().span(), in[0].dtype());
            scope.backend().copy(in[0], out);
            return std::vector<Tensor>{out};
          },
          nullptr, id);
      return module;
    });
    return modules.get(engine.id());
  }
  const ad::RuleSet& ad_rules() const override {
    static const ad::RuleSet r = [] {
      ad::RuleSet s;
      s.jvp = [](const ad::RuleArgs&, std::span<const ad::MaybeVal> t) {
        return std::vector<ad::MaybeVal>{t[0]};
      };
      s.vjp = [](const ad::RuleArgs& a, std::span<const ad::MaybeVal> ct) {
        std::vector<ad::MaybeVal> out(a.inputs.size());
        out[0] = ct[0];
        return out;
      };
      s.residuals = ad::Residuals::none();
      return s;
    }();
    return r;
  }

  /// Throws GaugeIllDefined, on every rank alike, when the check fails.
  void check(std::span<const Tensor> in) const {
    const CheckParams& p = params();
    if (!p.degeneracy) {
      double worst = 0;
      for (const double g : doubles(in[1])) worst = std::max(worst, std::abs(g));
      worst = all_max(worst, p.comm);
      if (worst > p.tolerance) {
        fail(ErrorKind::GaugeIllDefined, owner_name(p.svd), "the loss depends on the phase of the ",
             p.svd ? "singular" : "eigen", " vectors (|Im diag(",
             p.svd ? "U^H gU + V^H gV" : "V^H gV", ")| = ", worst, " > gauge_tolerance ",
             p.tolerance,
             "), so its gradient is not defined; make the loss phase invariant (e.g. use |U|, "
             "U diag(S) Vh, projectors) or fix the gauge with linalg::canonical_phase first");
      }
      return;
    }
    const std::vector<double> c2 = doubles(in[1]), gap = doubles(in[2]), all = doubles(in[3]);
    double worst = 0, scale = 0;
    std::size_t where = 0;
    for (std::size_t i = 0; i < c2.size(); ++i) {
      scale = std::max(scale, all[i]);
      if (c2[i] > worst) {
        worst = c2[i];
        where = i;
      }
    }
    const double local_worst = worst;
    worst = all_max(worst, p.comm);
    scale = all_max(scale, p.comm);
    if (!(worst > p.tolerance * p.tolerance * scale)) return;
    // The rank holding the worst pair reports it; every rank throws that error.
    std::optional<Error> mine;
    if (local_worst == worst && !c2.empty()) {
      const std::int64_t lr = in[1].dim(0);
      const auto w = static_cast<std::int64_t>(where);
      const std::int64_t i =
          shard_indices(p.k, p.grid.rows, p.grid.row, p.block)[static_cast<std::size_t>(w % lr)];
      const std::int64_t j =
          shard_indices(p.k, p.grid.cols, p.grid.col, p.block)[static_cast<std::size_t>(w / lr)];
      try {
        report(i, j, gap[where], worst, scale);
      } catch (const Error& e) {
        mine = e;
      }
    }
    agree(p.comm, mine);
  }

 private:
  [[noreturn]] void report(std::int64_t i, std::int64_t j, double gap, double worst,
                           double scale) const {
    const CheckParams& p = params();
    const char* fix = p.svd ? "the singular values alone, U Vh, or the projector U_k U_k^H onto "
                              "the whole degenerate subspace"
                            : "the eigenvalues alone, or the projector V_k V_k^H onto the whole "
                              "degenerate subspace";
    const char* kind = p.tangent ? "tangent" : "cotangent";
    std::ostringstream sizes;
    sizes << kind << " component " << std::sqrt(worst) << " > " << p.tolerance << " x the largest "
          << kind << " component " << std::sqrt(scale);
    if (i == j) {
      fail(ErrorKind::GaugeIllDefined, owner_name(p.svd), "zero singular value ", i, " (s = ", gap,
           ", ", sizes.str(),
           "): it is not differentiable and its singular vectors are not determined by A (rank "
           "deficient), so the derivative is not defined; use GaugePolicy::Regularised "
           "(Lorentzian-broadened 1 / s) or a loss that does not depend on that value and its "
           "vectors");
    }
    fail(ErrorKind::GaugeIllDefined, owner_name(p.svd), "degenerate ",
         p.svd ? "singular values" : "eigenvalues", " ", i, " and ", j, " (gap ", gap, ", ",
         sizes.str(), "): the ", p.tangent ? "derivative of the vectors depends" : "loss depends",
         " on the choice of basis inside the degenerate subspace or on how the values split, so "
         "the derivative is not defined; use GaugePolicy::Regularised (Lorentzian-broadened "
         "gaps) or a loss invariant under rotations within the subspace (e.g. ",
         fix, ")");
  }
};

double eps_of(DType real) {
  return real == DType::F32 ? std::numeric_limits<float>::epsilon()
                            : std::numeric_limits<double>::epsilon();
}

}  // namespace

// ---- indices, gathers, masks ------------------------------------------------------------

std::vector<std::int64_t> BlockCyclicEmitter::row_indices(std::int64_t n) const {
  return shard_indices(n, p.grid.rows, p.grid.row, p.block);
}
std::vector<std::int64_t> BlockCyclicEmitter::col_indices(std::int64_t n) const {
  return shard_indices(n, p.grid.cols, p.grid.col, p.block);
}

Val BlockCyclicEmitter::constant(const Tensor& t) {
  return e.emit1(make_primitive(prim::Constant{t}), {});
}

namespace {
Tensor index_tensor(const std::vector<std::int64_t>& idx) {
  return Tensor::from_col_major(Shape{static_cast<std::int64_t>(idx.size())}, idx);
}
}  // namespace

Val BlockCyclicEmitter::at_rows(Val v, std::int64_t n) {
  const Val in[2] = {v, constant(index_tensor(row_indices(n)))};
  return e.emit1(make_primitive(prim::IndexSelect{0}), in);
}
Val BlockCyclicEmitter::at_cols(Val v, std::int64_t n) {
  const Val in[2] = {v, constant(index_tensor(col_indices(n)))};
  return e.emit1(make_primitive(prim::IndexSelect{0}), in);
}

Val BlockCyclicEmitter::bcast_row(Val v, std::int64_t rows, std::int64_t cols) {
  const Shape l = local_of(p, rows, cols);
  return e.broadcast_in_dim(at_cols(v, cols), to_sym_shape(l.span()), Axes{1});
}
Val BlockCyclicEmitter::bcast_col(Val v, std::int64_t rows, std::int64_t cols) {
  const Shape l = local_of(p, rows, cols);
  return e.broadcast_in_dim(at_rows(v, rows), to_sym_shape(l.span()), Axes{0});
}

Val BlockCyclicEmitter::index_mask(BinaryOp cmp, std::int64_t rows, std::int64_t cols) {
  const SymShape l = to_sym_shape(local_of(p, rows, cols).span());
  const Val r = e.broadcast_in_dim(constant(index_tensor(row_indices(rows))), l, Axes{0});
  const Val c = e.broadcast_in_dim(constant(index_tensor(col_indices(cols))), l, Axes{1});
  return e.binary(cmp, r, c);
}

Val BlockCyclicEmitter::masked(Val mask, Val x) {
  return e.select(mask, x, e.zeros_like(x));
}

Val BlockCyclicEmitter::all_reduce(Val x) {
  const Val in[1] = {x};
  return e.emit1(collective_op(all_reduce_params(p.comm)), in);
}

Val BlockCyclicEmitter::diag(const BcMat& x) {
  // This rank's diagonal entries, summed along its columns (one per local
  // row at most), scattered to their global rows, then summed over the grid.
  const std::int64_t n = std::min(x.rows, x.cols);
  const Val local = e.sum(masked(index_mask(BinaryOp::Eq, x.rows, x.cols), x.v), Axes{1});
  std::vector<std::int64_t> rows = row_indices(x.rows);
  const Val zeros = e.full(SymShape{SymDim(n)}, Scalar(0.0), e.dtype_of(x.v));
  // Rows past n hold no diagonal entry (their sums are 0): clamp their index.
  for (auto& r : rows) r = std::min(r, n - 1);
  if (n == 0) return zeros;
  const Val in[3] = {zeros, constant(index_tensor(rows)), local};
  return all_reduce(e.emit1(make_primitive(prim::ScatterAdd{0}), in));
}

Val BlockCyclicEmitter::diag_embed(Val v, std::int64_t n) {
  return masked(index_mask(BinaryOp::Eq, n, n), bcast_col(v, n, n));
}

namespace {
Val abs2(ad::Emitter& e, Val x) {
  return is_complex(e.dtype_of(x)) ? e.real(e.mul(e.conj(x), x)) : e.mul(x, x);
}
}  // namespace

Val BlockCyclicEmitter::sum_squares(const BcMat& x, std::int64_t axis) {
  const Val local = e.sum(abs2(e, x.v), Axes{axis});
  const std::int64_t n = axis == 0 ? x.cols : x.rows;
  const DType rt = real_dtype(e.dtype_of(x.v));
  const Val zeros = e.full(SymShape{SymDim(n)}, Scalar(0.0), rt);
  const auto idx = axis == 0 ? col_indices(x.cols) : row_indices(x.rows);
  if (n == 0) return zeros;
  const Val in[3] = {zeros, constant(index_tensor(idx)), local};
  return all_reduce(e.emit1(make_primitive(prim::ScatterAdd{0}), in));
}

BcMat BlockCyclicEmitter::adjoint(const BcMat& x) {
  SlParams q;
  q.kind = SlKind::Tran;
  q.comm = p.comm;
  q.grid = p.grid;
  q.block = p.block;
  q.m = x.cols;
  q.n = x.rows;
  q.trans_a = is_complex(e.dtype_of(x.v)) ? 'C' : 'T';
  const Val in[1] = {x.v};
  return {emit_scalapack(e, q, in)[0], x.cols, x.rows};
}

Val BlockCyclicEmitter::sym2(const BcMat& x) {
  return e.add(x.v, adjoint(x).v);
}
Val BlockCyclicEmitter::skew2(const BcMat& x) {
  return e.sub(x.v, adjoint(x).v);
}

BcMat BlockCyclicEmitter::mm(const BcMat& l, const BcMat& r, char op_l, char op_r) {
  const Factor fl{l.v, Shape{l.rows, l.cols}, op_l}, fr{r.v, Shape{r.rows, r.cols}, op_r};
  const bool tl = op_l == 'T' || op_l == 'C', tr = op_r == 'T' || op_r == 'C';
  return {product(e, p, fl, fr), tl ? l.cols : l.rows, tr ? r.rows : r.cols};
}

Val BlockCyclicEmitter::as_dtype(Val x, DType dtype) {
  return e.dtype_of(x) == dtype ? x : e.convert(x, dtype);
}

// ---- gap factors and checks (as spectral.cpp of the single-process family) ------------

BlockCyclicEmitter::GapFactors BlockCyclicEmitter::gap_factors(Val d, std::int64_t k, bool sums) {
  const DType dt = e.dtype_of(d);
  const DType rt = real_dtype(dt);
  const Val row = bcast_row(d, k, k), col = bcast_col(d, k, k);
  const Val D = sums ? e.add(row, col) : e.sub(row, col);
  const SymShape sq = e.meta(D).shape;
  const Val norm2 = e.broadcast_in_dim(e.sum(abs2(e, d), Axes{0}), sq, Axes{});
  if (p.regularised) {
    const Val eta2 = e.add(e.scale(norm2, p.eta * p.eta), e.full(sq, 1e-30, rt));
    const Val den = as_dtype(e.add(abs2(e, D), eta2), dt);
    return {e.div(is_complex(dt) ? e.conj(D) : D, den), std::nullopt, std::nullopt};
  }
  const double tol = std::max(p.degeneracy_tolerance, 100.0 * eps_of(rt));
  const Val a2 = abs2(e, D), thr = e.scale(norm2, tol * tol);
  const Val off = index_mask(BinaryOp::Ne, k, k);
  const Val keep = e.binary(BinaryOp::LogicalAnd, e.binary(BinaryOp::Gt, a2, thr), off);
  const Val F =
      e.select(keep, e.div(e.ones_like(D), e.select(keep, D, e.ones_like(D))), e.zeros_like(D));
  GapFactors g{F, e.binary(BinaryOp::LogicalAnd, e.binary(BinaryOp::Le, a2, thr), off),
               std::nullopt};
  const Val R = e.sub(row, col);
  g.gap = is_complex(dt) ? e.unary(UnaryOp::Sqrt, abs2(e, R)) : e.unary(UnaryOp::Abs, R);
  return g;
}

BlockCyclicEmitter::GapFactors BlockCyclicEmitter::inverse_factors(Val s, std::int64_t k) {
  const SymShape vs = e.meta(s).shape;
  const Val norm2 = e.broadcast_in_dim(e.sum(e.mul(s, s), Axes{0}), vs, Axes{});
  if (p.regularised) {
    const Val eta2 = e.add(e.scale(norm2, p.eta * p.eta), e.full(vs, 1e-30, e.dtype_of(s)));
    return {e.div(s, e.add(e.mul(s, s), eta2)), std::nullopt, std::nullopt};
  }
  const double tol = std::max(p.degeneracy_tolerance, 100.0 * eps_of(e.dtype_of(s)));
  const Val a2 = e.mul(s, s);
  const Val keep = e.binary(BinaryOp::Gt, a2, e.scale(norm2, tol * tol));
  const Val inv =
      e.select(keep, e.div(e.ones_like(s), e.select(keep, s, e.ones_like(s))), e.zeros_like(s));
  const Val zero = bcast_row(e.binary(BinaryOp::Le, a2, e.scale(norm2, tol * tol)), k, k);
  return {inv, e.binary(BinaryOp::LogicalAnd, zero, index_mask(BinaryOp::Eq, k, k)),
          diag_embed(s, k)};
}

Val BlockCyclicEmitter::value_split(Val g, std::int64_t k) {
  return e.sub(bcast_row(g, k, k), bcast_col(g, k, k));
}

Val BlockCyclicEmitter::check_degenerate(bool tangent, Val x, const std::vector<Val>& components,
                                         const GapFactors& g, std::int64_t k,
                                         const std::vector<Val>& squared,
                                         const std::vector<Val>& references) {
  if (!g.degenerate) return x;
  std::optional<Val> c2;
  for (const Val c : components) {
    const Val a = abs2(e, c);
    c2 = c2 ? e.add(*c2, a) : a;
  }
  for (const Val a : squared) c2 = c2 ? e.add(*c2, a) : a;
  if (!c2) return x;
  const Val masked_c2 = e.select(*g.degenerate, *c2, e.zeros_like(*c2));
  Val all = *c2;
  for (const Val r : references) all = e.add(all, abs2(e, r));
  CheckParams q;
  q.comm = p.comm;
  q.degeneracy = true;
  q.svd = p.kind == SlKind::Svd;
  q.tangent = tangent;
  q.tolerance = std::max(p.component_tolerance, std::sqrt(eps_of(e.dtype_of(*c2))));
  q.grid = p.grid;
  q.block = p.block;
  q.k = k;
  const Val in[4] = {x, masked_c2, *g.gap, all};
  return e.emit1(std::make_shared<const SpectralCheck>(q), in);
}

Val BlockCyclicEmitter::check_gauge(Val x, Val g) {
  CheckParams q;
  q.comm = p.comm;
  q.svd = p.kind == SlKind::Svd;
  q.tolerance = p.gauge_tolerance;
  q.grid = p.grid;
  q.block = p.block;
  const Val in[2] = {x, g};
  return e.emit1(std::make_shared<const SpectralCheck>(q), in);
}

}  // namespace tenferro::dist::detail
