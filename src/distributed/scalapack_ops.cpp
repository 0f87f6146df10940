// ScaLAPACK routines as eager extension ops on the local blocks
// (scalapack.hpp): the op types, their module (one family per routine on
// whichever engine is asked for) and their application in both tiers. The
// kernels are in scalapack_kernels.cpp.

#include <algorithm>

#include "distributed/internal.hpp"
#include "distributed/scalapack.hpp"
#include "tenferro/ad/ops.hpp"
#include "tenferro/ad/rules.hpp"
#include "tenferro/ops/extension_op.hpp"
#include "tenferro/runtime/module.hpp"
#include "tenferro/runtime/runtime.hpp"
#include "tenferro/runtime/simple_family.hpp"

namespace tenferro::dist::detail {

std::size_t hash_value(const SlParams& p) {
  std::size_t h = hash_combine(static_cast<std::size_t>(p.kind), comm_key(p.comm));
  for (const std::int64_t v :
       {std::int64_t{p.grid.context}, p.block, p.m, p.n, p.k, std::int64_t{p.trans_a},
        std::int64_t{p.trans_b}, std::int64_t{p.uplo}})
    h = hash_combine(h, static_cast<std::size_t>(v));
  for (const double v : {p.eta, p.gauge_tolerance, p.degeneracy_tolerance, p.component_tolerance})
    h = hash_combine(h, std::hash<double>{}(v));
  h = hash_combine(h, static_cast<std::size_t>(p.elpa));
  return hash_combine(h, static_cast<std::size_t>(p.regularised));
}

std::vector<Shape> input_globals(const SlParams& p) {
  switch (p.kind) {
    case SlKind::Gemm:
      return {p.trans_a == 'N' ? Shape{p.m, p.k} : Shape{p.k, p.m},
              p.trans_b == 'N' ? Shape{p.k, p.n} : Shape{p.n, p.k}};
    case SlKind::Svd:
    case SlKind::Qr:
      return {Shape{p.m, p.n}};
    case SlKind::Eigh:
    case SlKind::Cholesky:
      return {Shape{p.n, p.n}};
    case SlKind::Tran:
      return {Shape{p.n, p.m}};
    case SlKind::Trsm:
      return {p.trans_b == 'L' ? Shape{p.m, p.m} : Shape{p.n, p.n}, Shape{p.m, p.n}};
    case SlKind::Solve:
      break;
  }
  return {Shape{p.n, p.n}, Shape{p.n, p.k}};
}

/// The user-facing name errors start with.
std::string op_name(SlKind k) {
  switch (k) {
    case SlKind::Gemm:
      return "dist::linalg::matmul";
    case SlKind::Svd:
      return "dist::linalg::svd";
    case SlKind::Eigh:
      return "dist::linalg::eigh";
    case SlKind::Qr:
      return "dist::linalg::qr";
    case SlKind::Cholesky:
      return "dist::linalg::cholesky";
    case SlKind::Tran:
      return "dist::linalg::transpose";
    case SlKind::Trsm:
      return "dist::linalg (triangular solve)";
    case SlKind::Solve:
      break;
  }
  return "dist::linalg::solve";
}

/// This rank's local extents of a global [rows, cols] matrix on the grid.
Shape local_of(const SlParams& p, std::int64_t rows, std::int64_t cols) {
  return Shape{shard_extent(rows, p.grid.rows, p.grid.row, p.block),
               shard_extent(cols, p.grid.cols, p.grid.col, p.block)};
}

namespace {

constexpr std::string_view family_of(SlKind k) {
  switch (k) {
    case SlKind::Gemm:
      return "tenferro.dist.scalapack_gemm.v1";
    case SlKind::Svd:
      return "tenferro.dist.scalapack_svd.v1";
    case SlKind::Eigh:
      return "tenferro.dist.scalapack_eigh.v1";
    case SlKind::Qr:
      return "tenferro.dist.scalapack_qr.v1";
    case SlKind::Cholesky:
      return "tenferro.dist.scalapack_cholesky.v1";
    case SlKind::Tran:
      return "tenferro.dist.scalapack_tran.v1";
    case SlKind::Trsm:
      return "tenferro.dist.scalapack_trsm.v1";
    case SlKind::Solve:
      break;
  }
  return "tenferro.dist.scalapack_solve.v1";
}

std::size_t input_count_of(SlKind k) {
  return k == SlKind::Gemm || k == SlKind::Solve || k == SlKind::Trsm ? 2 : 1;
}

std::size_t output_count_of(SlKind k) {
  switch (k) {
    case SlKind::Svd:
      return 3;
    case SlKind::Eigh:
    case SlKind::Qr:
      return 2;
    default:
      return 1;
  }
}

/// The local output metas, from the params alone: a rank whose input does
/// not fit still gets metadata, so that the executor's agreed check, not a
/// local throw, reports it.
InferenceResult infer_outputs(const SlParams& p, DType dt) {
  auto meta = [&](DType d, const Shape& s) {
    TensorMeta m;
    m.dtype = d;
    for (const auto e : s) m.shape.push_back(SymDim(e));
    return m;
  };
  const std::int64_t k = std::min(p.m, p.n);
  InferenceResult r;
  switch (p.kind) {
    case SlKind::Gemm:
    case SlKind::Tran:
    case SlKind::Trsm:
      r.outputs.push_back(meta(dt, local_of(p, p.m, p.n)));
      break;
    case SlKind::Svd:
      r.outputs.push_back(meta(dt, local_of(p, p.m, k)));
      r.outputs.push_back(meta(real_dtype(dt), Shape{k}));
      r.outputs.push_back(meta(dt, local_of(p, k, p.n)));
      break;
    case SlKind::Eigh:
      r.outputs.push_back(meta(real_dtype(dt), Shape{p.n}));
      r.outputs.push_back(meta(dt, local_of(p, p.n, p.n)));
      break;
    case SlKind::Qr:
      r.outputs.push_back(meta(dt, local_of(p, p.m, k)));
      r.outputs.push_back(meta(dt, local_of(p, k, p.n)));
      break;
    case SlKind::Cholesky:
      r.outputs.push_back(meta(dt, local_of(p, p.n, p.n)));
      break;
    case SlKind::Solve:
      r.outputs.push_back(meta(dt, local_of(p, p.n, p.k)));
      break;
  }
  return r;
}

ExtensionModulePtr scalapack_module(const EngineRegistration& engine);

/// One routine on the local blocks; Derived adds what differs (AD rules).
template <class Derived>
class ScalapackOpBase : public ExtensionOpWithParams<Derived, SlParams>, public SelfInstallingOp {
  using Base = ExtensionOpWithParams<Derived, SlParams>;

 public:
  explicit ScalapackOpBase(const SlParams& p) : Base(std::string(family_of(p.kind)), p) {}
  std::size_t input_count() const override { return input_count_of(this->params().kind); }
  std::size_t output_count() const override { return output_count_of(this->params().kind); }
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    return infer_outputs(this->params(), in[0].dtype);
  }
  ExtensionModulePtr module_for(const EngineRegistration& engine) const override {
    return scalapack_module(engine);
  }
};

/// The ops with AD rules (scalapack_rules.cpp), whose rules emit ops of this
/// family again (so they differentiate again).
class DifferentiableOp final : public ScalapackOpBase<DifferentiableOp>, public ad::RuleCarryingOp {
 public:
  using ScalapackOpBase::ScalapackOpBase;
  const ad::RuleSet& ad_rules() const override { return *scalapack_rules(params().kind); }
};

template <class OpT>
std::vector<Tensor> execute(const OpT& op, ExecutionScope& scope, ExtensionCaches&,
                            std::span<const Tensor> in) {
  return run_scalapack(op.params(), scope, in);
}

OpPtr make_op(const SlParams& params) {
  return std::make_shared<const DifferentiableOp>(params);
}

ExtensionModulePtr scalapack_module(const EngineRegistration& engine) {
  static const ModulesByEngine modules([](const EngineId& id) {
    auto module = std::make_shared<SimpleModule>("tenferro.dist.scalapack");
    for (const SlKind k : {SlKind::Gemm, SlKind::Svd, SlKind::Eigh, SlKind::Qr, SlKind::Cholesky,
                           SlKind::Solve, SlKind::Tran, SlKind::Trsm}) {
      module->family<DifferentiableOp>(std::string(family_of(k)), execute<DifferentiableOp>,
                                       nullptr, id);
    }
    return module;
  });
  return modules.get(engine.id());
}

template <class T>
std::vector<T> apply_scalapack(const SlParams& params, const std::vector<T>& inputs) {
  return tenferro::apply<T>(make_op(params), std::span<const T>(inputs.data(), inputs.size()));
}

}  // namespace

std::vector<EagerTensor> scalapack_call(const SlParams& params,
                                        const std::vector<EagerTensor>& inputs) {
  return apply_scalapack(params, inputs);
}

std::vector<TracedTensor> scalapack_call(const SlParams& params,
                                         const std::vector<TracedTensor>& inputs) {
  return apply_scalapack(params, inputs);
}

const SlParams& scalapack_params(const Op& op) {
  return static_cast<const DifferentiableOp&>(op).params();
}

std::vector<ad::Val> emit_scalapack(ad::Emitter& emitter, const SlParams& params,
                                    std::span<const ad::Val> inputs) {
  return emitter.emit(make_op(params), inputs);
}

}  // namespace tenferro::dist::detail
