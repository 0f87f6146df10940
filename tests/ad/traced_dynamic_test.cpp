// Dynamic (data-dependent) sizes in prepared programs: an extension op
// declares an output extent as SymDim::dynamic(name, bound), the executor
// binds it from the op's result on every run, later ops and shape
// constraints use it, and AD graphs carry it; one preparation serves every
// extent.

#include "ad/traced_fixtures.hpp"
#include "tenferro/ad/rules.hpp"

using namespace ttest;

namespace {

struct PositiveParams {
  std::string size;    // the dynamic size's name
  std::int64_t bound;  // declared upper bound (< 0: the input's extent)
  bool operator==(const PositiveParams&) const = default;
};
std::size_t hash_value(const PositiveParams& p) {
  return std::hash<std::string>{}(p.size) ^ std::hash<std::int64_t>{}(p.bound);
}

// x f64 [n] -> the i64 indices of its positive entries, [r] with r dynamic.
class PositiveIndices final : public ExtensionOpWithParams<PositiveIndices, PositiveParams>,
                              public ad::RuleCarryingOp {
 public:
  static constexpr std::string_view kFamily = "test.positive_indices.v1";
  PositiveIndices(std::string size, std::int64_t bound = -1)
      : ExtensionOpWithParams(PositiveParams{std::move(size), bound}) {}
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return 1; }
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    const SymDim bound = params().bound < 0 ? in[0].shape[0] : SymDim(params().bound);
    return {{TensorMeta{DType::I64, {SymDim::dynamic(params().size, bound)}}}, {}};
  }
  const ad::RuleSet& ad_rules() const override {
    static const ad::RuleSet rules = [] {
      ad::RuleSet r;
      r.non_differentiable = true;
      return r;
    }();
    return rules;
  }
};

std::shared_ptr<SimpleModule> positive_module() {
  auto m = std::make_shared<SimpleModule>("test.dynamic");
  m->family<PositiveIndices>(
      [](const PositiveIndices&, ExecutionScope&, ExtensionCaches&, std::span<const Tensor> in) {
        std::vector<std::int64_t> idx;
        const auto v = in[0].contiguous().to_vector<double>();
        for (std::size_t i = 0; i < v.size(); ++i)
          if (v[i] > 0) idx.push_back(static_cast<std::int64_t>(i));
        const auto r = static_cast<std::int64_t>(idx.size());
        return std::vector<Tensor>{Tensor::from_col_major({r}, idx)};
      });
  return m;
}

RuntimePtr dynamic_runtime() {
  auto rt = cpu_runtime();
  rt->install_module(positive_module());
  return rt;
}

TracedTensor positives(const TracedTensor& x, const std::string& size, std::int64_t bound = -1) {
  return extension::apply(std::make_shared<PositiveIndices>(size, bound), {x})[0];
}

Tensor vec(std::vector<double> v) {
  const auto n = static_cast<std::int64_t>(v.size());
  return Tensor::from_col_major({n}, v);
}

}  // namespace

TEST(TracedDynamic, SizeBindsPerRunWithoutRepreparing) {
  auto rt = dynamic_runtime();
  auto x = placeholder(f64, {n_dim()}, "x");
  const TracedTensor idx = positives(x, "r");
  ASSERT_EQ(idx.shape().size(), 1u);
  EXPECT_TRUE(idx.shape()[0].is_dynamic());
  EXPECT_EQ(idx.shape()[0].name(), "r");
  EXPECT_EQ(idx.shape()[0].upper_bound(), n_dim());
  // y = 2 x[positive]; loss = sum(y^2) whose gradient is 8 x on the positives.
  const TracedTensor y = index_select(x, 0, idx) * 2.0;
  const TracedTensor loss = sum(y * y);
  const TracedTensor g = grad(loss, x);
  const Program p = compile({y, loss, g}, {x});
  EXPECT_NE(p.to_string().find("f64[r]"), std::string::npos) << p.to_string();
  const Tensor first[1] = {vec({1, -2, 3})};
  PreparedProgram plan = prepare(*rt, p, InputSignature::of(first));
  const ProgramCounters before = rt->program_counters();
  const std::vector<std::vector<double>> inputs = {
      {1, -2, 3}, {-1, -2, -3}, {4, 5, 6}, {0.5, -1, 2, -3, 7}, {}};
  for (const auto& values : inputs) {
    RunStats stats;
    const Tensor in[1] = {vec(values)};
    const auto out = run(*rt, plan, in, &stats);
    std::vector<double> want_y, want_g;
    double want_loss = 0;
    for (double v : values) {
      if (v > 0) want_y.push_back(2 * v), want_loss += 4 * v * v;
      want_g.push_back(v > 0 ? 8 * v : 0.0);
    }
    const auto r = static_cast<std::int64_t>(want_y.size());
    EXPECT_EQ(stats.bindings.at("r"), r);
    EXPECT_EQ(out[0].shape(), (Shape{r}));
    EXPECT_EQ(out[0].to_vector<double>(), want_y);
    EXPECT_DOUBLE_EQ(out[1].item<double>(), want_loss);
    EXPECT_EQ(out[2].to_vector<double>(), want_g);
  }
  const ProgramCounters after = rt->program_counters();
  EXPECT_EQ(after.preparations, before.preparations);  // one plan for every extent
  EXPECT_EQ(after.runs, before.runs + inputs.size());
}

TEST(TracedDynamic, JvpCarriesTheDynamicExtent) {
  auto rt = dynamic_runtime();
  auto x = placeholder(f64, {4}, "x");
  auto t = placeholder(f64, {4}, "t");
  const TracedTensor y = exp(index_select(x, 0, positives(x, "r")));
  const auto dy = jvp(y, x, t);
  ASSERT_TRUE(dy.has_value());
  const Program p = compile({y, *dy}, {x, t});
  const auto out = eval(*rt, p, {vec({-1, 0.5, 2, -3}), vec({10, 20, 30, 40})});
  ASSERT_EQ(out[1].shape(), (Shape{2}));
  const auto d = out[1].to_vector<double>();
  EXPECT_NEAR(d[0], 20 * std::exp(0.5), 1e-12);
  EXPECT_NEAR(d[1], 30 * std::exp(2.0), 1e-12);
}

TEST(TracedDynamic, ConstraintsOverDynamicSizesAreCheckedWhenTheyBind) {
  auto rt = dynamic_runtime();
  auto a = placeholder(f64, {n_dim()}, "a");
  auto b = placeholder(f64, {n_dim()}, "b");
  // Positive entries of a plus those of b: the counts must agree, which only
  // the run can tell.
  const TracedTensor s =
      index_select(a, 0, positives(a, "ra")) + index_select(b, 0, positives(b, "rb"));
  const Program p = compile({s}, {a, b});
  const Tensor in[2] = {vec({1, -1, 2}), vec({-5, 3, 4})};
  PreparedProgram plan = prepare(*rt, p, InputSignature::of(in));  // nothing bound yet
  EXPECT_EQ(run(*rt, plan, in)[0].to_vector<double>(), (std::vector<double>{4, 6}));
  try {
    run(*rt, plan, {vec({1, 1, 2}), vec({-5, 3, 4})});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(e.what()).find("ra"), std::string::npos) << e.what();
  }
}

TEST(TracedDynamic, ContractViolationsAreTyped) {
  auto rt = dynamic_runtime();
  auto x = placeholder(f64, {4}, "x");
  // Declared at most 2, but three entries are positive.
  const Program over = compile({index_select(x, 0, positives(x, "r", 2))}, {x});
  EXPECT_EQ(eval(*rt, over, {vec({1, -1, -1, 2})})[0].shape(), (Shape{2}));
  EXPECT_TF_ERROR(eval(*rt, over, {vec({1, 1, -1, 2})}), ErrorKind::ExtensionContract);
  // One name for two different data-dependent sizes.
  const TracedTensor both = concatenate(
      {index_select(x, 0, positives(x, "r")), index_select(-x, 0, positives(-x, "r"))}, 0);
  const Program clash = compile({both}, {x});
  EXPECT_EQ(eval(*rt, clash, {vec({1, -1, -2, 2})})[0].shape(), (Shape{4}));
  EXPECT_TF_ERROR(eval(*rt, clash, {vec({1, 1, -2, 2})}), ErrorKind::ShapeMismatch);
}

TEST(TracedDynamic, VjpProgramTakesACotangentOfTheDynamicExtent) {
  auto rt = dynamic_runtime();
  auto x = placeholder(f64, {n_dim()}, "x");
  const Program p = compile({exp(index_select(x, 0, positives(x, "r")))}, {x});
  // Inputs: x, then the cotangent of the output, whose extent is r.
  const Program back = vjp(p);
  ASSERT_EQ(back.input_count(), 2u);
  EXPECT_TRUE(back.input_meta(1).shape[0].is_dynamic());
  const Tensor x0 = vec({0.5, -1, 2, -3});
  const auto g = eval(*rt, back, {x0, vec({10, 100})});
  const auto gv = g.back().to_vector<double>();
  ASSERT_EQ(gv.size(), 4u);
  EXPECT_NEAR(gv[0], 10 * std::exp(0.5), 1e-12);
  EXPECT_EQ(gv[1], 0.0);
  EXPECT_NEAR(gv[2], 100 * std::exp(2.0), 1e-10);
  EXPECT_EQ(gv[3], 0.0);
  // A cotangent whose extent is not the one the op finds.
  EXPECT_TF_ERROR(eval(*rt, back, {x0, vec({10, 100, 1000})}), ErrorKind::ShapeMismatch);
}

TEST(TracedDynamic, CheckpointRegionsOverDynamicExtents) {
  auto rt = dynamic_runtime();
  auto x = placeholder(f64, {n_dim()}, "x");
  const TracedTensor kept = index_select(x, 0, positives(x, "r"));
  const TracedTensor y = checkpoint([](const TracedTensor& t) { return sum(exp(t) * t); }, kept);
  const Program p = compile({y, grad(y, x)}, {x});
  for (const auto& values : std::vector<std::vector<double>>{{0.5, -1, 2}, {1, 2, 3, 4, -5}}) {
    const auto out = eval(*rt, p, {vec(values)});
    double want = 0;
    std::vector<double> want_g;
    for (double v : values) {
      if (v > 0) want += std::exp(v) * v;
      want_g.push_back(v > 0 ? std::exp(v) * (1 + v) : 0.0);
    }
    EXPECT_NEAR(out[0].item<double>(), want, 1e-12);
    const auto g = out[1].to_vector<double>();
    ASSERT_EQ(g.size(), want_g.size());
    for (std::size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], want_g[i], 1e-12) << i;
  }
}
