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
#include <functional>
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

// Untracked eager inputs of 2^15 elements and more run each activation as one
// fused pass (a cached traced program): the values equal the op-by-op
// composite's exactly, in f64 and f32, on a [n] and a [m, k] input; the
// program is compiled once per activation, dtype and rank; tracked inputs
// stay op by op and get their gradients.
TEST(CompositeActivation, LargeUntrackedInputsRunFusedWithTheSameValues) {
  const auto& rt = runtime();
  const std::int64_t n = (std::int64_t{1} << 15) + 8;
  std::vector<double> values(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    values[static_cast<std::size_t>(i)] = kX[static_cast<std::size_t>(i % 10)] * (1.0 + 1e-3 * i);
  const auto cache = ExtensionCacheSelector::named("tenferro.composites.v1", "programs");
  rt->runtime()->extension_caches().clear(cache);
  std::int64_t compared = 0;
  for (const ActCase& c : activation_cases()) {
    for (const DType dt : {f64, f32}) {
      SCOPED_TRACE(std::string(c.name) + " " + std::string(name(dt)));
      for (const Shape& shape : {Shape{n}, Shape{8, n / 8}}) {
        const Tensor x = real_tensor(values, dt).reshape(shape.span()).contiguous();
        const Tensor fused = c.f(rt->tensor(x)).value();
        // Column slices of fewer than 2^15 elements: op by op.
        const Tensor flat = fused.reshape({fused.numel()});
        const Tensor xflat = x.reshape({x.numel()});
        for (std::int64_t at = 0; at < n; at += 4000) {
          const std::int64_t len = std::min<std::int64_t>(4000, n - at);
          const Tensor piece = xflat.slice(0, at, at + len, 1);
          const Tensor want = c.f(rt->tensor(piece)).value();
          EXPECT_EQ(max_abs_diff(flat.slice(0, at, at + len, 1), want), 0.0) << at;
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, static_cast<std::int64_t>(activation_cases().size()) * 2 * 2 * 9);
  // One program per activation, dtype and rank (the second shape of a rank
  // reuses it): a rerun adds none.
  const std::size_t entries = rt->runtime()->extension_caches().stats(cache).entries;
  EXPECT_EQ(entries, activation_cases().size() * 2 * 2);
  (void)silu(rt->tensor(real_tensor(values)));
  EXPECT_EQ(rt->runtime()->extension_caches().stats(cache).entries, entries);
  // A tracked input records the primitives: d sum(silu(x)) / dx = s (1 + x (1 - s)).
  const EagerTensor v = rt->variable(real_tensor(values));
  sum(silu(v)).backward();
  const auto g = v.grad().value().to_vector<double>();
  for (std::size_t i = 0; i < values.size(); i += 997) {
    const double x = values[i], sg = 1 / (1 + std::exp(-x));
    EXPECT_NEAR(g[i], sg * (1 + x * (1 - sg)), 1e-12) << i;
  }
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

// ---- math helpers ----------------------------------------------------------------------

TEST(CompositeMath, FloatPower) {
  const EagerTensor a = eager({2.0, -1.5, 0.5, 3.0}, f32);
  const EagerTensor b = eager({3.0, 2.0, -0.5, 0.25}, f32);
  const EagerTensor y = float_power(a, b);
  EXPECT_EQ(y.dtype(), f64);
  expect_values(y, {8.0, 2.25, 1.4142135623730951, 1.3160740129524924});
  const auto ai =
      runtime()->tensor(Tensor::from_col_major(Shape{2}, std::vector<std::int64_t>{2, 3}));
  const auto bi =
      runtime()->tensor(Tensor::from_col_major(Shape{2}, std::vector<std::int64_t>{3, -1}));
  expect_values(float_power(ai, bi), {8.0, 0.3333333333333333});
  const EagerTensor zc = runtime()->tensor(complex_tensor({{1.0, 1.0}, {-0.5, 2.0}}, c64));
  const EagerTensor yc = float_power(zc, eager({2.0, 0.5}, f32));
  EXPECT_EQ(yc.dtype(), c128);
  expect_complex(
      yc.value(),
      {c128_t(1.2246467991473532e-16, 2.0), c128_t(0.8836155308755131, 1.1317139242778695)}, 1e-14,
      1e-15);
  const EagerTensor ys = float_power(eager({2.0, 0.5}, f32), 1.5);
  EXPECT_EQ(ys.dtype(), f64);
  expect_values(ys, {2.8284271247461903, 0.3535533905932738});
  expect_gradients_ok([](std::span<const EagerTensor> z) { return float_power(z[0], z[1]); },
                      {eager({0.7, 1.3}), eager({1.5, -0.5})}, "float_power");
}

TEST(CompositeMath, AngleConversionsAndPositive) {
  const std::vector<double> d = {-180.0, 0.0, 45.0, 90.5};
  expect_values(deg2rad(eager(d)),
                {-3.141592653589793, 0.0, 0.7853981633974483, 1.5795229730548683});
  expect_values(deg2rad(eager(d, f32)),
                {-3.1415927410125732, 0.0, 0.7853981852531433, 1.579522967338562}, 1e-7);
  expect_values(rad2deg(eager(d)),
                {-10313.240312354817, 0.0, 2578.3100780887044, 5185.26804593395});
  expect_values(rad2deg(eager(d, f32)), {-10313.240234375, 0.0, 2578.31005859375, 5185.26806640625},
                1e-7);
  expect_values(sum_grad([](const EagerTensor& z) { return deg2rad(z); }, eager({1.0})),
                {0.017453292519943295});
  const EagerTensor x = eager({1.0, -2.0});
  expect_values(positive(x), {1.0, -2.0});
  expect_values(sum_grad([](const EagerTensor& z) { return positive(z); }, x), {1.0, 1.0});
}

TEST(CompositeMath, FmaxFminIgnoreNanAndTiesGoToFirst) {
  // torch.fmax/fmin values and gradients of sum() (index 4 is a tie, 3 both NaN).
  const double nan = std::nan("");
  const std::vector<double> a = {1.0, nan, 3.0, nan, 2.0, -1.0},
                            b = {2.0, 1.0, nan, nan, 2.0, -4.0};
  struct R {
    bool is_max;
    std::vector<double> y, ga, gb;
  };
  for (const R& r :
       {R{true, {2.0, 1.0, 3.0, nan, 2.0, -1.0}, {0, 0, 1, 1, 1, 1}, {1, 1, 0, 0, 0, 0}},
        R{false, {1.0, 1.0, 3.0, nan, 2.0, -4.0}, {1, 0, 1, 1, 1, 0}, {0, 1, 0, 0, 0, 1}}}) {
    auto f = [&](std::span<const EagerTensor> z) {
      return r.is_max ? fmax(z[0], z[1]) : fmin(z[0], z[1]);
    };
    const std::vector<EagerTensor> in = {eager(a), eager(b)};
    expect_values(f(in), r.y);
    const auto g = grad_many([&](std::span<const EagerTensor> z) { return sum(f(z)); }, in);
    expect_values(*g[0], r.ga);
    expect_values(*g[1], r.gb);
  }
}

TEST(CompositeMath, ClampWithTensorBounds) {
  // torch.clamp_min/clamp_max with tensor bounds; NaN in either propagates.
  const double nan = std::nan("");
  const EagerTensor x = eager({1.0, nan, 3.0, 2.0, -1.0}), m = eager({2.0, 1.0, nan, 2.0, -4.0});
  expect_values(clamp_min(x, m), {2.0, nan, nan, 2.0, -1.0});
  expect_values(clamp_max(x, m), {1.0, nan, nan, 2.0, -4.0});
  // Gradients away from NaN, with a tie (index 1) going to x, like torch.
  const std::vector<EagerTensor> in = {eager({1.0, 2.0, -1.0}), eager({2.0, 2.0, -4.0})};
  auto gmin =
      grad_many([](std::span<const EagerTensor> z) { return sum(clamp_min(z[0], z[1])); }, in);
  expect_values(*gmin[0], {0.0, 1.0, 1.0});
  expect_values(*gmin[1], {1.0, 0.0, 0.0});
  auto gmax =
      grad_many([](std::span<const EagerTensor> z) { return sum(clamp_max(z[0], z[1])); }, in);
  expect_values(*gmax[0], {1.0, 1.0, 0.0});
  expect_values(*gmax[1], {0.0, 0.0, 1.0});
  // Broadcast scalar bound.
  expect_values(clamp_min(eager({-1.0, 0.5}), eager({0.0}, f64, Shape{})), {0.0, 0.5});
}

TEST(CompositeMath, Ldexp) {
  const EagerTensor a = eager({1.5, -2.0, 3.0, 0.75});
  expect_values(ldexp(a, eager({2.0, -1.0, 0.5, 10.0})), {6.0, -1.0, 4.242640687119286, 768.0});
  const auto bi =
      runtime()->tensor(Tensor::from_col_major(Shape{4}, std::vector<std::int64_t>{2, -1, 0, 10}));
  const EagerTensor yi = ldexp(a, bi);
  EXPECT_EQ(yi.dtype(), f64);
  expect_values(yi, {6.0, -1.0, 3.0, 768.0});
  const EagerTensor bc =
      runtime()->tensor(complex_tensor({{2.0, 1.0}, {-1.0, 0.0}, {0.0, 0.5}, {1.0, 0.0}}));
  expect_complex(ldexp(a, bc).value(),
                 {c128_t(4.615433408183833, 3.8337676578818085), c128_t(-1.0, 0.0),
                  c128_t(2.8216263140497313, 1.0190313753080056), c128_t(1.5, 0.0)},
                 1e-14, 1e-15);
  EXPECT_EQ(ldexp(eager({1.0}, f32), eager({1.0}, f32)).dtype(), f32);
  expect_gradients_ok([](std::span<const EagerTensor> z) { return ldexp(z[0], z[1]); },
                      {eager({0.7, -1.3}), eager({1.5, -0.5})}, "ldexp");
}

TEST(CompositeMath, ComplexAndPolar) {
  const EagerTensor re = eager({1.0, -2.0, 0.5}), im = eager({0.5, 3.0, -1.0});
  const EagerTensor z = complex(re, im);
  EXPECT_EQ(z.dtype(), c128);
  expect_complex(z.value(), {c128_t(1.0, 0.5), c128_t(-2.0, 3.0), c128_t(0.5, -1.0)});
  EXPECT_EQ(complex(eager({1.0}, f32), eager({2.0}, f32)).dtype(), c64);
  // Cotangents of re and im are the real and imaginary parts of the output's.
  const EagerTensor ct = runtime()->tensor(complex_tensor({{1.0, 2.0}, {-3.0, 0.5}, {0.0, -1.0}}));
  const auto g = grad_many(
      [&](std::span<const EagerTensor> u) { return sum(real(conj(ct) * complex(u[0], u[1]))); },
      std::vector<EagerTensor>{re, im});
  expect_values(*g[0], {1.0, -3.0, 0.0});
  expect_values(*g[1], {2.0, 0.5, -1.0});
  expect_complex(polar(eager({2.0, 0.5, 1.0}), eager({0.3, -2.0, 3.0})).value(),
                 {c128_t(1.910672978251212, 0.5910404133226791),
                  c128_t(-0.2080734182735712, -0.45464871341284085),
                  c128_t(-0.9899924966004454, 0.1411200080598672)},
                 1e-14);
  expect_gradients_ok([](std::span<const EagerTensor> u) { return polar(u[0], u[1]); },
                      {eager({2.0, 0.5}), eager({0.3, -2.0})}, "polar");
}

TEST(CompositeMath, ComplexKeepsNonFiniteParts) {
  // re + im * i would give NaN real parts where im is infinite (0 * inf).
  const double inf = INFINITY, nan = std::nan("");
  const EagerTensor re = eager({1.0, -inf, nan, 2.0}), im = eager({inf, 0.5, -inf, nan});
  const Tensor z = complex(re, im).value();
  const auto v = z.to_vector<c128_t>();
  EXPECT_EQ(v[0], c128_t(1.0, inf));
  EXPECT_EQ(v[1], c128_t(-inf, 0.5));
  EXPECT_TRUE(std::isnan(v[2].real()));
  EXPECT_EQ(v[2].imag(), -inf);
  EXPECT_EQ(v[3].real(), 2.0);
  EXPECT_TRUE(std::isnan(v[3].imag()));
  // Traced: the same primitive.
  const TracedTensor tre = placeholder(f64, {4}), tim = placeholder(f64, {4});
  const TracedTensor tz = complex(tre, tim);
  const Program prog =
      compile(std::span<const TracedTensor>(&tz, 1), std::vector<TracedTensor>{tre, tim});
  const Tensor ins[2] = {re.value(), im.value()};
  const auto out = run_compiled(*runtime()->runtime(), prog, std::span<const Tensor>(ins));
  const auto tv = out[0].to_vector<c128_t>();
  EXPECT_EQ(tv[0], v[0]);
  EXPECT_EQ(tv[1], v[1]);
  EXPECT_EQ(tv[2].imag(), -inf);
  // Broadcasting parts, and the gradient checker on complex(re, im).
  EXPECT_EQ(complex(eager({1.0, 2.0}, f64, Shape{2, 1}), eager({3.0, 4.0, 5.0}, f64, Shape{1, 3}))
                .value()
                .shape(),
            Shape({2, 3}));
  expect_gradients_ok([](std::span<const EagerTensor> u) { return complex(u[0], u[1]); },
                      {eager({2.0, -0.5, 1.5}), eager({0.3, -2.0, 0.0})}, "complex");
  expect_gradients_ok(
      [](std::span<const EagerTensor> u) { return complex(u[0], u[1]); },
      {eager({2.0, -0.5}, f64, Shape{2, 1}), eager({0.3, -2.0, 1.0}, f64, Shape{1, 3})},
      "complex broadcast");
  Generator gen(3);
  const Tensor a = randn({3, 2}, f64, gen), b = randn({3, 2}, f64, gen),
               ct = randn({3, 2}, f64, gen);
  expect_traced_matches_eager([](auto u) { return abs(complex(u[0], u[1]) * polar(u[1], u[0])); },
                              {a, b}, ct, 1e-12);
}

TEST(CompositeMath, NanToNum) {
  const double nan = std::nan(""), inf = INFINITY;
  const std::vector<double> n = {nan, inf, -inf, 1.5, -0.0};
  expect_values(nan_to_num(eager(n)),
                {0.0, 1.7976931348623157e+308, -1.7976931348623157e+308, 1.5, -0.0});
  expect_values(nan_to_num(eager(n, f32)),
                {0.0, 3.4028234663852886e+38, -3.4028234663852886e+38, 1.5, -0.0});
  expect_values(nan_to_num(eager(n), 1.0, 2.0, -3.0), {1.0, 2.0, -3.0, 1.5, -0.0});
  expect_values(sum_grad([](const EagerTensor& z) { return nan_to_num(z); }, eager(n)),
                {0.0, 0.0, 0.0, 1.0, 1.0});
  const EagerTensor zc = runtime()->tensor(complex_tensor({{nan, inf}, {-inf, 2.0}}));
  expect_complex(nan_to_num(zc, 0.5, 7.0).value(),
                 {c128_t(0.5, 7.0), c128_t(-1.7976931348623157e+308, 2.0)});
  const auto xi =
      runtime()->tensor(Tensor::from_col_major(Shape{2}, std::vector<std::int64_t>{4, -1}));
  EXPECT_EQ(nan_to_num(xi).dtype(), i64);
}

TEST(CompositeMath, LogitWithEps) {
  // torch.logit(x, eps=0.1) and the gradient of its sum (torch 1.13): the
  // derivative is kept at the bound x = 1 - eps and zero outside.
  const EagerTensor x = eager({0.05, 0.3, 0.5, 0.9, 0.97});
  const auto f = [](const EagerTensor& z) { return logit(z, 0.1); };
  expect_values(
      f(x), {-2.197224577336219, -0.8472978603872036, 0.0, 2.1972245773362196, 2.1972245773362196});
  expect_values(sum_grad(f, x), {0.0, 4.761904761904762, 4.0, 11.111111111111112, 0.0});
  EXPECT_TF_ERROR(logit(x, 0.6), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(logit(x, -0.1), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(logit(convert(eager({0.5, 0.25}), DType::C128), 0.1), ErrorKind::DTypeMismatch);
}

TEST(CompositeMath, RoundWithDecimals) {
  // torch.round(x, decimals=d): half to even at the scaled value.
  const std::vector<double> x = {1.2345, 2.5, -0.125, 1234.5, 0.5, 0.135, -2.675};
  struct R {
    std::int64_t d;
    std::vector<double> f64v, f32v;
  };
  for (const R& r :
       {R{2,
          {1.23, 2.5, -0.12, 1234.5, 0.5, 0.14, -2.68},
          {1.2300000190734863, 2.5, -0.11999999731779099, 1234.5, 0.5, 0.14000000059604645,
           -2.680000066757202}},
        R{1,
          {1.2, 2.5, -0.1, 1234.5, 0.5, 0.1, -2.7},
          {1.2000000476837158, 2.5, -0.10000000149011612, 1234.5, 0.5, 0.10000000149011612,
           -2.700000047683716}},
        R{-1, {0.0, 0.0, -0.0, 1230.0, 0.0, 0.0, -0.0}, {0.0, 0.0, -0.0, 1230.0, 0.0, 0.0, -0.0}},
        R{-2, {0.0, 0.0, -0.0, 1200.0, 0.0, 0.0, -0.0}, {0.0, 0.0, -0.0, 1200.0, 0.0, 0.0, -0.0}},
        R{0, {1.0, 2.0, -0.0, 1234.0, 0.0, 0.0, -3.0}, {1.0, 2.0, -0.0, 1234.0, 0.0, 0.0, -3.0}}}) {
    SCOPED_TRACE(r.d);
    expect_values(round(eager(x), r.d), r.f64v, 0.0);
    expect_values(round(eager(x, f32), r.d), r.f32v, 0.0);
  }
  // Piecewise constant: zero derivative, reported as "no dependence" like round().
  EXPECT_FALSE(
      try_grad([](const EagerTensor& z) { return sum(round(z, 2)); }, eager({1.0})).has_value());
}

// ---- reductions ------------------------------------------------------------------------

TEST(CompositeReduce, NansumNanmean) {
  const double nan = std::nan("");
  // torch M = [[1, nan, 3], [nan, nan, -2]], listed column-major.
  const EagerTensor m = eager({1.0, nan, nan, nan, 3.0, -2.0}, f64, {2, 3});
  expect_values(nansum(m), {2.0});
  expect_values(nansum(m), {2.0});
  EXPECT_EQ(nansum(m, {}).shape(), m.shape());  // like sum(x, {}): reduces nothing
  expect_values(nansum(m, {0}), {1.0, 0.0, 1.0});
  expect_values(nansum(m, {1}), {4.0, -2.0});
  EXPECT_EQ(nansum(m, {1}, true).shape(), (Shape{2, 1}));
  expect_values(nanmean(m), {0.6666666666666666});
  expect_values(nanmean(m, {0}), {1.0, nan, 0.5});
  expect_values(nanmean(m, {-1}), {2.0, -2.0});
  EXPECT_EQ(nanmean(m, {1}, true).shape(), (Shape{2, 1}));
  expect_values(nanmean(eager({1.0, nan, 2.0}, f32)), {1.5});
  // torch gradients of nansum(M, 0).sum() / nanmean(M, 0).sum() (columns with a number).
  expect_values(sum_grad([](const EagerTensor& z) { return nansum(z, {0}); }, m),
                {1.0, 0.0, 0.0, 0.0, 1.0, 1.0});
  const auto gm = host(sum_grad([](const EagerTensor& z) { return nanmean(z, {0}); }, m));
  EXPECT_EQ(gm[0], 1.0);
  EXPECT_EQ(gm[1], 0.0);
  EXPECT_EQ(gm[4], 0.5);
  EXPECT_EQ(gm[5], 0.5);
  expect_gradients_ok([](std::span<const EagerTensor> z) { return nanmean(z[0], {1}); },
                      {eager({1.0, 2.0, 3.0, 4.0, -2.0, 0.5}, f64, {2, 3})}, "nanmean");
  // Integers: nansum is sum.
  const auto xi =
      runtime()->tensor(Tensor::from_col_major(Shape{3}, std::vector<std::int64_t>{4, -1, 2}));
  expect_values(nansum(xi), {5.0});
}

TEST(CompositeReduce, AmaxAminSplitTies) {
  // torch T = [[1, 5, 5], [2, -1, 5]], column-major.
  const EagerTensor t = eager({1.0, 2.0, 5.0, -1.0, 5.0, 5.0}, f64, {2, 3});
  expect_values(amax(t), {5.0});
  expect_values(amax(t, {}), {1.0, 2.0, 5.0, -1.0, 5.0, 5.0});  // reduces nothing
  expect_values(amax(t, {0}), {2.0, 5.0, 5.0});
  expect_values(amax(t, {1}), {5.0, 5.0});
  expect_values(amin(t), {-1.0});
  expect_values(amin(t, {0}), {1.0, -1.0, 5.0});
  expect_values(amin(t, {1}), {1.0, -1.0});
  EXPECT_EQ(amax(t, {0}, true).shape(), (Shape{1, 3}));
  expect_values(sum_grad([](const EagerTensor& z) { return amax(z, {1}); }, t),
                {0.0, 0.0, 0.5, 0.0, 0.5, 1.0});
  expect_values(sum_grad([](const EagerTensor& z) { return amax(z); }, t),
                {0.0, 0.0, 1.0 / 3, 0.0, 1.0 / 3, 1.0 / 3}, 1e-15);
  expect_values(sum_grad([](const EagerTensor& z) { return amin(z, {1}); }, t),
                {1.0, 0.0, 0.0, 1.0, 0.0, 0.0});
}

TEST(CompositeReduce, TracedStdDev) {
  Generator gen(5);
  const Tensor x = randn({3, 4}, f64, gen);
  const Tensor ct = randn({4}, f64, gen);
  expect_traced_matches_eager(
      [](auto z) {
        using T = std::decay_t<decltype(z[0])>;
        if constexpr (std::is_same_v<T, TracedTensor>) {
          return std_dev(z[0], Axes{0}, 1.0);
        } else {
          return std_dev(z[0], std::vector<std::int64_t>{0}, 1.0);
        }
      },
      {x}, ct, 1e-13);
}

TEST(CompositeMath, TracedMatchesEager) {
  Generator gen(9);
  const Tensor a = randn({3, 2}, f64, gen), b = randn({3, 2}, f64, gen),
               ct = randn({3, 2}, f64, gen);
  auto math = [](auto z) {
    const auto &u = z[0], &v = z[1];
    return float_power(abs(u) + 0.5, v) + deg2rad(u) + rad2deg(v) + positive(u) + fmax(u, v) +
           fmin(u, v) + clamp_min(u, v) + clamp_max(u, v) + ldexp(u, v) +
           real(complex(u, v) * complex(v, u)) + imag(polar(u, v)) + nan_to_num(u / v) +
           round(u, 1);
  };
  expect_traced_matches_eager(math, {a, b}, ct, 1e-12);
  const Tensor ct2 = randn({3}, f64, gen);
  auto red = [](auto z) {
    return nansum(z[0], {1}) + nanmean(z[0], {1}) + amax(z[0], {1}) + amin(z[0], {1}) +
           nansum(z[0]) + nanmean(z[0]) + amax(z[0]) + amin(z[0]);
  };
  expect_traced_matches_eager(red, {a}, ct2, 1e-12);
}

TEST(CompositeMath, Errors) {
  const EagerTensor x = eager({1.0, 2.0});
  const EagerTensor z = runtime()->tensor(complex_tensor({{1.0, 1.0}, {0.0, 2.0}}));
  const EagerTensor b = runtime()->tensor(full({2}, true, DType::Bool));
  const auto xi =
      runtime()->tensor(Tensor::from_col_major(Shape{2}, std::vector<std::int64_t>{1, 2}));
  EXPECT_TF_ERROR(complex(x, eager({1.0, 2.0}, f32)), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(complex(z, z), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(complex(xi, xi), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(polar(x, eager({1.0, 2.0}, f32)), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(fmax(x, z), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(clamp_min(z, x), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(deg2rad(z), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(positive(b), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(round(xi, 1), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(round(z, 1), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(nansum(z), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(nanmean(xi), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(amax(z), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(nansum(x, {3}), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(float_power(EagerTensor(), x), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(ldexp(x, EagerTensor()), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(complex(placeholder(f64, {2}), placeholder(f32, {2})), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(nanmean(placeholder(i64, {2})), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(std_dev(TracedTensor(), Axes{0}), ErrorKind::InvalidArgument);
}

TEST(CompositeErrors, TraceReportsItsOwnNameForItsDiagonalsErrors) {
  // An out-of-range axis is found by diagonal() inside trace(): the error is
  // about trace (with diagonal's as the cause), in both AD tiers.
  const EagerTensor x = ctest::runtime()->tensor(eye(3));
  for (const std::function<void()>& call :
       {std::function<void()>([&] { (void)trace(x, 0, 0, 5); }), std::function<void()>([] {
          (void)trace(placeholder(f64, {3, 3}), 0, 0, 5);
        })}) {
    try {
      call();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::AxisOutOfBounds);
      EXPECT_EQ(e.op(), "trace");
    }
  }
}
