// Composite operators (tenferro/ad/composite.hpp): values against PyTorch
// reference numbers, derivatives at kinks and ties against PyTorch's, eager
// gradients through the public checker, traced == eager (values and vjp), and
// error kinds.
//
// Reference numbers were computed offline with torch 1.13 (CPU) in float64 /
// float32, e.g. F.elu(torch.tensor(X), 1.3) and, for gradients,
// xx.requires_grad_(); F.elu(xx, 1.3).sum().backward(); xx.grad, printed with
// repr(). nan_to_num of complex input (not implemented in torch 1.13) uses
// numpy.nan_to_num. Matrices are listed column-major (torch M.T.flatten()).

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <vector>

#include "tenferro/ad/composite.hpp"
#include "tenferro/ad/grad_check.hpp"
#include "tenferro/ad/program.hpp"
#include "tenferro/ad/transforms.hpp"
#include "test_util.hpp"

namespace ctest {

using namespace tenferro;

inline const EagerRuntimePtr& runtime() {
  static const EagerRuntimePtr rt = EagerRuntime::make_cpu(CpuBackendOptions{1});
  return rt;
}

/// A tensor of `dtype` (f32 or f64) holding `values` (column-major).
inline Tensor real_tensor(const std::vector<double>& values, DType dtype = f64, Shape shape = {}) {
  if (shape.empty()) shape = Shape{static_cast<std::int64_t>(values.size())};
  if (dtype == f32)
    return Tensor::from_col_major(shape, std::vector<float>(values.begin(), values.end()));
  return Tensor::from_col_major(shape, values);
}
inline Tensor complex_tensor(const std::vector<c128_t>& values, DType dtype = c128) {
  const Shape shape{static_cast<std::int64_t>(values.size())};
  if (dtype == c64) {
    std::vector<c64_t> v;
    for (auto z : values)
      v.emplace_back(static_cast<float>(z.real()), static_cast<float>(z.imag()));
    return Tensor::from_col_major(shape, v);
  }
  return Tensor::from_col_major(shape, values);
}

inline EagerTensor eager(const std::vector<double>& values, DType dtype = f64, Shape shape = {}) {
  return runtime()->tensor(real_tensor(values, dtype, shape));
}
inline EagerTensor eager_var(const std::vector<double>& values, DType dtype = f64) {
  return runtime()->variable(real_tensor(values, dtype));
}

inline bool close_to(double got, double want, double rtol, double atol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::abs(got - want) <= atol + rtol * std::abs(want);
}

/// Values (read as f64) equal `want` within rtol (NaN matches NaN, inf exactly).
inline void expect_values(const Tensor& got, const std::vector<double>& want, double rtol = 1e-13,
                          double atol = 1e-300) {
  ASSERT_EQ(got.numel(), static_cast<std::int64_t>(want.size()));
  const std::vector<double> g = cast(got, f64, runtime()->backend()).to_vector<double>();
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(close_to(g[i], want[i], rtol, atol))
        << "element " << i << ": got " << g[i] << ", want " << want[i];
  }
}
inline void expect_values(const EagerTensor& got, const std::vector<double>& want,
                          double rtol = 1e-13, double atol = 1e-300) {
  expect_values(got.value(), want, rtol, atol);
}
inline void expect_complex(const Tensor& got, const std::vector<c128_t>& want, double rtol = 1e-13,
                           double atol = 1e-300) {
  ASSERT_EQ(got.numel(), static_cast<std::int64_t>(want.size()));
  const std::vector<c128_t> g = cast(got, c128, runtime()->backend()).to_vector<c128_t>();
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(close_to(g[i].real(), want[i].real(), rtol, atol) &&
                close_to(g[i].imag(), want[i].imag(), rtol, atol))
        << "element " << i << ": got " << g[i] << ", want " << want[i];
  }
}

inline std::vector<double> host(const EagerTensor& t) {
  return cast(t.value(), f64, runtime()->backend()).to_vector<double>();
}

/// The gradient of sum(f(x)) at x (eager, functional).
template <class F>
EagerTensor sum_grad(F f, const EagerTensor& x) {
  return grad([&](const EagerTensor& z) { return sum(f(z)); }, x);
}

/// Finite differences and jvp/vjp adjointness through the public checker.
inline void expect_gradients_ok(const EagerFnN& f, const std::vector<EagerTensor>& inputs,
                                const char* what) {
  GradCheckOptions opt;
  opt.rtol = 1e-5;
  auto r = check_gradients(f, inputs, opt);
  EXPECT_TRUE(r.ok) << what << ": " << r.detail;
}

/// The same function through the traced tier (compile + run_compiled, and its
/// vjp program) gives the eager values and the eager vjp. `f` is generic over
/// the tensor type: f(std::span<const T>) -> T.
template <class F>
void expect_traced_matches_eager(F f, const std::vector<Tensor>& inputs, const Tensor& cotangent,
                                 double rtol = 1e-13) {
  std::vector<TracedTensor> ph;
  std::vector<EagerTensor> ev;
  for (const Tensor& t : inputs) {
    SymShape s(t.shape().begin(), t.shape().end());
    ph.push_back(placeholder(t.dtype(), s));
    ev.push_back(runtime()->tensor(t));
  }
  const TracedTensor y = f(std::span<const TracedTensor>(ph));
  const Program p =
      compile(std::span<const TracedTensor>(&y, 1), std::span<const TracedTensor>(ph));
  Runtime& rt = *runtime()->runtime();
  const std::vector<Tensor> traced_out = run_compiled(rt, p, std::span<const Tensor>(inputs));
  const EagerTensor eager_out = f(std::span<const EagerTensor>(ev));
  ASSERT_EQ(traced_out[0].dtype(), eager_out.dtype());
  expect_values(traced_out[0], host(eager_out), rtol);

  std::vector<Tensor> vin = inputs;
  vin.push_back(cotangent);
  const std::vector<Tensor> vj = run_compiled(rt, vjp(p), std::span<const Tensor>(vin));
  const EagerTensor ct = runtime()->tensor(cotangent);
  auto loss = [&](std::span<const EagerTensor> z) { return sum(f(z) * ct); };
  const auto eg = grad_many(loss, ev);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_TRUE(eg[i].has_value()) << "input " << i;
    expect_values(vj[1 + i], host(*eg[i]), rtol, 1e-15);
  }
}

}  // namespace ctest

using namespace ctest;

// ---- activations -----------------------------------------------------------------------

namespace {

struct ActCase {
  const char* name;
  std::function<EagerTensor(const EagerTensor&)> f;
  std::vector<double> values;  // torch, float64
  std::vector<double> grad;    // torch: d sum(f(x)) / dx, float64
  std::vector<double> f32;     // torch, float32
};

const std::vector<double> kX = {-25.0, -3.0, -1.5, -0.5, 0.0, 0.3, 1.0, 3.0, 6.5, 25.0};

const std::vector<ActCase>& activation_cases() {
  static const std::vector<ActCase> cases = {
      {"relu",
       [](const EagerTensor& z) { return relu(z); },
       {0.0, 0.0, 0.0, 0.0, 0.0, 0.3, 1.0, 3.0, 6.5, 25.0},
       {0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0},
       {0.0, 0.0, 0.0, 0.0, 0.0, 0.30000001192092896, 1.0, 3.0, 6.5, 25.0}},
      {"relu6",
       [](const EagerTensor& z) { return relu6(z); },
       {0.0, 0.0, 0.0, 0.0, 0.0, 0.3, 1.0, 3.0, 6.0, 6.0},
       {0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0},
       {0.0, 0.0, 0.0, 0.0, 0.0, 0.30000001192092896, 1.0, 3.0, 6.0, 6.0}},
      {"leaky_relu",
       [](const EagerTensor& z) { return leaky_relu(z, 0.2); },
       {-5.0, -0.6000000000000001, -0.30000000000000004, -0.1, 0.0, 0.3, 1.0, 3.0, 6.5, 25.0},
       {0.2, 0.2, 0.2, 0.2, 0.2, 1.0, 1.0, 1.0, 1.0, 1.0},
       {-5.0, -0.6000000238418579, -0.30000001192092896, -0.10000000149011612, 0.0,
        0.30000001192092896, 1.0, 3.0, 6.5, 25.0}},
      {"elu",
       [](const EagerTensor& z) { return elu(z, 1.3); },
       {-1.2999999999819458, -1.235276811121777, -1.0099307918070413, -0.5115101423735766, 0.0, 0.3,
        1.0, 3.0, 6.5, 25.0},
       {1.8054327024453228e-11, 0.06472318887822313, 0.2900692081929588, 0.7884898576264234, 1.3,
        1.0, 1.0, 1.0, 1.0, 1.0},
       {-1.2999999523162842, -1.2352768182754517, -1.0099307298660278, -0.5115101337432861, 0.0,
        0.30000001192092896, 1.0, 3.0, 6.5, 25.0}},
      {"celu",
       [](const EagerTensor& z) { return celu(z, 0.7); },
       {-0.6999999999999997, -0.6903653492868647, -0.6178765837340244, -0.35732083831013284, 0.0,
        0.3, 1.0, 3.0, 6.5, 25.0},
       {3.0866154977144455e-16, 0.013763785962892475, 0.11731916381089817, 0.48954166193890875,
        1.0000000170298988, 1.0, 1.0, 1.0, 1.0, 1.0},
       {-0.699999988079071, -0.6903653144836426, -0.6178765892982483, -0.3573208451271057, 0.0,
        0.30000001192092896, 1.0, 3.0, 6.5, 25.0}},
      {"selu",
       [](const EagerTensor& z) { return selu(z); },
       {-1.7580993408229604, -1.6705687287671118, -1.3658143533672527, -0.6917581878028713, 0.0,
        0.31521029620664415, 1.0507009873554805, 3.1521029620664414, 6.829556417810623,
        26.26752468388701},
       {2.4416384954718613e-11, 0.08753061208026487, 0.392284987480124, 1.0663411530445053,
        1.7580993408473766, 1.0507009873554805, 1.0507009873554805, 1.0507009873554805,
        1.0507009873554805, 1.0507009873554805},
       {-1.7580993175506592, -1.6705687046051025, -1.3658143281936646, -0.6917581558227539, 0.0,
        0.3152103126049042, 1.0507010221481323, 3.1521029472351074, 6.829556465148926,
        26.26752471923828}},
      {"silu",
       [](const EagerTensor& z) { return silu(z); },
       {-3.4719859661927863e-10, -0.14227761953270035, -0.2736382857095345, -0.1887703343990727,
        0.0, 0.1723327550434977, 0.7310585786300049, 2.8577223804672998, 6.490242315331209,
        24.9999999996528},
       {-3.3331065274968563e-10, -0.08810410601516962, -0.041294154299142946, 0.2600388126973482,
        0.5, 0.6477800103188829, 0.9276705118714869, 1.0881041060151693, 1.008241854348962,
        1.000000000333312},
       {-3.471985754455176e-10, -0.14227761328220367, -0.2736382782459259, -0.1887703388929367, 0.0,
        0.172332763671875, 0.7310585975646973, 2.857722520828247, 6.490242004394531, 25.0}},
      {"mish",
       [](const EagerTensor& z) { return mish(z); },
       {-3.471985966216896e-10, -0.1456474612756246, -0.2980997421668068, -0.22074377465173, 0.0,
        0.20800137234811503, 0.8650983882673103, 2.9865350049679575, 6.499970703939837, 25.0},
       {-3.33310652754411e-10, -0.09339311453232084, -0.06409781589225866, 0.28951067791351226, 0.6,
        0.7828272995511304, 1.0490362200997922, 1.0211069109294435, 1.0000539969448543, 1.0},
       {-3.471986032010932e-10, -0.14564746618270874, -0.2980997562408447, -0.22074376046657562,
        0.0, 0.20800139009952545, 0.8650983572006226, 2.98653507232666, 6.499970436096191, 25.0}},
      {"softplus",
       [](const EagerTensor& z) { return softplus(z, 2.0, 10.0); },
       {9.643749239819589e-23, 0.0012378425688652247, 0.02429367578687103, 0.15663084375911143,
        0.34657359027997264, 0.5187439752429428, 1.0634640055214863, 3.001237842568865, 6.5, 25.0},
       {1.9287498479639178e-22, 0.0024726231566347748, 0.04742587317756679, 0.2689414213699951, 0.5,
        0.6456563062257954, 0.8807970779778824, 0.9975273768433652, 1.0, 1.0},
       {9.643749466768692e-23, 0.0012378426035866141, 0.024293676018714905, 0.15663084387779236,
        0.3465735912322998, 0.5187439918518066, 1.0634640455245972, 3.0012378692626953, 6.5, 25.0}},
      {"softplus_default",
       [](const EagerTensor& z) { return softplus(z); },
       {1.3887943864867583e-11, 0.04858735157374206, 0.2014132779827524, 0.4740769841801067,
        0.6931471805599453, 0.8543552444685272, 1.3132616875182228, 3.048587351573742,
        6.501502310159754, 25.0},
       {1.3887943864771146e-11, 0.04742587317756679, 0.18242552380635632, 0.37754066879814546, 0.5,
        0.574442516811659, 0.7310585786300049, 0.9525741268224333, 0.998498817743263, 1.0},
       {1.3887943746404563e-11, 0.04858735203742981, 0.20141328871250153, 0.4740769863128662,
        0.6931471824645996, 0.8543552756309509, 1.31326162815094, 3.0485873222351074,
        6.501502513885498, 25.0}},
      {"hardtanh",
       [](const EagerTensor& z) { return hardtanh(z, -2.0, 1.0); },
       {-2.0, -2.0, -1.5, -0.5, 0.0, 0.3, 1.0, 1.0, 1.0, 1.0},
       {0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0},
       {-2.0, -2.0, -1.5, -0.5, 0.0, 0.30000001192092896, 1.0, 1.0, 1.0, 1.0}},
      {"hardsigmoid",
       [](const EagerTensor& z) { return hardsigmoid(z); },
       {0.0, 0.0, 0.25, 0.4166666666666667, 0.5, 0.5499999999999999, 0.6666666666666666, 1.0, 1.0,
        1.0},
       {0.0, 0.0, 0.1666666716337204, 0.1666666716337204, 0.1666666716337204, 0.1666666716337204,
        0.1666666716337204, 0.0, 0.0, 0.0},
       {0.0, 0.0, 0.25, 0.4166666567325592, 0.5, 0.550000011920929, 0.6666666865348816, 1.0, 1.0,
        1.0}},
      {"hardshrink",
       [](const EagerTensor& z) { return hardshrink(z, 1.0); },
       {-25.0, -3.0, -1.5, 0.0, 0.0, 0.0, 0.0, 3.0, 6.5, 25.0},
       {1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0},
       {-25.0, -3.0, -1.5, 0.0, 0.0, 0.0, 0.0, 3.0, 6.5, 25.0}},
      {"softshrink",
       [](const EagerTensor& z) { return softshrink(z, 1.0); },
       {-24.0, -2.0, -0.5, 0.0, 0.0, 0.0, 0.0, 2.0, 5.5, 24.0},
       {1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0},
       {-24.0, -2.0, -0.5, 0.0, 0.0, 0.0, 0.0, 2.0, 5.5, 24.0}},
      {"softsign",
       [](const EagerTensor& z) { return softsign(z); },
       {-0.9615384615384616, -0.75, -0.6, -0.3333333333333333, 0.0, 0.23076923076923075, 0.5, 0.75,
        0.8666666666666667, 0.9615384615384616},
       {0.001479289940828403, 0.0625, 0.16000000000000003, 0.4444444444444444, 1.0,
        0.5917159763313609, 0.25, 0.0625, 0.017777777777777767, 0.001479289940828403},
       {-0.9615384340286255, -0.75, -0.6000000238418579, -0.3333333432674408, 0.0,
        0.23076924681663513, 0.5, 0.75, 0.8666666746139526, 0.9615384340286255}},
      {"tanhshrink",
       [](const EagerTensor& z) { return tanhshrink(z); },
       {-24.0, -2.0049452463132695, -0.5948517463551336, -0.03788284273999026, 0.0,
        0.008687387548409087, 0.23840584404423515, 2.0049452463132695, 5.500004520648596, 24.0},
       {1.0, 0.9901339628345598, 0.8192933610763514, 0.2135522670340726, 0.0, 0.08486303817337082,
        0.5800256583859739, 0.9901339628345598, 0.9999909587232446, 1.0},
       {-24.0, -2.0049452781677246, -0.5948517322540283, -0.037882834672927856, 0.0,
        0.008687376976013184, 0.23840582370758057, 2.0049452781677246, 5.500004768371582, 24.0}},
      {"logsigmoid",
       [](const EagerTensor& z) { return logsigmoid(z); },
       {-25.000000000013888, -3.048587351573742, -1.7014132779827524, -0.9740769841801067,
        -0.6931471805599453, -0.5543552444685271, -0.31326168751822286, -0.04858735157374206,
        -0.0015023101597542838, -1.3887943864867583e-11},
       {0.9999999999861121, 0.9525741268224333, 0.8175744761936437, 0.6224593312018545, 0.5,
        0.425557483188341, 0.2689414213699951, 0.04742587317756679, 0.0015011822567369915,
        1.3887943864771146e-11},
       {-25.0, -3.0485873222351074, -1.7014132738113403, -0.9740769863128662, -0.6931471824645996,
        -0.5543552041053772, -0.3132616877555847, -0.04858735203742981, -0.0015023101586848497,
        -1.3887943746404563e-11}},
      {"threshold",
       [](const EagerTensor& z) { return threshold(z, 0.3, -7.0); },
       {-7.0, -7.0, -7.0, -7.0, -7.0, -7.0, 1.0, 3.0, 6.5, 25.0},
       {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0},
       {-7.0, -7.0, -7.0, -7.0, -7.0, -7.0, 1.0, 3.0, 6.5, 25.0}},
      {"rrelu",
       [](const EagerTensor& z) { return rrelu(z); },
       {-5.729166666666666, -0.6875, -0.34375, -0.11458333333333333, 0.0, 0.3, 1.0, 3.0, 6.5, 25.0},
       {0.22916666666666666, 0.22916666666666666, 0.22916666666666666, 0.22916666666666666,
        0.22916666666666666, 1.0, 1.0, 1.0, 1.0, 1.0},
       {-5.7291669845581055, -0.6875, -0.34375, -0.1145833358168602, 0.0, 0.30000001192092896, 1.0,
        3.0, 6.5, 25.0}},
  };
  return cases;
}

}  // namespace

TEST(CompositeActivation, ValuesAndGradientsMatchTorch) {
  for (const ActCase& c : activation_cases()) {
    SCOPED_TRACE(c.name);
    const EagerTensor x = eager(kX);
    const EagerTensor y = c.f(x);
    EXPECT_EQ(y.dtype(), f64);
    expect_values(y, c.values, 1e-13);
    // The x grid holds the kinks (0, bounds, thresholds): PyTorch's derivative
    // there is matched exactly. celu and hardsigmoid: torch rounds 1/alpha and
    // 1/6 through float32 in the backward, hence the looser tolerance. The
    // absolute tolerance covers expm1's derivative (y + 1) far left of 0.
    expect_values(sum_grad(c.f, x), c.grad, 1e-7, 1e-15);
    const EagerTensor y32 = c.f(eager(kX, f32));
    EXPECT_EQ(y32.dtype(), f32);
    expect_values(y32, c.f32, 2e-6, 1e-30);
  }
}

TEST(CompositeActivation, DerivativesAtKinksAreTorchs) {
  auto g = [](auto f, std::vector<double> x) { return host(sum_grad(f, eager(x))); };
  using V = std::vector<double>;
  EXPECT_EQ(g([](const EagerTensor& z) { return relu(z); }, {0.0}), V{0.0});
  EXPECT_EQ(g([](const EagerTensor& z) { return relu6(z); }, {0.0, 6.0, 5.9}), (V{0.0, 0.0, 1.0}));
  EXPECT_EQ(g([](const EagerTensor& z) { return hardtanh(z); }, {-1.0, 1.0, 0.99, -2.0}),
            (V{0.0, 0.0, 1.0, 0.0}));
  EXPECT_EQ(g([](const EagerTensor& z) { return hardsigmoid(z); }, {-3.0, 3.0, 2.9})[0], 0.0);
  EXPECT_EQ(g([](const EagerTensor& z) { return hardsigmoid(z); }, {3.0})[0], 0.0);
  EXPECT_DOUBLE_EQ(g([](const EagerTensor& z) { return hardsigmoid(z); }, {2.9})[0], 1.0 / 6);
  EXPECT_EQ(g([](const EagerTensor& z) { return hardshrink(z); }, {0.5, -0.5}), (V{0.0, 0.0}));
  EXPECT_EQ(g([](const EagerTensor& z) { return softshrink(z); }, {0.5, -0.5}), (V{0.0, 0.0}));
  EXPECT_EQ(g([](const EagerTensor& z) { return elu(z, 0.5); }, {0.0}), V{0.5});
  EXPECT_EQ(g([](const EagerTensor& z) { return leaky_relu(z); }, {0.0}), V{0.01});
  EXPECT_EQ(g([](const EagerTensor& z) { return logsigmoid(z); }, {0.0}), V{0.5});
  EXPECT_EQ(g([](const EagerTensor& z) { return threshold(z, 1.0, 5.0); }, {1.0}), V{0.0});
  // Large inputs: the unused overflowing branch must not leak NaN into gradients.
  EXPECT_EQ(g([](const EagerTensor& z) { return elu(z); }, {800.0}), V{1.0});
  EXPECT_EQ(g([](const EagerTensor& z) { return softplus(z); }, {800.0}), V{1.0});
  EXPECT_EQ(g([](const EagerTensor& z) { return mish(z); }, {800.0}), V{1.0});
}

TEST(CompositeActivation, NanPropagatesLikeTorch) {
  // torch: every activation maps NaN to NaN except softshrink (0); the
  // gradient at NaN of the piecewise-linear ones is the "x" branch's.
  const double nan = std::nan("");
  for (const ActCase& c : activation_cases()) {
    SCOPED_TRACE(c.name);
    expect_values(c.f(eager({nan})), {std::string(c.name) == "softshrink" ? 0.0 : nan});
  }
  using V = std::vector<double>;
  auto g = [&](auto f) { return host(sum_grad(f, eager({nan}))); };
  EXPECT_EQ(g([](const EagerTensor& z) { return relu(z); }), V{1.0});
  EXPECT_EQ(g([](const EagerTensor& z) { return threshold(z, 0.3, -7.0); }), V{1.0});
  EXPECT_EQ(g([](const EagerTensor& z) { return leaky_relu(z, 0.2); }), V{0.2});
  EXPECT_EQ(g([](const EagerTensor& z) { return hardtanh(z); }), V{1.0});
}

TEST(CompositeActivation, EagerGradientCheckAwayFromKinks) {
  const std::vector<double> pts = {-2.3, -0.7, 0.4, 1.9, 4.2};
  for (const ActCase& c : activation_cases()) {
    auto f = [&](std::span<const EagerTensor> z) { return c.f(z[0]); };
    expect_gradients_ok(f, {eager(pts)}, c.name);
  }
  auto pre = [](std::span<const EagerTensor> z) { return prelu(z[0], z[1]); };
  expect_gradients_ok(pre,
                      {eager({-1.0, 2.0, 0.5, -3.0, 4.0, -0.5}, f64, {3, 2}),
                       eager({0.25, -0.5, 2.0}, f64, {3, 1})},
                      "prelu");
}

TEST(CompositeActivation, SecondDerivativesOfSmoothActivations) {
  // Gradient checks of the gradient (reverse over reverse): twice differentiable.
  const std::vector<std::function<EagerTensor(const EagerTensor&)>> fs = {
      [](const EagerTensor& z) { return silu(z); },
      [](const EagerTensor& z) { return mish(z); },
      [](const EagerTensor& z) { return softplus(z, 1.5); },
      [](const EagerTensor& z) { return logsigmoid(z); },
      [](const EagerTensor& z) { return selu(z); },
      [](const EagerTensor& z) { return celu(z, 1.0); },
      [](const EagerTensor& z) { return softsign(z); },
      [](const EagerTensor& z) { return tanhshrink(z); },
  };
  for (std::size_t i = 0; i < fs.size(); ++i) {
    auto df = [&](std::span<const EagerTensor> z) { return sum_grad(fs[i], z[0]); };
    expect_gradients_ok(df, {eager({-2.3, -0.7, 0.4, 1.9})}, "second order");
  }
  // logsigmoid'' is -sigmoid(x) sigmoid(-x), also at the branch point 0.
  auto d1 = [](const EagerTensor& z) {
    return sum_grad([](const EagerTensor& u) { return logsigmoid(u); }, z);
  };
  expect_values(jvp_tangent(d1, eager({0.0, 1.0}), eager({1.0, 1.0})),
                {-0.25, -0.19661193324148185}, 1e-14);
}

TEST(CompositeActivation, ComplexSoftsignAndTanhshrink) {
  // torch: y = z / (1 + z.abs()) resp. z - torch.tanh(z); y.backward(ct); z.grad.
  const std::vector<c128_t> z = {{0.5, 1.0}, {-2.0, -0.25}, {0.0, 0.0}, {3.0, 4.0}};
  const std::vector<c128_t> ct = {{1.0, 0.0}, {0.5, -1.0}, {2.0, 1.0}, {0.0, -1.0}};
  const EagerTensor x = runtime()->tensor(complex_tensor(z));
  const EagerTensor c = runtime()->tensor(complex_tensor(ct));
  auto ss = [](const EagerTensor& u) { return softsign(u); };
  auto th = [](const EagerTensor& u) { return tanhshrink(u); };
  expect_complex(softsign(x).value(), {c128_t(0.2360679774997897, 0.4721359549995794),
                                       c128_t(-0.6632257548242529, -0.08290321935303162),
                                       c128_t(0.0, 0.0), c128_t(0.5, 0.6666666666666666)});
  expect_complex(vjp(ss, x, c).cotangent->value(),
                 {c128_t(0.42229123600033647, -0.0996894379984858),
                  c128_t(0.08396799798732732, -0.3418426825019685), c128_t(2.0, 1.0),
                  c128_t(0.06666666666666667, -0.07777777777777777)},
                 1e-12);
  expect_complex(tanhshrink(x).value(),
                 {c128_t(-0.5428307283443607, 0.19312258783691505),
                  c128_t(-1.0317854278164909, -0.2329905386153985), c128_t(0.0, 0.0),
                  c128_t(1.999290463932767, 3.995091741932504)},
                 1e-12);
  expect_complex(vjp(th, x, c).cotangent->value(),
                 {c128_t(0.43644476972023316, -1.6828731188212858),
                  c128_t(0.43563745125082287, -0.953618944389465), c128_t(0.0, 0.0),
                  c128_t(-0.00982348130724447, -1.0013954845786395)},
                 1e-12, 1e-15);
  const EagerTensor away =
      runtime()->tensor(complex_tensor({{0.5, 1.0}, {-2.0, -0.25}, {3.0, 4.0}}));
  expect_gradients_ok([&](std::span<const EagerTensor> u) { return softsign(u[0]); }, {away},
                      "softsign c128");
  expect_gradients_ok([&](std::span<const EagerTensor> u) { return tanhshrink(u[0]); }, {away},
                      "tanhshrink c128");
  EXPECT_EQ(softsign(runtime()->tensor(complex_tensor(z, c64))).dtype(), c64);
}

TEST(CompositeActivation, PreluBroadcastsWeight) {
  // torch.where(x > 0, x, w * x) with x (3, 2) and w (3, 1); column-major lists.
  const EagerTensor x =
      runtime()->variable(real_tensor({-1.0, 0.0, 4.0, 2.0, -3.0, -0.5}, f64, {3, 2}));
  const EagerTensor w = runtime()->variable(real_tensor({0.25, -0.5, 2.0}, f64, {3, 1}));
  const EagerTensor y = prelu(x, w);
  expect_values(y, {-0.25, -0.0, 4.0, 2.0, 1.5, -1.0});
  sum(y).backward();
  expect_values(x.grad(), {0.25, -0.5, 1.0, 1.0, -0.5, 2.0});  // weight at x == 0, like torch
  expect_values(w.grad(), {-1.0, -3.0, -0.5});
}

TEST(CompositeActivation, IntegerInputs) {
  const EagerTensor xi =
      runtime()->tensor(Tensor::from_col_major(Shape{3}, std::vector<std::int64_t>{-2, 0, 3}));
  EXPECT_EQ(relu(xi).dtype(), i64);
  expect_values(relu(xi), {0.0, 0.0, 3.0});
  EXPECT_EQ(silu(xi).dtype(), f64);
}

TEST(CompositeActivation, TracedMatchesEager) {
  Generator gen(3);
  const Tensor x = randn({4, 3}, f64, gen);
  const Tensor ct = randn({4, 3}, f64, gen);
  auto all = [](auto z) {
    const auto& v = z[0];
    return relu(v) + relu6(v * 4.0) + leaky_relu(v) + elu(v, 0.5) + celu(v, 2.0) + selu(v) +
           silu(v) + mish(v) + softplus(v, 2.0, 1.0) + hardtanh(v, -0.5, 0.7) +
           hardsigmoid(v * 3.0) + hardshrink(v) + softshrink(v, 0.3) + softsign(v) + tanhshrink(v) +
           logsigmoid(v) + threshold(v, 0.1, -1.0) + rrelu(v);
  };
  expect_traced_matches_eager(all, {x}, ct, 1e-12);
  const Tensor w = randn({4, 1}, f64, gen);
  expect_traced_matches_eager([](auto z) { return prelu(z[0], z[1]); }, {x, w}, ct, 1e-13);
}

TEST(CompositeActivation, Errors) {
  const EagerTensor x = eager({1.0, -1.0});
  const EagerTensor z = runtime()->tensor(complex_tensor({{1.0, 1.0}}));
  const EagerTensor b =
      runtime()->tensor(Tensor::from_col_major(Shape{1}, std::vector<std::int64_t>{1}));
  EXPECT_TF_ERROR(celu(x, 0.0), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(hardtanh(x, 1.0, -1.0), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(softshrink(x, -0.1), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(softplus(x, 0.0), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(rrelu(x, 0.5, 0.1), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(relu(z), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(elu(z), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(logsigmoid(z), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(prelu(x, z), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(relu(runtime()->tensor(full({2}, true, DType::Bool))), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(relu(EagerTensor()), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(relu(TracedTensor()), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(relu(placeholder(c128, {2})), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(celu(placeholder(f64, {2}), 0.0), ErrorKind::InvalidArgument);
  (void)b;
}
