// L-BFGS (Nocedal and Wright, Numerical Optimization, algorithms 7.4 and
// 7.5) with torch.optim.LBFGS's stopping rules, and a line search for the
// strong Wolfe conditions (algorithms 3.5 and 3.6) with safeguarded cubic
// interpolation.

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/optim/optim.hpp"

namespace tenferro::optim {
namespace {

// The vectors are one-dimensional double tensors on the parameters' backend;
// their reductions come back as host scalars for the search's decisions.
using Vec = DirectTensor;

// A rank-0 result read back from the backend.
double host_scalar(const Vec& v) {
  return to_host(v.value(), v.backend()).item<double>();
}

double dot(const Vec& a, const Vec& b) {
  return host_scalar(sum(a * b));
}

double max_abs(const Vec& a) {
  return a.numel() == 0 ? 0.0 : host_scalar(max(abs(a)));
}

double abs_sum(const Vec& a) {
  return host_scalar(sum(abs(a)));
}

// x + t d
Vec moved(const Vec& x, double t, const Vec& d) {
  return x + t * d;
}

// The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2,
// clamped to [lo, hi]; the midpoint when the cubic has no minimiser.
double cubic_minimiser(double x1, double f1, double g1, double x2, double f2, double g2, double lo,
                       double hi) {
  const double d1 = g1 + g2 - 3.0 * (f1 - f2) / (x1 - x2);
  const double disc = d1 * d1 - g1 * g2;
  if (disc < 0.0 || !std::isfinite(disc)) return (lo + hi) / 2.0;
  const double d2 = std::sqrt(disc);
  double x = 0.0;
  if (x1 <= x2) {
    x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2.0 * d2));
  } else {
    x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2.0 * d2));
  }
  if (!std::isfinite(x)) return (lo + hi) / 2.0;
  return std::min(std::max(x, lo), hi);
}

struct Point {
  double t = 0.0;
  double f = 0.0;
  Vec g;
  double gtd = 0.0;
};

struct SearchResult {
  Point best;
  int evaluations = 0;
};

// Strong Wolfe search along d from x (loss f0, gradient g0, slope gtd0 < 0),
// first trial step t. eval(t) returns the loss and gradient at x + t d.
template <class Eval>
SearchResult strong_wolfe(const Eval& eval, double t, const Vec& d, const Point& start,
                          double tolerance_change) {
  constexpr double c1 = 1e-4, c2 = 0.9;
  constexpr int max_search = 25;
  const double d_norm = max_abs(d);
  SearchResult r;
  Point prev = start;
  Point cur;
  cur.t = t;
  cur.f = eval(t, cur.g);
  cur.gtd = dot(cur.g, d);
  r.evaluations = 1;

  // Bracketing: grow the step until the interval [prev, cur] holds a point
  // satisfying the conditions, or cur satisfies them.
  Point lo, hi;
  bool bracketed = false, done = false;
  int iter = 0;
  while (iter < max_search) {
    if (cur.f > start.f + c1 * cur.t * start.gtd || (iter > 1 && cur.f >= prev.f)) {
      lo = prev, hi = cur, bracketed = true;
      break;
    }
    if (std::abs(cur.gtd) <= -c2 * start.gtd) {
      lo = cur, done = true;
      break;
    }
    if (cur.gtd >= 0.0) {
      lo = prev, hi = cur, bracketed = true;
      break;
    }
    const double min_step = cur.t + 0.01 * (cur.t - prev.t);
    const double max_step = cur.t * 10.0;
    const double next =
        cubic_minimiser(prev.t, prev.f, prev.gtd, cur.t, cur.f, cur.gtd, min_step, max_step);
    prev = cur;
    cur = Point{};
    cur.t = next;
    cur.f = eval(next, cur.g);
    cur.gtd = dot(cur.g, d);
    ++r.evaluations;
    ++iter;
  }
  if (!bracketed && !done) {  // out of trials: bracket [0, t]
    lo = start, hi = cur, bracketed = true;
  }

  // Zoom: shrink the bracket by cubic interpolation, keeping `lo` the
  // better end, until a point satisfies the strong Wolfe conditions.
  if (!done) {
    if (hi.f < lo.f) std::swap(lo, hi);
    bool insufficient_progress = false;
    while (iter < max_search) {
      if (std::abs(hi.t - lo.t) * d_norm < tolerance_change) break;
      const double a = std::min(lo.t, hi.t), b = std::max(lo.t, hi.t);
      double t_new = cubic_minimiser(lo.t, lo.f, lo.gtd, hi.t, hi.f, hi.gtd, a, b);
      // Keep away from the ends: a step too close to them makes no progress.
      const double margin = 0.1 * (b - a);
      if (std::min(b - t_new, t_new - a) < margin) {
        if (insufficient_progress || t_new >= b || t_new <= a) {
          t_new = std::abs(t_new - b) < std::abs(t_new - a) ? b - margin : a + margin;
          insufficient_progress = false;
        } else {
          insufficient_progress = true;
        }
      } else {
        insufficient_progress = false;
      }
      Point p;
      p.t = t_new;
      p.f = eval(t_new, p.g);
      p.gtd = dot(p.g, d);
      ++r.evaluations;
      ++iter;
      if (p.f > start.f + c1 * p.t * start.gtd || p.f >= lo.f) {
        hi = p;
        if (hi.f < lo.f) std::swap(lo, hi);
      } else {
        if (std::abs(p.gtd) <= -c2 * start.gtd) {
          lo = p;
          break;
        }
        if (p.gtd * (hi.t - lo.t) >= 0.0) hi = lo;
        lo = p;
      }
    }
  }
  r.best = lo;
  return r;
}

}  // namespace

Lbfgs::Lbfgs(std::vector<EagerTensor> params, LbfgsOptions options)
    : Optimizer(std::move(params)), options_(options) {
  if (!(options_.lr > 0.0) || !std::isfinite(options_.lr)) {
    throw Error(ErrorKind::InvalidArgument, "optim.lbfgs", "lr must be a finite number > 0");
  }
  if (options_.max_iter < 1) {
    throw Error(ErrorKind::InvalidArgument, "optim.lbfgs", "max_iter must be at least 1");
  }
  if (options_.history_size < 1) {
    throw Error(ErrorKind::InvalidArgument, "optim.lbfgs", "history_size must be at least 1");
  }
  if (!(options_.tolerance_grad >= 0.0) || !(options_.tolerance_change >= 0.0)) {
    throw Error(ErrorKind::InvalidArgument, "optim.lbfgs", "tolerances must be >= 0");
  }
  if (options_.max_eval < 0) options_.max_eval = options_.max_iter * 5 / 4;
}

namespace {
// The backend every parameter lives on (L-BFGS sees them as one vector).
Backend& shared_backend(const std::vector<EagerTensor>& params) {
  Backend& backend = params[0].runtime()->backend();
  for (std::size_t i = 1; i < params.size(); ++i) {
    if (&params[i].runtime()->backend() != &backend) {
      fail(ErrorKind::ContextMismatch, "optim.lbfgs", "parameter ", i,
           " lives on another backend than parameter 0; L-BFGS optimises the parameters as "
           "one vector, so they must share a backend");
    }
  }
  return backend;
}

// One double vector of the parameters' real components, in order.
Vec flatten(const std::vector<DirectTensor>& parts) {
  std::vector<DirectTensor> flat;
  for (const DirectTensor& t : parts) flat.push_back(reshape(t, {SymDim(t.numel())}));
  return flat.size() == 1 ? flat[0] : concatenate(flat, 0);
}
}  // namespace

Vec Lbfgs::flat_values() const {
  Backend& backend = shared_backend(params_);
  std::vector<DirectTensor> parts;
  for (const EagerTensor& p : params_)
    parts.push_back(cast(on(backend, p.value().view_as_real()), DType::F64));
  return flatten(parts);
}

void Lbfgs::set_flat(const Vec& x) {
  std::int64_t at = 0;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const Shape real_shape = params_[i].value().view_as_real().shape();
    const std::int64_t n = shape_numel(real_shape);
    assign(i, reshape(slice(x, Shape{at}, Shape{at + n}), ShapeArg(real_shape)));
    at += n;
  }
}

double Lbfgs::evaluate(const std::function<EagerTensor()>& loss, Vec& gradient) {
  zero_grad();
  const EagerTensor l = loss();
  if (!l.defined() || l.numel() != 1 || is_complex(l.dtype()) || !is_inexact(l.dtype())) {
    throw Error(ErrorKind::InvalidArgument, "optim.lbfgs",
                "the loss function must return a real floating scalar (one element)");
  }
  l.backward();
  ++evaluations_;
  (void)shared_backend(params_);
  std::vector<DirectTensor> parts;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    // A parameter the loss does not depend on has a zero gradient.
    std::optional<Slot> s = slot(i, false, 0.0);
    parts.push_back(s ? std::move(s->grad) : zeros_for(i));
  }
  gradient = flatten(parts);
  return l.item<double>();
}

double Lbfgs::step(const std::function<EagerTensor()>& loss) {
  if (!loss) throw Error(ErrorKind::InvalidArgument, "optim.lbfgs", "no loss function given");
  const LbfgsOptions& o = options_;
  Vec g;
  double f = evaluate(loss, g);
  const double first_loss = f;
  int evals = 1;
  if (max_abs(g) <= o.tolerance_grad) {
    ++steps_;
    return first_loss;
  }

  Vec& d = direction_;
  int n_iter = 0;
  while (n_iter < o.max_iter) {
    ++n_iter;
    ++state_iterations_;
    ++iterations_;
    if (state_iterations_ == 1) {
      d = -g;
      old_dirs_.clear(), old_steps_.clear(), rho_.clear();
      hessian_diag_ = 1.0;
    } else {
      // Curvature pair from the last step; skipped when y.s is not positive
      // enough (the update would lose positive definiteness).
      Vec y = g - previous_gradient_;
      Vec s = d * step_length_;
      const double ys = dot(y, s);
      if (ys > 1e-10) {
        if (static_cast<int>(old_dirs_.size()) == o.history_size) {
          old_dirs_.erase(old_dirs_.begin());
          old_steps_.erase(old_steps_.begin());
          rho_.erase(rho_.begin());
        }
        hessian_diag_ = ys / dot(y, y);
        old_dirs_.push_back(std::move(y));
        old_steps_.push_back(std::move(s));
        rho_.push_back(1.0 / ys);
      }
      // Two-loop recursion: d = -H g.
      const std::size_t m = old_dirs_.size();
      Vec q = -g;
      std::vector<double> alpha(m);
      for (std::size_t j = m; j-- > 0;) {
        alpha[j] = dot(old_steps_[j], q) * rho_[j];
        q = q - alpha[j] * old_dirs_[j];
      }
      q = q * hessian_diag_;
      for (std::size_t j = 0; j < m; ++j) {
        const double beta = dot(old_dirs_[j], q) * rho_[j];
        q = q + old_steps_[j] * (alpha[j] - beta);
      }
      d = std::move(q);
    }
    previous_gradient_ = g;
    previous_loss_ = f;

    step_length_ = state_iterations_ == 1 ? std::min(1.0, 1.0 / abs_sum(g)) * o.lr : o.lr;
    const double gtd = dot(g, d);
    if (gtd > -o.tolerance_change) break;  // not a descent direction any more

    int search_evals = 0;
    if (o.line_search == LineSearch::StrongWolfe) {
      const Vec x0 = flat_values();
      const auto eval = [&](double t, Vec& grad_out) {
        set_flat(moved(x0, t, d));
        return evaluate(loss, grad_out);
      };
      Point start;
      start.t = 0.0, start.f = f, start.g = g, start.gtd = gtd;
      const SearchResult r = strong_wolfe(eval, step_length_, d, start, o.tolerance_change);
      step_length_ = r.best.t;
      f = r.best.f;
      g = r.best.g;
      search_evals = r.evaluations;
      set_flat(moved(x0, step_length_, d));
    } else {
      set_flat(moved(flat_values(), step_length_, d));
      if (n_iter != o.max_iter) {
        f = evaluate(loss, g);
        search_evals = 1;
      }
    }
    evals += search_evals;

    if (n_iter == o.max_iter || evals >= o.max_eval) break;
    if (max_abs(g) <= o.tolerance_grad) break;
    if (max_abs(d) * std::abs(step_length_) <= o.tolerance_change) break;
    if (std::abs(f - previous_loss_) < o.tolerance_change) break;
  }
  ++steps_;
  return first_loss;
}

}  // namespace tenferro::optim
