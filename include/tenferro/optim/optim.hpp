#pragma once
// Optimisers for eager parameters: SGD (momentum, Nesterov), Adam / AdamW
// and L-BFGS with a strong-Wolfe line search, with torch.optim's update
// rules and defaults.
//
// Parameters are leaves that require grad (f32, f64, c64, c128). A step
// reads each parameter's accumulated grad() and binds the updated value to
// the same leaf (EagerTensor::assign_): the tensor keeps its identity and
// grad slot, nothing is recorded, and graphs recorded before keep the old
// value. A parameter without an accumulated gradient is left unchanged (as
// torch does for a None grad).
//
// Complex parameters follow docs/autodiff.md: grad(z) = dL/dRe z + i dL/dIm z,
// so z -= lr * grad is steepest descent in (Re z, Im z), and Adam's moments
// are kept per real component (torch's view_as_real treatment).
//
// The optimiser state (momenta, moments, L-BFGS history) is held in double
// precision on the host, one real value per real component of the
// parameters; f32 parameters are updated in double and rounded.
//
//   auto rt = tf::EagerRuntime::make_cpu();
//   tf::EagerTensor w = rt->variable(tf::zeros({3}));
//   tf::optim::Adam opt({w}, {.lr = 1e-2});
//   for (int i = 0; i < 100; ++i) {
//     opt.zero_grad();
//     tf::EagerTensor loss = tf::sum(tf::square(w - target));
//     loss.backward();
//     opt.step();
//   }

#include <cstdint>
#include <functional>
#include <vector>

#include "tenferro/ad/eager.hpp"

namespace tenferro::optim {

/// The parameters and their gradients, shared by every optimiser.
class Optimizer {
 public:
  /// Each parameter must be a defined leaf that requires grad, of dtype
  /// f32, f64, c64 or c128 (InvalidArgument / RuntimeState / DTypeMismatch
  /// naming its index otherwise); the list must not be empty and must not
  /// name one tensor twice.
  explicit Optimizer(std::vector<EagerTensor> params);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  const std::vector<EagerTensor>& params() const { return params_; }
  /// Clears every parameter's accumulated gradient (call before backward()).
  void zero_grad();
  /// Completed steps.
  std::int64_t step_count() const { return steps_; }

 protected:
  /// Real components of parameter i (2 per element for complex dtypes).
  std::size_t real_size(std::size_t i) const { return sizes_[i]; }
  /// Parameter i's value and gradient as real components (column-major,
  /// complex as interleaved re, im).
  std::vector<double> value_of(std::size_t i) const;
  /// Empty when parameter i has no accumulated gradient.
  std::vector<double> grad_of(std::size_t i) const;
  /// Binds `real_values` (real_size(i) components) as parameter i's value.
  void assign(std::size_t i, const std::vector<double>& real_values);

  std::vector<EagerTensor> params_;
  std::vector<std::size_t> sizes_;
  std::int64_t steps_ = 0;
};

struct SgdOptions {
  double lr = 1e-3;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  /// Nesterov momentum (needs momentum > 0 and dampening = 0).
  bool nesterov = false;
  /// Ascend instead of descend.
  bool maximize = false;
};

/// torch.optim.SGD: g = grad + weight_decay p; with momentum,
/// b = momentum b + (1 - dampening) g (b = g at the first step) and
/// g = b (or g + momentum b for Nesterov); p -= lr g.
class Sgd : public Optimizer {
 public:
  /// InvalidArgument for lr, momentum or weight_decay < 0, or Nesterov
  /// without momentum or with dampening.
  Sgd(std::vector<EagerTensor> params, SgdOptions options = {});
  void step();
  const SgdOptions& options() const { return options_; }

 private:
  SgdOptions options_;
  std::vector<std::vector<double>> momentum_;
};

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  /// AdamW: p *= 1 - lr weight_decay before the step, instead of adding
  /// weight_decay p to the gradient.
  bool decoupled_weight_decay = false;
  /// Use the running maximum of the second moment (AMSGrad).
  bool amsgrad = false;
  bool maximize = false;
};

/// torch.optim.Adam: m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2 per
/// real component, p -= lr / (1 - b1^t) m / (sqrt(v / (1 - b2^t)) + eps).
class Adam : public Optimizer {
 public:
  /// InvalidArgument for lr, eps or weight_decay < 0, or a beta outside [0, 1).
  Adam(std::vector<EagerTensor> params, AdamOptions options = {});
  void step();
  const AdamOptions& options() const { return options_; }

 private:
  AdamOptions options_;
  std::vector<std::vector<double>> m_, v_, v_max_;
};

/// torch.optim.AdamW: Adam with decoupled weight decay, default 1e-2.
class AdamW : public Adam {
 public:
  struct Options {
    double lr = 1e-3;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    double weight_decay = 1e-2;
    bool amsgrad = false;
    bool maximize = false;
  };
  AdamW(std::vector<EagerTensor> params, Options options);
  explicit AdamW(std::vector<EagerTensor> params) : AdamW(std::move(params), Options{}) {}
};

enum class LineSearch : unsigned char {
  None,         ///< fixed steps of length lr (torch's default)
  StrongWolfe,  ///< cubic-interpolation search for the strong Wolfe conditions
};

struct LbfgsOptions {
  double lr = 1.0;
  /// Iterations per step().
  int max_iter = 20;
  /// Loss evaluations per step() (< 0: max_iter * 5 / 4, torch's default).
  int max_eval = -1;
  /// Stop when max |gradient| <= this.
  double tolerance_grad = 1e-7;
  /// Stop when the step or the loss change falls below this.
  double tolerance_change = 1e-9;
  int history_size = 100;
  LineSearch line_search = LineSearch::None;
};

/// torch.optim.LBFGS: limited-memory BFGS over all parameters as one real
/// vector (two-loop recursion, initial Hessian scaling y.s / y.y), with
/// torch's stopping rules; its history persists across step() calls.
class Lbfgs : public Optimizer {
 public:
  /// InvalidArgument for lr <= 0, max_iter < 1, history_size < 1 or
  /// negative tolerances.
  Lbfgs(std::vector<EagerTensor> params, LbfgsOptions options = {});
  /// Runs up to max_iter iterations. `loss` computes and returns the real
  /// scalar loss at the current parameter values; step() clears the grads
  /// and calls backward() on it itself (do not call backward() inside).
  /// Returns the loss at the parameters step() started from.
  double step(const std::function<EagerTensor()>& loss);
  const LbfgsOptions& options() const { return options_; }
  /// Iterations and loss evaluations over every step() so far.
  std::int64_t iterations() const { return iterations_; }
  std::int64_t evaluations() const { return evaluations_; }

 private:
  double evaluate(const std::function<EagerTensor()>& loss, std::vector<double>& gradient);
  std::vector<double> flat_values() const;
  void set_flat(const std::vector<double>& x);

  LbfgsOptions options_;
  std::int64_t iterations_ = 0;
  std::int64_t evaluations_ = 0;
  // Persistent state (torch keeps the same across calls).
  std::vector<double> direction_, previous_gradient_;
  std::vector<std::vector<double>> old_dirs_, old_steps_;
  std::vector<double> rho_;
  double step_length_ = 0.0;
  double hessian_diag_ = 1.0;
  double previous_loss_ = 0.0;
  std::int64_t state_iterations_ = 0;
};

}  // namespace tenferro::optim
