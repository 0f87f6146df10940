#include "thermo.hpp"

#include <utility>
#include <vector>

namespace tf = tenferro;

namespace ising {

Thermodynamics thermodynamics(double beta, double log_z, double dlog_z, double d2log_z) {
  Thermodynamics t;
  t.beta = beta;
  t.log_z = log_z;
  t.free_energy = -log_z / beta;
  t.energy = -dlog_z;
  t.specific_heat = beta * beta * d2log_z;
  return t;
}

EagerTrg::EagerTrg(tf::EagerRuntimePtr runtime, TrgOptions options)
    : runtime_(std::move(runtime)), options_(std::move(options)) {
  bond_dimensions(options_);  // validates chi and steps
}

Thermodynamics EagerTrg::operator()(double beta, const StepCallback& on_step) const {
  tf::EagerTensor log_z;  // the value of the innermost evaluation
  const auto f = [&](const tf::EagerTensor& b) {
    tf::EagerTensor y = log_z_per_site(b, options_, on_step);
    log_z = y.detach();
    return y;
  };
  const auto df = [&](const tf::EagerTensor& b) { return tf::grad(f, b); };
  const tf::EagerTensor b = runtime_->variable(tf::Tensor::scalar(beta));
  const tf::JvpResult r = tf::jvp(df, b, runtime_->tensor(tf::Tensor::scalar(1.0)));
  return thermodynamics(beta, log_z.item<double>(), r.output.item<double>(),
                        r.tangent ? r.tangent->item<double>() : 0.0);
}

TracedTrg::TracedTrg(tf::RuntimePtr runtime, TrgOptions options, const StepCallback& on_step)
    : runtime_(std::move(runtime)) {
  const tf::TracedTensor b = tf::placeholder(tf::f64, {}, "beta");
  const tf::TracedTensor log_z = log_z_per_site(b, options, on_step);
  const tf::TracedTensor dlog_z = tf::grad(log_z, b);
  const tf::TracedTensor d2log_z = tf::hvp(log_z, b, tf::ones_like(b));
  const std::vector<tf::TracedTensor> outputs{log_z, dlog_z, d2log_z}, inputs{b};
  program_ = tf::compile(outputs, inputs);
  const std::vector<tf::Tensor> example{tf::Tensor::scalar(0.5)};
  prepared_ = tf::prepare(*runtime_, program_, tf::InputSignature::of(example));
}

Thermodynamics TracedTrg::operator()(double beta) const {
  const std::vector<tf::Tensor> in{tf::Tensor::scalar(beta)};
  const std::vector<tf::Tensor> out = tf::run(*runtime_, prepared_, in);
  return thermodynamics(beta, out[0].item<double>(), out[1].item<double>(), out[2].item<double>());
}

}  // namespace ising
