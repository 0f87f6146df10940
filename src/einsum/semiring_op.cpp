// The semiring einsum's extension ops and their AD rules (semiring_op.hpp).

#include "einsum/semiring_op.hpp"

#include <bit>
#include <functional>

#include "einsum/op.hpp"
#include "einsum/program.hpp"
#include "einsum/semiring_run.hpp"
#include "tenferro/ad/ops.hpp"
#include "tenferro/ad/rules.hpp"
#include "tenferro/ops/extension_op.hpp"
#include "tenferro/runtime/module.hpp"
#include "tenferro/runtime/runtime.hpp"
#include "tenferro/runtime/simple_family.hpp"

namespace tenferro::einsum_detail {
namespace {

constexpr const char* kOp = "einsum";
constexpr const char* kModuleId = "tenferro.einsum.semiring";

/// What a semiring op computes.
enum class Kind {
  Value,      ///< the contraction: inputs the operands, one output
  Tangent,    ///< inputs the operands and the tangents in `mask`, one output
  Cotangent,  ///< inputs the operands and the result's cotangent, one output per operand
};

constexpr std::string_view family_of(Kind k) {
  switch (k) {
    case Kind::Value:
      return "tenferro.einsum.semiring.v1";
    case Kind::Tangent:
      return "tenferro.einsum.semiring.tangent.v1";
    case Kind::Cotangent:
      break;
  }
  return "tenferro.einsum.semiring.cotangent.v1";
}

class SemiringOp final : public ExtensionOp, public SelfInstallingOp, public ad::RuleCarryingOp {
 public:
  SemiringOp(Kind kind, Spec spec, EinsumOptions options, std::uint64_t mask = 0)
      : kind_(kind),
        family_(std::string(family_of(kind))),
        spec_(std::move(spec)),
        options_(std::move(options)),
        mask_(mask) {
    hash_ = std::hash<std::string_view>{}(family_of(kind_));
    for (const auto& in : spec_.inputs) {
      hash_ = hash_combine(hash_, in.size());
      for (const std::int64_t l : in) hash_ = hash_combine(hash_, std::hash<std::int64_t>{}(l));
    }
    for (const std::int64_t l : spec_.output) {
      hash_ = hash_combine(hash_, std::hash<std::int64_t>{}(l));
    }
    hash_ = hash_combine(hash_, static_cast<std::size_t>(options_.semiring));
    hash_ = hash_combine(hash_, std::hash<std::uint64_t>{}(mask_));
  }
  Kind kind() const { return kind_; }
  const Spec& spec() const { return spec_; }
  const EinsumOptions& options() const { return options_; }
  std::uint64_t mask() const { return mask_; }
  std::size_t operands() const { return spec_.inputs.size(); }

  const FamilyId& family_id() const override { return family_; }
  std::size_t hash() const override { return hash_; }
  bool equals(const Op& other) const override {
    const auto* o = dynamic_cast<const SemiringOp*>(&other);
    return o != nullptr && o->hash_ == hash_ && o->kind_ == kind_ && o->mask_ == mask_ &&
           o->spec_ == spec_ && o->options_.semiring == options_.semiring &&
           o->options_.strategy == options_.strategy && o->options_.path == options_.path &&
           o->options_.budget_ms == options_.budget_ms &&
           o->options_.search_work == options_.search_work && o->options_.seed == options_.seed &&
           o->options_.memory_limit == options_.memory_limit;
  }
  std::size_t input_count() const override {
    switch (kind_) {
      case Kind::Value:
        return operands();
      case Kind::Tangent:
        return operands() + static_cast<std::size_t>(std::popcount(mask_));
      case Kind::Cotangent:
        break;
    }
    return operands() + 1;
  }
  std::size_t output_count() const override { return kind_ == Kind::Cotangent ? operands() : 1; }
  std::string describe() const override {
    return std::string(kind_ == Kind::Value     ? "einsum["
                       : kind_ == Kind::Tangent ? "einsum_tangent["
                                                : "einsum_cotangent[") +
           tenferro::name(options_.semiring) + "]";
  }
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    if (in.size() != input_count()) {
      fail(ErrorKind::InvalidArgument, kOp, "got ", in.size(), " inputs but the op takes ",
           input_count());
    }
    const std::span<const TensorMeta> xs = in.first(operands());
    InferenceResult r = EinsumOp(spec_, options_).infer(xs);
    if (!xs.empty()) check_semiring_dtype(options_.semiring, xs[0].dtype, kOp);
    if (kind_ == Kind::Cotangent) {
      r.outputs.assign(xs.begin(), xs.end());
    }
    return r;
  }
  ExtensionModulePtr module_for(const EngineRegistration& engine) const override;
  const ad::RuleSet& ad_rules() const override;

 private:
  Kind kind_;
  FamilyId family_;
  Spec spec_;
  EinsumOptions options_;
  std::uint64_t mask_ = 0;
  std::size_t hash_ = 0;
};

std::shared_ptr<const SemiringOp> make(Kind kind, const SemiringOp& like, std::uint64_t mask = 0) {
  return std::make_shared<const SemiringOp>(kind, like.spec(), like.options(), mask);
}

// ---- engine -----------------------------------------------------------------------

class Executor final : public PlanExecutor {
 public:
  Executor(std::shared_ptr<const SemiringOp> op, std::shared_ptr<const Program> program)
      : op_(std::move(op)), program_(std::move(program)) {}
  std::vector<Tensor> execute(ExecutionContext& context, ExtensionCaches&,
                              std::span<const Tensor> inputs) const override {
    return run(inputs, context.backend());
  }
  bool supports_session() const override { return true; }
  std::vector<Tensor> execute_in_session(EngineSession& session, ExtensionCaches&,
                                         std::span<const Tensor> inputs) const override {
    return run(inputs, session.backend());
  }

 private:
  std::vector<Tensor> run(std::span<const Tensor> inputs, Backend& backend) const {
    CpuBackend& cpu = semiring_backend(backend, kOp);
    const std::size_t n = op_->operands();
    const std::vector<Tensor> xs(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(n));
    const Semiring s = op_->options().semiring;
    switch (op_->kind()) {
      case Kind::Value:
        return {run_semiring(*program_, s, xs, cpu)};
      case Kind::Tangent: {
        std::vector<Tensor> ts(n);
        std::size_t next = n;
        for (std::size_t k = 0; k < n; ++k) {
          if ((op_->mask() >> k) & 1U) ts[k] = inputs[next++];
        }
        return {semiring_jvp(*program_, s, xs, ts, cpu)};
      }
      case Kind::Cotangent:
        break;
    }
    return semiring_vjp(*program_, s, xs, inputs[n], cpu);
  }

  std::shared_ptr<const SemiringOp> op_;
  std::shared_ptr<const Program> program_;
};

class Engine final : public ExtensionEngine {
 public:
  PrepareOutcome prepare(const PrepareRequest& request) const override {
    const auto* op = dynamic_cast<const SemiringOp*>(&request.op);
    if (op == nullptr) {
      fail(ErrorKind::InvalidArgument, std::string(request.op.name()),
           "invalid payload: the semiring einsum engine expects a semiring einsum op");
    }
    std::vector<Dims> dims;
    const auto entries = request.signature.entries();
    for (std::size_t k = 0; k < op->operands(); ++k) {
      Dims d;
      for (const std::int64_t x : entries[k].shape.span()) d.push_back(x);
      dims.push_back(std::move(d));
    }
    const DType dtype = op->operands() == 0 ? DType::F64 : entries[0].dtype;
    auto program =
        std::make_shared<const Program>(build_program(op->spec(), dims, op->options(), kOp, dtype));
    auto self = std::static_pointer_cast<const SemiringOp>(make(op->kind(), *op, op->mask()));
    return Prepared{std::make_shared<const Executor>(std::move(self), std::move(program))};
  }
};

ExtensionModulePtr build_module(const EngineId& engine) {
  auto module = std::make_shared<SimpleModule>(kModuleId);
  for (const Kind k : {Kind::Value, Kind::Tangent, Kind::Cotangent}) {
    module->engine(FamilyId{std::string(family_of(k))}, engine, std::make_shared<const Engine>());
  }
  return module;
}

// ---- AD ---------------------------------------------------------------------------

std::vector<ad::MaybeVal> value_jvp(const ad::RuleArgs& a, std::span<const ad::MaybeVal> t) {
  const auto& op = static_cast<const SemiringOp&>(a.op);
  std::uint64_t mask = 0;
  std::vector<ad::Val> ins(a.inputs.begin(), a.inputs.end());
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (!t[k]) continue;
    if (k >= 64) {
      fail(ErrorKind::Unsupported, kOp, "tropical forward mode takes at most 64 operands");
    }
    mask |= std::uint64_t{1} << k;
    ins.push_back(*t[k]);
  }
  if (mask == 0) return {std::nullopt};
  return {a.emitter.emit1(make(Kind::Tangent, op, mask), std::span<const ad::Val>(ins))};
}

std::vector<ad::MaybeVal> value_vjp(const ad::RuleArgs& a, std::span<const ad::MaybeVal> ct) {
  const auto& op = static_cast<const SemiringOp&>(a.op);
  std::vector<ad::MaybeVal> r(a.inputs.size());
  if (!ct[0]) return r;
  std::vector<ad::Val> ins(a.inputs.begin(), a.inputs.end());
  ins.push_back(*ct[0]);
  const std::vector<ad::Val> g =
      a.emitter.emit(make(Kind::Cotangent, op), std::span<const ad::Val>(ins));
  for (std::size_t k = 0; k < r.size(); ++k) {
    if (a.wants(k)) r[k] = g[k];
  }
  return r;
}

// The tangent op is linear in its tangents: its transpose is the cotangent op.
std::vector<ad::MaybeVal> tangent_transpose(const ad::RuleArgs& a, std::span<const bool> linear,
                                            std::span<const ad::MaybeVal> ct) {
  const auto& op = static_cast<const SemiringOp&>(a.op);
  const std::size_t n = op.operands();
  std::vector<ad::MaybeVal> r(a.inputs.size());
  if (!ct[0]) return r;
  for (std::size_t k = 0; k < n; ++k) {
    if (k < linear.size() && linear[k]) {
      fail(ErrorKind::Internal, kOp, "the tangent op is transposed in a primal operand");
    }
  }
  std::vector<ad::Val> ins(a.inputs.begin(), a.inputs.begin() + static_cast<std::ptrdiff_t>(n));
  ins.push_back(*ct[0]);
  const std::vector<ad::Val> g =
      a.emitter.emit(make(Kind::Cotangent, op), std::span<const ad::Val>(ins));
  std::size_t next = n;
  for (std::size_t k = 0; k < n; ++k) {
    if (!((op.mask() >> k) & 1U)) continue;
    if (next < linear.size() && linear[next]) r[next] = g[k];
    ++next;
  }
  return r;
}

const ad::RuleSet& value_rules() {
  static const ad::RuleSet r = [] {
    ad::RuleSet s;
    s.jvp = value_jvp;
    s.vjp = value_vjp;
    s.residuals = ad::Residuals{~std::uint64_t{0}, 0};  // the operands
    return s;
  }();
  return r;
}

const ad::RuleSet& tangent_rules() {
  static const ad::RuleSet r = [] {
    ad::RuleSet s;
    s.transpose = tangent_transpose;
    s.residuals = ad::Residuals{~std::uint64_t{0}, 0};
    return s;
  }();
  return r;
}

const ad::RuleSet& no_rules() {
  static const ad::RuleSet r;
  return r;
}

ExtensionModulePtr SemiringOp::module_for(const EngineRegistration& engine) const {
  static const ModulesByEngine modules(build_module);
  return modules.get(engine.id());
}

const ad::RuleSet& SemiringOp::ad_rules() const {
  switch (kind_) {
    case Kind::Value:
      return value_rules();
    case Kind::Tangent:
      return tangent_rules();
    case Kind::Cotangent:
      break;
  }
  return no_rules();
}

}  // namespace

template <AdTensor T>
T apply_semiring(const Spec& spec, const std::vector<T>& operands, const EinsumOptions& options) {
  if (!operands.empty()) check_semiring_dtype(options.semiring, operands[0].dtype(), kOp);
  const auto op = std::make_shared<const SemiringOp>(Kind::Value, spec, options);
  return tenferro::apply<T>(op, std::span<const T>(operands))[0];
}

template EagerTensor apply_semiring<EagerTensor>(const Spec&, const std::vector<EagerTensor>&,
                                                 const EinsumOptions&);
template TracedTensor apply_semiring<TracedTensor>(const Spec&, const std::vector<TracedTensor>&,
                                                   const EinsumOptions&);

}  // namespace tenferro::einsum_detail
