// The traced einsum op (op.hpp): inference with symbolic extents, the CPU
// engine that plans at prepare time, and the AD rules.

#include "einsum/op.hpp"

#include <functional>
#include <set>

#include "einsum/program.hpp"
#include "tenferro/runtime/runtime.hpp"
#include "tenferro/runtime/simple_family.hpp"

namespace tenferro::einsum_detail {
namespace {

constexpr const char* kOp = "einsum";
constexpr const char* kModuleId = "tenferro.einsum";

std::size_t hash_labels(std::size_t h, const std::vector<std::int64_t>& labels) {
  h = hash_combine(h, labels.size());
  for (const std::int64_t l : labels) h = hash_combine(h, std::hash<std::int64_t>{}(l));
  return h;
}

std::size_t hash_of(const Spec& s, const EinsumOptions& o) {
  std::size_t h = std::hash<std::string_view>{}(EinsumOp::kFamily);
  for (const auto& in : s.inputs) h = hash_labels(h, in);
  h = hash_labels(h, s.output);
  h = hash_combine(h, static_cast<std::size_t>(o.strategy));
  h = hash_combine(h, static_cast<std::size_t>(o.semiring));
  h = hash_combine(h, std::hash<std::uint64_t>{}(o.seed));
  if (o.memory_limit) h = hash_combine(h, std::hash<double>{}(*o.memory_limit));
  if (o.path) h = hash_combine(h, o.path->size());
  return h;
}

bool same_options(const EinsumOptions& a, const EinsumOptions& b) {
  return a.strategy == b.strategy && a.path == b.path && a.budget_ms == b.budget_ms &&
         a.search_work == b.search_work && a.semiring == b.semiring && a.seed == b.seed &&
         a.memory_limit == b.memory_limit && a.element_bytes == b.element_bytes;
}

void append_term(std::string& d, const Spec& s, const std::vector<std::int64_t>& labels) {
  d.append("[");
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) d.append(" ");
    d.append(s.label_name(labels[i]));
  }
  d.append("]");
}

// Per label id: the extent of the output (and of the contraction). A constant
// other than 1 wins, then the first symbolic extent, else 1 (every occurrence
// is a constant 1). Call after analyse() has checked the constants.
std::map<std::int64_t, SymDim> label_extents(const Spec& s, std::span<const TensorMeta> in) {
  std::map<std::int64_t, SymDim> ext;
  std::map<std::int64_t, bool> fixed;  // a constant other than 1 was seen
  for (std::size_t k = 0; k < s.inputs.size(); ++k) {
    for (std::size_t i = 0; i < s.inputs[k].size(); ++i) {
      const std::int64_t l = s.inputs[k][i];
      const SymDim& e = in[k].shape[i];
      const auto c = e.try_constant();
      auto [it, added] = ext.try_emplace(l, e);
      bool& f = fixed[l];
      if (c && *c != 1 && !f) {
        it->second = e;
        f = true;
      } else if (!added && !f && !c &&
                 it->second.try_constant() == std::optional<std::int64_t>(1)) {
        it->second = e;  // the first symbolic extent over earlier 1s
      }
    }
  }
  return ext;
}

// Whether axis i of operand k broadcasts: a constant 1 where the label's
// extent is not the constant 1.
bool broadcasts(const SymDim& axis, const SymDim& label) {
  return axis.try_constant() == std::optional<std::int64_t>(1) &&
         label.try_constant() != std::optional<std::int64_t>(1);
}

std::shared_ptr<const EinsumOp> make_op(Spec spec, EinsumOptions options) {
  return std::make_shared<const EinsumOp>(std::move(spec), std::move(options));
}

}  // namespace

EinsumOp::EinsumOp(Spec spec, EinsumOptions options)
    : family_(std::string(kFamily)), spec_(std::move(spec)), options_(std::move(options)) {
  hash_ = hash_of(spec_, options_);
}

bool EinsumOp::equals(const Op& other) const {
  const auto* o = dynamic_cast<const EinsumOp*>(&other);
  return o != nullptr && o->hash_ == hash_ && o->spec_ == spec_ &&
         same_options(o->options_, options_);
}

std::string EinsumOp::describe() const {
  std::string d = "einsum(";
  for (std::size_t k = 0; k < spec_.inputs.size(); ++k) {
    if (k > 0) d.append(", ");
    append_term(d, spec_, spec_.inputs[k]);
  }
  d.append(" -> ");
  append_term(d, spec_, spec_.output);
  return d.append(")");
}

InferenceResult EinsumOp::infer(std::span<const TensorMeta> in) const {
  if (in.size() != spec_.inputs.size()) {
    fail(ErrorKind::InvalidArgument, kOp, "got ", in.size(), " operands but the equation has ",
         spec_.inputs.size(), " terms");
  }
  std::vector<Dims> dims;
  for (std::size_t k = 0; k < in.size(); ++k) {
    if (in[k].dtype != in[0].dtype) {
      fail(ErrorKind::DTypeMismatch, kOp, "operand ", k, " is ", tenferro::name(in[k].dtype),
           " but operand 0 is ", tenferro::name(in[0].dtype),
           "; convert the operands to one dtype");
    }
    if (in[k].shape.size() != spec_.inputs[k].size()) {
      fail(ErrorKind::RankMismatch, kOp, "operand ", k, " has rank ", in[k].shape.size(),
           " but its term has ", spec_.inputs[k].size(), " labels");
    }
    Dims d;
    for (const SymDim& e : in[k].shape) d.push_back(e.try_constant());
    dims.push_back(std::move(d));
  }
  (void)analyse(spec_, dims, kOp);  // the constant extents, with einsum()'s errors
  const auto ext = label_extents(spec_, in);
  InferenceResult r;
  for (std::size_t k = 0; k < in.size(); ++k) {
    for (std::size_t i = 0; i < spec_.inputs[k].size(); ++i) {
      const SymDim& e = in[k].shape[i];
      const SymDim& want = ext.at(spec_.inputs[k][i]);
      if (e.is_constant() || e == want) continue;
      r.constraints.push_back(ShapeConstraint::dims_equal(
          want, e,
          tenferro::detail::cat("einsum: label ", spec_.label_name(spec_.inputs[k][i]),
                                " of operand ", k, " (axis ", i, ") has the label's extent")));
    }
  }
  SymShape out;
  for (const std::int64_t l : spec_.output) out.push_back(ext.at(l));
  r.outputs.push_back(TensorMeta{in.empty() ? DType::F64 : in[0].dtype, std::move(out)});
  return r;
}

// ---- engine: plan when the shapes are known ----------------------------------------

namespace {

class Executor final : public PlanExecutor {
 public:
  explicit Executor(std::shared_ptr<const Program> program) : program_(std::move(program)) {}
  std::vector<Tensor> execute(ExecutionContext& context, ExtensionCaches&,
                              std::span<const Tensor> inputs) const override {
    return {run_direct(*program_, std::vector<Tensor>(inputs.begin(), inputs.end()),
                       context.backend())};
  }
  bool supports_session() const override { return true; }
  std::vector<Tensor> execute_in_session(EngineSession& session, ExtensionCaches&,
                                         std::span<const Tensor> inputs) const override {
    return {run_direct(*program_, std::vector<Tensor>(inputs.begin(), inputs.end()),
                       session.backend())};
  }

 private:
  std::shared_ptr<const Program> program_;
};

class Engine final : public ExtensionEngine {
 public:
  PrepareOutcome prepare(const PrepareRequest& request) const override {
    const auto* op = dynamic_cast<const EinsumOp*>(&request.op);
    if (op == nullptr) {
      fail(ErrorKind::InvalidArgument, std::string(request.op.name()),
           "invalid payload: the einsum engine expects an einsum op");
    }
    std::vector<Dims> dims;
    for (const TensorSignature& e : request.signature.entries()) {
      Dims d;
      for (const std::int64_t x : e.shape.span()) d.push_back(x);
      dims.push_back(std::move(d));
    }
    const DType dtype = request.signature.size() == 0 ? DType::F64 : request.signature[0].dtype;
    auto program =
        std::make_shared<const Program>(build_program(op->spec(), dims, op->options(), kOp, dtype));
    return Prepared{std::make_shared<const Executor>(std::move(program))};
  }
};

// The pullback: the forward planned for the bound operand shapes (the path
// the forward node runs), the cotangent pulled back along its tree.
class PullbackExecutor final : public PlanExecutor {
 public:
  explicit PullbackExecutor(std::shared_ptr<const Program> program)
      : program_(std::move(program)) {}
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
    const std::vector<Tensor> operands(inputs.begin(), inputs.end() - 1);
    return pullback_direct(*program_, operands, inputs.back(), backend);
  }
  std::shared_ptr<const Program> program_;
};

class PullbackEngine final : public ExtensionEngine {
 public:
  PrepareOutcome prepare(const PrepareRequest& request) const override {
    const auto* op = dynamic_cast<const EinsumPullbackOp*>(&request.op);
    if (op == nullptr) {
      fail(ErrorKind::InvalidArgument, std::string(request.op.name()),
           "invalid payload: the einsum pullback engine expects an einsum pullback op");
    }
    std::vector<Dims> dims;
    const auto entries = request.signature.entries();
    for (std::size_t k = 0; k + 1 < entries.size(); ++k) {
      Dims d;
      for (const std::int64_t x : entries[k].shape.span()) d.push_back(x);
      dims.push_back(std::move(d));
    }
    const DType dtype = entries.empty() ? DType::F64 : entries[0].dtype;
    const EinsumOp& f = op->forward();
    auto program =
        std::make_shared<const Program>(build_program(f.spec(), dims, f.options(), kOp, dtype));
    return Prepared{std::make_shared<const PullbackExecutor>(std::move(program))};
  }
};

ExtensionModulePtr build_module(const EngineId& engine) {
  auto module = std::make_shared<SimpleModule>(kModuleId);
  const FamilyId family{std::string(EinsumOp::kFamily)};
  const FamilyId pullback{std::string(EinsumPullbackOp::kFamily)};
  module->engine(family, engine, std::make_shared<const Engine>());
  module->engine(pullback, engine, std::make_shared<const PullbackEngine>());
  ad::FamilyRules rules;
  rules.emplace_back(family, EinsumOp::rules());
  rules.emplace_back(pullback, EinsumPullbackOp::rules());
  return ad::with_rules(module, std::move(rules));
}

const ModulesByEngine& modules() {
  static const ModulesByEngine m(build_module);
  return m;
}

}  // namespace

ExtensionModulePtr EinsumOp::module_for(const EngineRegistration& engine) const {
  return modules().get(engine.id());
}

ExtensionModulePtr EinsumPullbackOp::module_for(const EngineRegistration& engine) const {
  return modules().get(engine.id());
}

EinsumPullbackOp::EinsumPullbackOp(std::shared_ptr<const EinsumOp> forward)
    : family_(std::string(kFamily)), forward_(std::move(forward)) {
  hash_ = hash_combine(std::hash<std::string_view>{}(kFamily), forward_->hash());
}

bool EinsumPullbackOp::equals(const Op& other) const {
  const auto* o = dynamic_cast<const EinsumPullbackOp*>(&other);
  return o != nullptr && o->hash_ == hash_ && o->forward_->equals(*forward_);
}

std::string EinsumPullbackOp::describe() const {
  return "pullback of " + forward_->describe();
}

InferenceResult EinsumPullbackOp::infer(std::span<const TensorMeta> in) const {
  const std::size_t n = forward_->input_count();
  if (in.size() != n + 1) {
    fail(ErrorKind::InvalidArgument, kOp, "the pullback takes ", n + 1, " inputs, got ", in.size());
  }
  InferenceResult r = forward_->infer(in.first(n));
  const TensorMeta& out = r.outputs.at(0);
  const TensorMeta& ct = in[n];
  if (ct.dtype != out.dtype) {
    fail(ErrorKind::DTypeMismatch, kOp, "the output cotangent is ", tenferro::name(ct.dtype),
         " but the output is ", tenferro::name(out.dtype));
  }
  if (ct.shape.size() != out.shape.size()) {
    fail(ErrorKind::RankMismatch, kOp, "the output cotangent has rank ", ct.shape.size(),
         " but the output has rank ", out.shape.size());
  }
  for (std::size_t i = 0; i < ct.shape.size(); ++i) {
    if (ct.shape[i] == out.shape[i]) continue;
    r.constraints.push_back(ShapeConstraint::dims_equal(
        out.shape[i], ct.shape[i],
        tenferro::detail::cat("einsum: axis ", i,
                              " of the output cotangent has the output's extent")));
  }
  r.outputs.assign(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(n));
  return r;
}

// ---- AD: einsum is linear in each operand -------------------------------------------

namespace {

// A label id no term of `s` uses.
struct FreshLabels {
  explicit FreshLabels(const Spec& s) {
    for (const auto& in : s.inputs) used.insert(in.begin(), in.end());
  }
  std::int64_t next() {
    while (used.count(candidate) != 0) ++candidate;
    used.insert(candidate);
    return candidate;
  }
  std::set<std::int64_t> used;
  std::int64_t candidate = std::int64_t{1} << 40;
};

// The other operands as the cotangents read them: conjugated when complex
// (a linear input's own Val is invalid and stays so).
std::vector<ad::Val> conjugated(const ad::RuleArgs& a, std::span<const bool> linear) {
  std::vector<ad::Val> v(a.inputs.begin(), a.inputs.end());
  if (!is_complex(a.input_metas[0].dtype)) return v;
  for (std::size_t j = 0; j < v.size(); ++j) {
    if (linear.empty() || !linear[j]) v[j] = a.emitter.conj(v[j]);
  }
  return v;
}

// The cotangent of operand k: einsum(ct, conj(other operands) -> term k).
// Axes of operand k that broadcast get fresh labels (the cotangent sums
// over the label's extent). A label of term k with no full-extent
// occurrence in the output or another term comes from a vector of ones of
// its extent (a repeated one then embeds the diagonal, as the adjoint of
// taking it). `ext`: label_extents of the op's inputs, computed once per rule.
ad::Val cotangent(ad::Emitter& e, const EinsumOp& op, std::span<const TensorMeta> metas, ad::Val ct,
                  std::size_t k, const std::vector<ad::Val>& others,
                  const std::map<std::int64_t, SymDim>& ext) {
  const Spec& s = op.spec();
  const DType dtype = metas[k].dtype;
  Spec g;
  g.from_string = s.from_string;
  g.soft_memory_limit = true;  // its result (operand k's shape) may exceed the limit
  std::vector<ad::Val> ins;
  g.inputs.push_back(s.output);
  ins.push_back(ct);
  std::set<std::int64_t> full(s.output.begin(), s.output.end());
  for (std::size_t j = 0; j < s.inputs.size(); ++j) {
    if (j == k) continue;
    g.inputs.push_back(s.inputs[j]);
    ins.push_back(others[j]);
    for (std::size_t i = 0; i < s.inputs[j].size(); ++i) {
      const std::int64_t l = s.inputs[j][i];
      if (!broadcasts(metas[j].shape[i], ext.at(l))) full.insert(l);
    }
  }
  FreshLabels fresh(s);
  std::map<std::int64_t, std::int64_t> renamed;
  std::vector<std::int64_t> out = s.inputs[k];
  const SymShape& shape = metas[k].shape;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!broadcasts(shape[i], ext.at(out[i]))) continue;
    auto [it, added] = renamed.try_emplace(out[i], 0);
    if (added) it->second = fresh.next();
    out[i] = it->second;
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!full.insert(out[i]).second) continue;
    g.inputs.push_back({out[i]});
    ins.push_back(e.full(SymShape{shape[i]}, Scalar(1.0), dtype));
  }
  g.output = std::move(out);
  EinsumOptions options = op.options();
  options.path = std::nullopt;  // the user's path is for the forward's operands
  return e.emit1(make_op(std::move(g), std::move(options)), std::span<const ad::Val>(ins));
}

std::vector<ad::MaybeVal> einsum_jvp(const ad::RuleArgs& a, std::span<const ad::MaybeVal> t) {
  const auto& op = static_cast<const EinsumOp&>(a.op);
  ad::MaybeVal sum;
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (!t[k]) continue;
    std::vector<ad::Val> ins(a.inputs.begin(), a.inputs.end());
    ins[k] = *t[k];
    const ad::Val y =
        a.emitter.emit1(make_op(op.spec(), op.options()), std::span<const ad::Val>(ins));
    sum = sum ? a.emitter.add(*sum, y) : y;
  }
  return {sum};
}

std::vector<ad::MaybeVal> einsum_transpose(const ad::RuleArgs& a, std::span<const bool> linear,
                                           std::span<const ad::MaybeVal> ct) {
  std::vector<ad::MaybeVal> r(a.inputs.size());
  std::size_t count = 0;
  for (const bool l : linear) count += l ? 1 : 0;
  if (count > 1) {
    fail(ErrorKind::Internal, kOp, "transposed in ", count,
         " operands at once; einsum is linear in one operand at a time");
  }
  if (!ct[0]) return r;
  const std::vector<ad::Val> others = conjugated(a, linear);
  const auto ext = label_extents(static_cast<const EinsumOp&>(a.op).spec(), a.input_metas);
  for (std::size_t k = 0; k < linear.size(); ++k) {
    if (linear[k]) {
      r[k] = cotangent(a.emitter, static_cast<const EinsumOp&>(a.op), a.input_metas, *ct[0], k,
                       others, ext);
    }
  }
  return r;
}

// Reverse mode: one pullback node, planned with the forward when the
// dimensions bind and run along the forward's tree.
std::vector<ad::MaybeVal> einsum_vjp(const ad::RuleArgs& a, std::span<const ad::MaybeVal> ct) {
  std::vector<ad::MaybeVal> r(a.inputs.size());
  if (!ct[0]) return r;
  const auto& op = static_cast<const EinsumOp&>(a.op);
  std::vector<ad::Val> ins(a.inputs.begin(), a.inputs.end());
  ins.push_back(*ct[0]);
  const auto pullback = std::make_shared<const EinsumPullbackOp>(make_op(op.spec(), op.options()));
  const std::vector<ad::Val> g = a.emitter.emit(pullback, std::span<const ad::Val>(ins));
  for (std::size_t k = 0; k < r.size(); ++k) {
    if (a.wants(k)) r[k] = g[k];
  }
  return r;
}

// The pullback's outputs g_k = einsum(ct, conj(x_j), j != k -> term k) are
// linear in ct and in each x_j (j != k): the tangent of g_k is the same
// einsum with ct replaced by its tangent, plus one with each x_j replaced
// by its tangent. Einsum nodes again, so every higher order follows.
std::vector<ad::MaybeVal> pullback_jvp(const ad::RuleArgs& a, std::span<const ad::MaybeVal> t) {
  const auto& op = static_cast<const EinsumPullbackOp&>(a.op);
  const EinsumOp& f = op.forward();
  const std::size_t n = f.input_count();
  ad::Emitter& e = a.emitter;
  const bool complex = is_complex(a.input_metas[0].dtype);
  const std::span<const TensorMeta> metas = a.input_metas.first(n);
  const auto ext = label_extents(f.spec(), metas);
  std::vector<ad::Val> others(a.inputs.begin(), a.inputs.begin() + static_cast<std::ptrdiff_t>(n));
  if (complex) {
    for (ad::Val& v : others) v = e.conj(v);
  }
  const ad::Val ct = a.inputs[n];
  std::vector<ad::MaybeVal> r(n);
  auto accumulate = [&](std::size_t k, ad::Val v) { r[k] = r[k] ? e.add(*r[k], v) : v; };
  for (std::size_t k = 0; k < n; ++k) {
    if (t[n]) accumulate(k, cotangent(e, f, metas, *t[n], k, others, ext));
    for (std::size_t j = 0; j < n; ++j) {
      if (j == k || !t[j]) continue;
      std::vector<ad::Val> with = others;
      with[j] = complex ? e.conj(*t[j]) : *t[j];
      accumulate(k, cotangent(e, f, metas, ct, k, with, ext));
    }
  }
  return r;
}

}  // namespace

const ad::RuleSet& EinsumOp::rules() {
  static const ad::RuleSet r = [] {
    ad::RuleSet s;
    s.jvp = einsum_jvp;
    s.transpose = einsum_transpose;
    s.vjp = einsum_vjp;
    s.residuals = ad::Residuals{~std::uint64_t{0}, 0};  // the operands, not the result
    return s;
  }();
  return r;
}

const ad::RuleSet& EinsumPullbackOp::rules() {
  static const ad::RuleSet r = [] {
    ad::RuleSet s;
    s.jvp = pullback_jvp;  // reverse mode: linearise, then transpose the einsum nodes
    s.residuals = ad::Residuals{~std::uint64_t{0}, 0};  // the operands and the cotangent
    return s;
  }();
  return r;
}

TracedTensor apply_traced(const Spec& spec, const std::vector<TracedTensor>& operands,
                          const EinsumOptions& options) {
  // Check the options now (a bad path, budget or limit fails here, not at
  // the first run): plan once with the symbolic extents as 2, greedily.
  std::vector<Dims> dims;
  for (const TracedTensor& x : operands) {
    Dims d;
    for (const SymDim& e : x.shape()) d.push_back(e.try_constant());
    dims.push_back(std::move(d));
  }
  const Analysis a = analyse(spec, dims, kOp);
  EinsumOptions check = options;
  if (!check.path) check.strategy = EinsumStrategy::Greedy;
  (void)plan_dense(a.reduced, a.output_distinct, planning_extents(a), check, "einsum");
  return extension::apply(make_op(spec, options), operands)[0];
}

}  // namespace tenferro::einsum_detail
