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
// A step computes with tensor operations on each parameter's own backend
// (the backend of its eager runtime): nothing is copied to the host. The
// state (momenta, moments, the L-BFGS history) lives there too, in double
// precision, one real value per real component of the parameters (a
// complex parameter is seen through Tensor::view_as_real); f32 parameters
// are updated in double and rounded. L-BFGS sees all parameters as one
// vector, so they must share one backend.
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
#include <optional>
#include <vector>

#include "tenferro/ad/eager.hpp"
#include "tenferro/ad/ops.hpp"

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
  /// What a step reads of parameter i, in double precision on its backend:
  /// its value and gradient as real components (view_as_real), the
  /// gradient negated when maximising, and coupled weight decay
  /// (g += weight_decay p) applied. nullopt when the parameter has no
  /// accumulated gradient (it is left unchanged).
  struct Slot {
    DirectTensor value;
    DirectTensor grad;
  };
  std::optional<Slot> slot(std::size_t i, bool maximize, double weight_decay) const;
  /// Binds `real_value` (double, the shape of slot(i)'s value) as parameter
  /// i's value, rounded to its dtype.
  void assign(std::size_t i, const DirectTensor& real_value);
  /// A double-precision zero of slot(i)'s shape on parameter i's backend.
  DirectTensor zeros_for(std::size_t i) const;

  std::vector<EagerTensor> params_;
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
  std::vector<DirectTensor> momentum_;
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
  std::vector<DirectTensor> m_, v_, v_max_;
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
  double evaluate(const std::function<EagerTensor()>& loss, DirectTensor& gradient);
  DirectTensor flat_values() const;
  void set_flat(const DirectTensor& x);

  LbfgsOptions options_;
  std::int64_t iterations_ = 0;
  std::int64_t evaluations_ = 0;
  // Persistent state (torch keeps the same across calls), on the parameters'
  // backend.
  DirectTensor direction_, previous_gradient_;
  std::vector<DirectTensor> old_dirs_, old_steps_;
  std::vector<double> rho_;
  double step_length_ = 0.0;
  double hessian_diag_ = 1.0;
  double previous_loss_ = 0.0;
  std::int64_t state_iterations_ = 0;
};

}  // namespace tenferro::optim
