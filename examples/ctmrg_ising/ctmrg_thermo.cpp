#include "ctmrg_thermo.hpp"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "onsager.hpp"

namespace tf = tenferro;

namespace ctmrg {

namespace {

tf::FixedPointOptions fixed_point_options(const SolveOptions& options) {
  tf::FixedPointOptions o;
  o.tol = options.tol;
  o.max_iter = options.max_iter;
  return o;
}

// The CTMRG step as fixed_point's map: the state {C, T}, the parameter A.
template <tf::AdTensor T>
auto step_map(const CtmrgOptions& options) {
  return [options](std::span<const T> env, std::span<const T> params) {
    return ctmrg_step(env, params[0], options);
  };
}

}  // namespace

bool ordered_phase(double beta) {
  return beta * ising::critical_temperature() > 1.0;
}

EagerCtmrg::EagerCtmrg(tf::EagerRuntimePtr runtime, SolveOptions options)
    : runtime_(std::move(runtime)), options_(std::move(options)) {}

Thermodynamics EagerCtmrg::operator()(double beta, Derivatives derivatives,
                                      bool second_order) const {
  const bool ordered = ordered_phase(beta);
  // The environment's plain iteration: nothing recorded, one environment alive.
  std::vector<tf::EagerTensor> env;
  std::int64_t iterations = 0;
  double residual = 0;
  {
    const tf::NoGradGuard no_grad;
    const tf::EagerTensor b = runtime_->tensor(tf::Tensor::scalar(beta));
    const tf::EagerTensor a = site_tensors(b).a;
    env = initial_environment(b, options_.ctmrg, ordered);
    for (;;) {
      std::vector<tf::EagerTensor> next = ctmrg_step<tf::EagerTensor>(env, a, options_.ctmrg);
      residual = update_size<tf::EagerTensor>(next, env).item<double>();
      env = std::move(next);
      ++iterations;
      if (residual <= options_.tol) break;
      if (iterations >= options_.max_iter) {
        throw tf::Error(tf::ErrorKind::NoConvergence, "ctmrg",
                        "ctmrg: no convergence after " + std::to_string(iterations) +
                            " iterations (last update " + std::to_string(residual) + ")");
      }
    }
  }

  double log_z = 0, magnetisation = 0;
  const auto f = [&](const tf::EagerTensor& b) {
    const SiteTensors<tf::EagerTensor> site = site_tensors(b);
    std::vector<tf::EagerTensor> x;
    if (derivatives == Derivatives::Implicit) {
      // Starts at the solution: one step confirms it; the derivatives are
      // the implicit ones.
      x = tf::fixed_point(step_map<tf::EagerTensor>(options_.ctmrg), env, {site.a},
                          fixed_point_options(options_))
              .value;
    } else {
      x = initial_environment(b, options_.ctmrg, ordered);
      for (std::int64_t i = 0; i < iterations; ++i)
        x = ctmrg_step<tf::EagerTensor>(x, site.a, options_.ctmrg);
    }
    const tf::EagerTensor y = log_z_per_site<tf::EagerTensor>(x, site.a);
    log_z = y.item<double>();
    magnetisation = ctmrg::magnetisation<tf::EagerTensor>(x, site).item<double>();
    return y;
  };
  const tf::EagerTensor b = runtime_->variable(tf::Tensor::scalar(beta));
  double d1 = 0, d2 = 0;
  if (second_order) {
    const auto df = [&](const tf::EagerTensor& x) { return tf::grad(f, x); };
    const tf::JvpResult r = tf::jvp(df, b, runtime_->tensor(tf::Tensor::scalar(1.0)));
    d1 = r.output.item<double>();
    d2 = r.tangent ? r.tangent->item<double>() : 0.0;
  } else {
    d1 = tf::grad(f, b).item<double>();
  }
  return {ising::thermodynamics(beta, log_z, d1, d2), magnetisation, iterations, residual};
}

TracedCtmrg::TracedCtmrg(tf::RuntimePtr runtime, SolveOptions options)
    : runtime_(std::move(runtime)) {
  using TT = tf::TracedTensor;
  const TT b = tf::placeholder(tf::f64, {}, "beta");
  const SiteTensors<TT> site = site_tensors(b);
  // The initial environment: ordered below Tc, free above (a 0/1 blend, so
  // one program serves both phases).
  const TT ordered =
      tf::cast(tf::gt(b, tf::scalar_like(b, 1.0 / ising::critical_temperature())), tf::f64);
  const std::vector<TT> up = initial_environment(b, options.ctmrg, true);
  const std::vector<TT> free = initial_environment(b, options.ctmrg, false);
  std::vector<TT> init;
  for (std::size_t i = 0; i < 2; ++i) init.push_back(up[i] * ordered + free[i] * (1.0 - ordered));
  init.push_back(tf::scalar_like(b, 1.0));     // the last update's size
  init.push_back(tf::cast(b * 0.0, tf::i64));  // iterations
  const double tol = options.tol;
  const CtmrgOptions ctmrg = options.ctmrg;
  const TT& a = site.a;
  tf::WhileOptions loop_options;
  loop_options.max_iterations = options.max_iter;
  const std::vector<TT> loop = tf::while_loop(
      [tol](std::span<const TT> c) { return tf::gt(c[2], tf::scalar_like(c[2], tol)); },
      [&](std::span<const TT> c) {
        const std::vector<TT> env{c[0], c[1]};
        std::vector<TT> next = ctmrg_step<TT>(env, a, ctmrg);
        next.push_back(update_size<TT>(next, env));
        next.push_back(c[3] + tf::scalar_like(c[3], std::int64_t{1}));
        return next;
      },
      init, loop_options);
  // The fixed point at the converged environment: its value is one more
  // step, its derivatives the implicit ones (the loop's carries get none).
  const tf::FixedPointResult<TT> fp =
      tf::fixed_point(step_map<TT>(ctmrg), {loop[0], loop[1]}, {a}, fixed_point_options(options));
  const TT log_z = log_z_per_site<TT>(fp.value, a);
  const TT m = magnetisation<TT>(fp.value, site);
  const TT dlog_z = tf::grad(log_z, b);
  const TT d2log_z = tf::hvp(log_z, b, tf::ones_like(b));
  const std::vector<TT> outputs{log_z, m, dlog_z, d2log_z, loop[3], loop[2]}, inputs{b};
  program_ = tf::compile(outputs, inputs);
  const std::vector<tf::Tensor> example{tf::Tensor::scalar(0.5)};
  prepared_ = tf::prepare(*runtime_, program_, tf::InputSignature::of(example));
}

Thermodynamics TracedCtmrg::operator()(double beta, tf::RunStats* stats) const {
  const std::vector<tf::Tensor> in{tf::Tensor::scalar(beta)};
  const std::vector<tf::Tensor> out = tf::run(*runtime_, prepared_, in, stats);
  return {ising::thermodynamics(beta, out[0].item<double>(), out[2].item<double>(),
                                out[3].item<double>()),
          out[1].item<double>(), out[4].item<std::int64_t>(), out[5].item<double>()};
}

}  // namespace ctmrg
