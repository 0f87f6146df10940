// The optimiser base (parameters as real vectors), SGD and Adam.

#include <cmath>
#include <complex>
#include <string>
#include <unordered_set>

#include "tenferro/optim/optim.hpp"

namespace tenferro::optim {
namespace {

[[noreturn]] void invalid(const std::string& op, const std::string& message) {
  throw Error(ErrorKind::InvalidArgument, op, message);
}

void require_non_negative(const std::string& op, const char* what, double v) {
  if (!(v >= 0.0) || !std::isfinite(v)) {
    invalid(op,
            std::string(what) + " must be a finite number >= 0 (got " + std::to_string(v) + ")");
  }
}

template <class T>
std::vector<double> real_components(const Tensor& t) {
  const std::vector<T> v = t.to_vector<T>();
  std::vector<double> out;
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    out.reserve(2 * v.size());
    for (const T& z : v) {
      out.push_back(static_cast<double>(z.real()));
      out.push_back(static_cast<double>(z.imag()));
    }
  } else {
    out.assign(v.begin(), v.end());
  }
  return out;
}

std::vector<double> to_real_vector(const Tensor& t) {
  switch (t.dtype()) {
    case DType::F32:
      return real_components<float>(t);
    case DType::F64:
      return real_components<double>(t);
    case DType::C64:
      return real_components<std::complex<float>>(t);
    case DType::C128:
      return real_components<std::complex<double>>(t);
    default:
      break;
  }
  throw Error(ErrorKind::DTypeMismatch, "optim", "parameters must be f32, f64, c64 or c128");
}

template <class T>
Tensor from_real_components(const Shape& shape, const std::vector<double>& x) {
  std::vector<T> v;
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    using R = typename T::value_type;
    v.reserve(x.size() / 2);
    for (std::size_t k = 0; k + 1 < x.size(); k += 2) {
      v.emplace_back(static_cast<R>(x[k]), static_cast<R>(x[k + 1]));
    }
  } else {
    v.reserve(x.size());
    for (double e : x) v.push_back(static_cast<T>(e));
  }
  return Tensor::from_col_major(shape, v);
}

}  // namespace

// ---- Optimizer ------------------------------------------------------------------------

Optimizer::Optimizer(std::vector<EagerTensor> params) : params_(std::move(params)) {
  if (params_.empty()) invalid("optim", "no parameters to optimise (the list is empty)");
  std::unordered_set<const void*> seen;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const EagerTensor& p = params_[i];
    const std::string which = "parameter " + std::to_string(i);
    if (!p.defined()) invalid("optim", which + " is an undefined tensor");
    if (!seen.insert(p.impl().get()).second) {
      invalid("optim", which + " appears twice in the parameter list");
    }
    if (!p.is_leaf() || !p.requires_grad()) {
      throw Error(ErrorKind::RuntimeState, "optim",
                  which +
                      " must be a leaf that requires grad (make it with runtime->variable(...) "
                      "or requires_grad_())");
    }
    const DType d = p.dtype();
    if (d != DType::F32 && d != DType::F64 && d != DType::C64 && d != DType::C128) {
      throw Error(
          ErrorKind::DTypeMismatch, "optim",
          which + " has dtype " + std::string(name(d)) + "; optimisers take f32, f64, c64 or c128");
    }
    sizes_.push_back(static_cast<std::size_t>(p.numel()) * (is_complex(d) ? 2u : 1u));
  }
}

void Optimizer::zero_grad() {
  for (auto& p : params_) p.clear_grad();
}

std::vector<double> Optimizer::value_of(std::size_t i) const {
  return to_real_vector(params_[i].value());
}

std::vector<double> Optimizer::grad_of(std::size_t i) const {
  if (!params_[i].has_grad()) return {};
  return to_real_vector(params_[i].grad().value());
}

void Optimizer::assign(std::size_t i, const std::vector<double>& x) {
  EagerTensor& p = params_[i];
  const Shape& shape = p.shape();
  switch (p.dtype()) {
    case DType::F32:
      p.assign_(from_real_components<float>(shape, x));
      break;
    case DType::F64:
      p.assign_(from_real_components<double>(shape, x));
      break;
    case DType::C64:
      p.assign_(from_real_components<std::complex<float>>(shape, x));
      break;
    case DType::C128:
      p.assign_(from_real_components<std::complex<double>>(shape, x));
      break;
    default:
      throw Error(ErrorKind::Internal, "optim", "unexpected parameter dtype");
  }
}

// ---- SGD --------------------------------------------------------------------------------

Sgd::Sgd(std::vector<EagerTensor> params, SgdOptions options)
    : Optimizer(std::move(params)), options_(options), momentum_(params_.size()) {
  require_non_negative("optim.sgd", "lr", options_.lr);
  require_non_negative("optim.sgd", "momentum", options_.momentum);
  require_non_negative("optim.sgd", "weight_decay", options_.weight_decay);
  if (!std::isfinite(options_.dampening)) invalid("optim.sgd", "dampening must be finite");
  if (options_.nesterov && (options_.momentum <= 0.0 || options_.dampening != 0.0)) {
    invalid("optim.sgd", "Nesterov momentum needs momentum > 0 and dampening = 0");
  }
}

void Sgd::step() {
  const SgdOptions& o = options_;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    std::vector<double> g = grad_of(i);
    if (g.empty()) continue;
    std::vector<double> p = value_of(i);
    if (o.maximize) {
      for (double& e : g) e = -e;
    }
    if (o.weight_decay != 0.0) {
      for (std::size_t k = 0; k < g.size(); ++k) g[k] += o.weight_decay * p[k];
    }
    if (o.momentum != 0.0) {
      std::vector<double>& b = momentum_[i];
      if (b.empty()) {
        b = g;
      } else {
        for (std::size_t k = 0; k < g.size(); ++k)
          b[k] = o.momentum * b[k] + (1.0 - o.dampening) * g[k];
      }
      if (o.nesterov) {
        for (std::size_t k = 0; k < g.size(); ++k) g[k] += o.momentum * b[k];
      } else {
        g = b;
      }
    }
    for (std::size_t k = 0; k < p.size(); ++k) p[k] -= o.lr * g[k];
    assign(i, p);
  }
  ++steps_;
}

// ---- Adam / AdamW -----------------------------------------------------------------------

Adam::Adam(std::vector<EagerTensor> params, AdamOptions options)
    : Optimizer(std::move(params)),
      options_(options),
      m_(params_.size()),
      v_(params_.size()),
      v_max_(params_.size()) {
  require_non_negative("optim.adam", "lr", options_.lr);
  require_non_negative("optim.adam", "eps", options_.eps);
  require_non_negative("optim.adam", "weight_decay", options_.weight_decay);
  for (double beta : {options_.beta1, options_.beta2}) {
    if (!(beta >= 0.0 && beta < 1.0)) {
      invalid("optim.adam", "betas must be in [0, 1) (got " + std::to_string(beta) + ")");
    }
  }
}

void Adam::step() {
  const AdamOptions& o = options_;
  const double t = static_cast<double>(steps_ + 1);
  const double bias1 = 1.0 - std::pow(o.beta1, t);
  const double bias2_root = std::sqrt(1.0 - std::pow(o.beta2, t));
  for (std::size_t i = 0; i < params_.size(); ++i) {
    std::vector<double> g = grad_of(i);
    if (g.empty()) continue;
    std::vector<double> p = value_of(i);
    if (o.maximize) {
      for (double& e : g) e = -e;
    }
    if (o.weight_decay != 0.0) {
      if (o.decoupled_weight_decay) {
        for (double& e : p) e *= 1.0 - o.lr * o.weight_decay;
      } else {
        for (std::size_t k = 0; k < g.size(); ++k) g[k] += o.weight_decay * p[k];
      }
    }
    std::vector<double>& m = m_[i];
    std::vector<double>& v = v_[i];
    if (m.empty()) {
      m.assign(g.size(), 0.0);
      v.assign(g.size(), 0.0);
      if (o.amsgrad) v_max_[i].assign(g.size(), 0.0);
    }
    for (std::size_t k = 0; k < g.size(); ++k) {
      m[k] = o.beta1 * m[k] + (1.0 - o.beta1) * g[k];
      v[k] = o.beta2 * v[k] + (1.0 - o.beta2) * g[k] * g[k];
      double second = v[k];
      if (o.amsgrad) {
        v_max_[i][k] = std::max(v_max_[i][k], v[k]);
        second = v_max_[i][k];
      }
      const double denom = std::sqrt(second) / bias2_root + o.eps;
      p[k] -= (o.lr / bias1) * m[k] / denom;
    }
    assign(i, p);
  }
  ++steps_;
}

AdamW::AdamW(std::vector<EagerTensor> params, Options o)
    : Adam(std::move(params), AdamOptions{o.lr, o.beta1, o.beta2, o.eps, o.weight_decay, true,
                                          o.amsgrad, o.maximize}) {}

}  // namespace tenferro::optim
