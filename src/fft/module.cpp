// The FFT family's op (inference, AD rules), its module and the tier dispatch.

#include <functional>

#include "fft/common.hpp"

namespace tenferro::fft::detail {

std::size_t hash_value(const FftParams& p) {
  std::size_t h = std::hash<int>{}(static_cast<int>(p.kind) * 4 + (p.sign > 0 ? 1 : 0));
  for (const std::int64_t a : p.axes) h = hash_combine(h, std::hash<std::int64_t>{}(a));
  h = hash_combine(h, std::hash<std::int64_t>{}(p.n));
  return hash_combine(h, std::hash<double>{}(p.scale));
}

std::size_t FftOp::hash() const {
  return hash_combine(std::hash<std::string>{}(family_.str()), hash_value(params_));
}

bool FftOp::equals(const Op& other) const {
  const auto* o = dynamic_cast<const FftOp*>(&other);
  return o != nullptr && params_ == o->params();
}

namespace {
const char* kind_name(Kind k) {
  switch (k) {
    case Kind::C2C:
      return "c2c";
    case Kind::R2C:
      return "r2c";
    case Kind::C2R:
      return "c2r";
    case Kind::R2C_ADJ:
      return "r2c_adjoint";
    case Kind::C2R_ADJ:
      return "c2r_adjoint";
  }
  return "?";
}

DType complex_of(DType d) {
  return d == DType::F32 ? DType::C64 : DType::C128;
}
DType real_of(DType d) {
  return d == DType::C64 ? DType::F32 : DType::F64;
}
}  // namespace

std::string FftOp::describe() const {
  std::string axes;
  for (const std::int64_t a : params_.axes)
    axes += tenferro::detail::cat(axes.empty() ? "" : ",", a);
  return tenferro::detail::cat("fft(kind=", kind_name(params_.kind), ", axes=[", axes,
                               "], n=", params_.n, ", sign=", params_.sign,
                               ", scale=", params_.scale, ")");
}

InferenceResult FftOp::infer(std::span<const TensorMeta> in) const {
  const TensorMeta& m = in[0];
  const std::string op = "fft";
  const bool real_in = params_.kind == Kind::R2C || params_.kind == Kind::C2R_ADJ;
  if (real_in ? (m.dtype != DType::F32 && m.dtype != DType::F64)
              : (m.dtype != DType::C64 && m.dtype != DType::C128)) {
    fail(ErrorKind::DTypeMismatch, op, kind_name(params_.kind), " takes a ",
         real_in ? "real (f32, f64)" : "complex (c64, c128)", " input, got ",
         tenferro::name(m.dtype));
  }
  for (const std::int64_t a : params_.axes) {
    if (a < 0 || a >= m.rank()) {
      fail(ErrorKind::AxisOutOfBounds, op, "axis ", a, " is out of range for rank ", m.rank());
    }
  }
  TensorMeta out = m;
  if (params_.kind == Kind::C2C) return {{out}, {}};
  const auto a0 = static_cast<std::size_t>(params_.axes.at(0));
  const std::int64_t half = params_.n / 2 + 1;
  const bool to_half = params_.kind == Kind::R2C || params_.kind == Kind::C2R_ADJ;
  const std::int64_t expect = to_half ? params_.n : half;
  if (const auto e = m.shape[a0].try_constant(); e && *e != expect) {
    fail(ErrorKind::ShapeMismatch, op, kind_name(params_.kind), " expects extent ", expect,
         " along axis ", a0, ", got ", *e);
  }
  out.shape[a0] = SymDim(to_half ? half : params_.n);
  out.dtype = real_in ? complex_of(m.dtype) : real_of(m.dtype);
  return {{out}, {}};
}

Tensor FftOp::execute(Backend& backend, const Tensor& x, ExtensionCaches& caches) const {
  return run_transform(params_, x, backend, caches);
}

std::shared_ptr<const FftOp> make_op(FftParams p) {
  return std::make_shared<const FftOp>(std::move(p));
}

// ---- AD: every node is linear --------------------------------------------------------

namespace {

// The adjoint under <a, b> = Re sum conj(a) b (see common.hpp for the kinds):
// a DFT's adjoint is the opposite-sign DFT; R2C <-> R2C_ADJ and C2R <->
// C2R_ADJ with the opposite sign; the scale is real and stays.
FftParams adjoint(FftParams p) {
  switch (p.kind) {
    case Kind::C2C:
      break;
    case Kind::R2C:
      p.kind = Kind::R2C_ADJ;
      break;
    case Kind::R2C_ADJ:
      p.kind = Kind::R2C;
      break;
    case Kind::C2R:
      p.kind = Kind::C2R_ADJ;
      break;
    case Kind::C2R_ADJ:
      p.kind = Kind::C2R;
      break;
  }
  p.sign = -p.sign;
  return p;
}

std::vector<ad::MaybeVal> emit_node(ad::Emitter& e, const FftParams& p, ad::Val x) {
  const ad::Val in[1] = {x};
  return {e.emit(make_op(p), std::span<const ad::Val>(in))[0]};
}

std::vector<ad::MaybeVal> fft_jvp(const ad::RuleArgs& a, std::span<const ad::MaybeVal> t) {
  if (!t[0]) return {std::nullopt};
  return emit_node(a.emitter, static_cast<const FftOp&>(a.op).params(), *t[0]);
}

std::vector<ad::MaybeVal> fft_transpose(const ad::RuleArgs& a, std::span<const bool>,
                                        std::span<const ad::MaybeVal> ct) {
  if (!ct[0]) return {std::nullopt};
  return emit_node(a.emitter, adjoint(static_cast<const FftOp&>(a.op).params()), *ct[0]);
}

std::vector<ad::MaybeVal> fft_vjp(const ad::RuleArgs& a, std::span<const ad::MaybeVal> ct) {
  return fft_transpose(a, {}, ct);
}

}  // namespace

const ad::RuleSet& FftOp::rules() {
  static const ad::RuleSet r = [] {
    ad::RuleSet s;
    s.jvp = fft_jvp;
    s.transpose = fft_transpose;
    s.vjp = fft_vjp;
    s.residuals = ad::Residuals::none();
    return s;
  }();
  return r;
}

// ---- module and tiers ------------------------------------------------------------------

namespace {
ExtensionModulePtr build_module(const EngineId& engine) {
  auto module = std::make_shared<SimpleModule>(kModuleId);
  ad::FamilyRules rules;
  module->family<FftOp>(
      [](const FftOp& op, ExecutionScope& scope, ExtensionCaches& caches,
         std::span<const Tensor> in) {
        return std::vector<Tensor>{op.execute(scope.backend(), in[0], caches)};
      },
      nullptr, engine);
  module->cache(FamilyId(std::string(FftOp::kFamily)), kPlanCache,
                ExtensionCacheLimits{.max_entries = 256, .max_bytes = std::size_t{64} << 20});
  rules.emplace_back(FamilyId(std::string(FftOp::kFamily)), FftOp::rules());
  return ad::with_rules(module, std::move(rules));
}

// FFTW reads and writes the tensors' memory: the family runs on any backend
// whose tensors live on the host.
ExtensionModulePtr module_for_engine(const EngineId& engine, std::string_view backend_kind,
                                     const Placement& placement) {
  if (!placement.is_host()) {
    fail(ErrorKind::Unsupported, "fft",
         "the FFT family's kernels (FFTW) work on host memory, but the ", backend_kind,
         " backend keeps its tensors on ", to_string(placement),
         "; run it on a backend with host memory (CpuBackend)");
  }
  static const ModulesByEngine modules(build_module);
  return modules.get(engine);
}
}  // namespace

ExtensionModulePtr FftOp::module_for(const EngineRegistration& engine) const {
  return module_for_engine(engine.id(), engine.kind(), engine.backend().placement());
}

ExtensionModulePtr module_factory(const EagerExtensionTarget& target) {
  return module_for_engine(target.engine, target.backend_kind, target.placement);
}

EagerTensor apply(const FftParams& p, const EagerTensor& x) {
  const auto op = make_op(p);
  const EagerTensor in[1] = {x};
  return apply_eager_with_module_factory(op, in, module_factory)[0];
}

TracedTensor apply(const FftParams& p, const TracedTensor& x) {
  const TracedTensor in[1] = {x};
  return extension::apply(make_op(p), in)[0];
}

}  // namespace tenferro::fft::detail
