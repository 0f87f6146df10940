#include "checks.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <sstream>

#include "ops.hpp"
#include "tenferro/ad/ops.hpp"
#include "tenferro/ad/program.hpp"
#include "tenferro/ad/transforms.hpp"

namespace replay {

using namespace tenferro;
using C = std::complex<double>;

namespace {

std::vector<C> values_of(const Tensor& t) {
  std::vector<C> out;
  switch (t.dtype()) {
    case DType::F32:
      for (float v : t.to_vector<float>()) out.emplace_back(v, 0.0);
      break;
    case DType::F64:
      for (double v : t.to_vector<double>()) out.emplace_back(v, 0.0);
      break;
    case DType::C64:
      for (auto v : t.to_vector<std::complex<float>>()) out.emplace_back(v.real(), v.imag());
      break;
    case DType::C128:
      out = t.to_vector<C>();
      break;
    case DType::I32:
      for (auto v : t.to_vector<std::int32_t>()) out.emplace_back(static_cast<double>(v), 0.0);
      break;
    case DType::I64:
      for (auto v : t.to_vector<std::int64_t>()) out.emplace_back(static_cast<double>(v), 0.0);
      break;
    case DType::Bool:
      for (bool v : t.to_vector<bool>()) out.emplace_back(v ? 1.0 : 0.0, 0.0);
      break;
  }
  return out;
}

bool same_value(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

// allclose(ours, ref): |ours - ref| <= atol + rtol |ref| elementwise; NaN
// matches NaN and equal infinities match. An undefined `ours` is a symbolic zero.
void compare(ModeResult& r, const std::string& mode, const std::string& probe,
             const std::string& check, const Tensor& ours, const Tensor& ref, Tolerance tol) {
  ++r.checks;
  Failure f{mode, probe, check, 0.0, 0.0, {}};
  if (ours.defined() && !(ours.shape() == ref.shape())) {
    std::ostringstream os;
    os << "shape " << shape_to_string(ours.shape()) << " != reference "
       << shape_to_string(ref.shape()) << " (column-major)";
    f.note = os.str();
    r.failures.push_back(f);
    return;
  }
  const std::vector<C> want = values_of(ref);
  const std::vector<C> got = ours.defined() ? values_of(ours) : std::vector<C>(want.size());
  bool ok = true;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const C g = got[i], w = want[i];
    if (same_value(g.real(), w.real()) && same_value(g.imag(), w.imag())) continue;
    const double err = std::abs(g - w);
    const double rel = err / std::max(std::abs(w), 1e-300);
    if (!(err <= tol.atol + tol.rtol * std::abs(w))) ok = false;
    if (!(err <= f.max_abs)) f.max_abs = err;  // NaN-aware max
    if (std::isfinite(rel) && rel > f.max_rel) f.max_rel = rel;
  }
  if (!ok) r.failures.push_back(f);
}

const Tensor& find(const NamedTensors& m, const std::string& key) {
  for (const auto& [k, v] : m) {
    if (k == key) return v;
  }
  throw std::runtime_error("probe has no entry '" + key + "'");
}

// Cotangents are given in the reference output's dtype; ours may differ in
// precision (e.g. float_power computes in double).
Tensor as_dtype(const Tensor& t, DType dt, Backend& backend) {
  if (t.dtype() == dt) return t;
  if (is_complex(t.dtype()) && !is_complex(dt)) return cast(t, dt, backend);
  return convert(t, dt, backend);
}

Tensor zeros_for(const Tensor& like) {
  return zeros(std::span<const std::int64_t>(like.shape().data(), like.shape().size()),
               like.dtype());
}

// phi(x) = <ct, y> = Re(sum(conj(ct) * y)), whose gradient is the vjp and whose
// Hessian the hvp references use.
template <class T>
T inner(const T& ct, const T& y) {
  T p = sum(conj(ct) * y);
  return is_complex(p.dtype()) ? real(p) : p;
}

// phi = sum_k <ct_k, y_k>: its gradient is the vjp of all outputs at once.
template <class T>
T inner_all(std::span<const T> cts, std::span<const T> ys) {
  T phi = inner(cts[0], ys[0]);
  for (std::size_t k = 1; k < ys.size(); ++k) phi = add(phi, inner(cts[k], ys[k]));
  return phi;
}

// The inputs that carry derivatives: integer inputs (lu_solve's pivots) have no
// direction, vjp or hvp entries and enter as constants.
std::vector<std::size_t> differentiable_inputs(const Case& c) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    if (is_inexact(c.inputs[i].second.dtype())) out.push_back(i);
  }
  return out;
}

}  // namespace

// ---- eager ------------------------------------------------------------------------------

ModeResult check_eager(const Case& c, const EagerRuntimePtr& rt) {
  ModeResult r;
  const std::string mode = "eager";
  const MultiFn<EagerTensor> f = build_multi<EagerTensor>(c);
  const std::vector<std::size_t> diff = differentiable_inputs(c);
  Backend& backend = rt->backend();
  // Differentiable inputs are variables, integer inputs constants.
  const auto leaves = [&] {
    std::vector<EagerTensor> xs;
    for (const auto& [k, v] : c.inputs)
      xs.push_back(is_inexact(v.dtype()) ? rt->variable(v) : rt->tensor(v));
    return xs;
  };

  if (c.expect_error) {
    try {
      std::vector<EagerTensor> xs = leaves();
      std::vector<EagerTensor> ys = f(xs);
      std::vector<EagerTensor> cts;
      for (const auto& y : ys) {
        cts.push_back(rt->tensor(
            ones(std::span<const std::int64_t>(y.shape().data(), y.shape().size()), y.dtype())));
      }
      inner_all<EagerTensor>(cts, ys).backward();
    } catch (const Error&) {
      ++r.checks;
      return r;
    }
    r.failures.push_back({mode, "-", "error", 0, 0, "expected a typed tenferro::Error"});
    return r;
  }

  const std::vector<std::string> keys = case_output_keys(c);
  const std::size_t m = keys.size();
  for (const Probe& p : c.probes) {
    // The cotangents in the outputs' dtypes.
    const auto cotangents = [&](std::span<const EagerTensor> ys) {
      std::vector<EagerTensor> cts;
      for (std::size_t k = 0; k < m; ++k)
        cts.push_back(rt->tensor(as_dtype(find(p.cotangent, keys[k]), ys[k].dtype(), backend)));
      return cts;
    };

    // vjp through backward(seed) (one output) or backward of phi (several).
    {
      std::vector<EagerTensor> xs = leaves();
      std::vector<EagerTensor> ys = f(xs);
      if (m == 1) {
        if (ys[0].requires_grad()) ys[0].backward(cotangents(ys)[0]);
      } else {
        EagerTensor phi = inner_all<EagerTensor>(cotangents(ys), ys);
        if (phi.requires_grad()) phi.backward();
      }
      for (const std::size_t i : diff) {
        const auto& name = c.inputs[i].first;
        const EagerTensor g = xs[i].grad();
        compare(r, mode, p.id, "vjp:" + name, g.defined() ? g.value() : Tensor(),
                find(p.ref.vjp, name), c.first_order);
      }
    }

    // jvp: J v = sum_i J_i v_i, one forward pass per input and output.
    for (std::size_t k = 0; k < m; ++k) {
      std::optional<EagerTensor> total;
      for (const std::size_t i : diff) {
        std::vector<EagerTensor> xs;
        for (const auto& [kk, v] : c.inputs) xs.push_back(rt->tensor(v));
        EagerFn h = [&, i, k](const EagerTensor& xi) {
          std::vector<EagerTensor> a = xs;
          a[i] = xi;
          return f(a)[k];
        };
        const EagerTensor v = rt->tensor(find(p.direction, c.inputs[i].first));
        auto res = jvp(h, xs[i], v);
        if (res.tangent) total = total ? add(*total, *res.tangent) : *res.tangent;
      }
      compare(r, mode, p.id, "jvp:" + keys[k], total ? total->value() : Tensor(),
              find(p.ref.jvp, keys[k]), c.first_order);
    }

    // hvp: forward over reverse, hvp_k = sum_i d/dx_i grad_k(phi) . v_i.
    if (p.ref.has_hvp && c.has_second_order) {
      for (const std::size_t k : diff) {
        std::optional<EagerTensor> total;
        for (const std::size_t i : diff) {
          std::vector<EagerTensor> xs;
          for (const auto& [kk, v] : c.inputs) xs.push_back(rt->tensor(v));
          EagerFn g = [&, i, k](const EagerTensor& xi) {
            std::vector<EagerTensor> a = xs;
            a[i] = xi;
            std::vector<EagerTensor> wrt;
            for (const std::size_t d : diff) wrt.push_back(a[d]);
            auto grads = grad_many(
                [&](std::span<const EagerTensor> z) {
                  std::vector<EagerTensor> all = a;
                  for (std::size_t j = 0; j < diff.size(); ++j) all[diff[j]] = z[j];
                  std::vector<EagerTensor> ys = f(all);
                  return inner_all<EagerTensor>(cotangents(ys), ys);
                },
                wrt);
            const std::size_t gk =
                static_cast<std::size_t>(std::find(diff.begin(), diff.end(), k) - diff.begin());
            return grads[gk] ? *grads[gk] : rt->tensor(zeros_for(a[k].value()));
          };
          const EagerTensor v = rt->tensor(find(p.direction, c.inputs[i].first));
          auto res = jvp(g, xs[i], v);
          if (res.tangent) total = total ? add(*total, *res.tangent) : *res.tangent;
        }
        const auto& name = c.inputs[k].first;
        compare(r, mode, p.id, "hvp:" + name, total ? total->value() : Tensor(),
                find(p.ref.hvp, name), c.second_order);
      }
    }
  }
  return r;
}

// ---- traced -----------------------------------------------------------------------------

ModeResult check_traced(const Case& c, const EagerRuntimePtr& rt) {
  ModeResult r;
  const std::string mode = "traced";
  const MultiFn<TracedTensor> f = build_multi<TracedTensor>(c);
  const std::vector<std::size_t> diff = differentiable_inputs(c);
  const std::size_t n = diff.size();
  Runtime& runtime = *rt->runtime();
  Backend& backend = rt->backend();

  std::vector<TracedTensor> ps;
  std::vector<Tensor> xs;
  for (const auto& [k, v] : c.inputs) {
    ps.push_back(placeholder(
        v.dtype(), to_sym_shape(std::span<const std::int64_t>(v.shape().data(), v.shape().size())),
        k));
    xs.push_back(v);
  }
  // The placeholders derivatives are taken in (integer inputs are constants).
  std::vector<TracedTensor> wrt;
  for (const std::size_t i : diff) wrt.push_back(ps[i]);
  const auto name_of = [&](std::size_t i) -> const std::string& { return c.inputs[diff[i]].first; };

  if (c.expect_error) {
    try {
      std::vector<TracedTensor> ys = f(ps);
      std::vector<TracedTensor> ones_cts;
      for (const auto& y : ys) ones_cts.push_back(ones_like(y));
      auto gs = vjp_many(ys, ones_cts, wrt);
      std::vector<TracedTensor> outs;
      for (auto& g : gs) {
        if (g) outs.push_back(*g);
      }
      outs.insert(outs.end(), ys.begin(), ys.end());
      run_compiled(runtime, compile(outs, ps), xs);
    } catch (const Error&) {
      ++r.checks;
      return r;
    }
    r.failures.push_back({mode, "-", "error", 0, 0, "expected a typed tenferro::Error"});
    return r;
  }

  const std::vector<TracedTensor> ys = f(ps);
  const std::vector<std::string> keys = case_output_keys(c);
  const std::size_t m = keys.size();
  if (ys.size() != m) throw std::runtime_error("the op mapping returns another number of outputs");
  std::vector<TracedTensor> vs;
  for (std::size_t i = 0; i < n; ++i) {
    vs.push_back(placeholder(wrt[i].dtype(), wrt[i].shape(), "v_" + name_of(i)));
  }
  std::vector<TracedTensor> cts;
  for (std::size_t k = 0; k < m; ++k)
    cts.push_back(placeholder(ys[k].dtype(), ys[k].shape(), "ct_" + keys[k]));

  // One program: [jvp_0..m-1, vjp_0..n-1, hvp_0..n-1] of (x, v, ct) over the n
  // differentiable inputs; absent derivatives (no dependence) are symbolic
  // zeros and compare as zeros.
  std::vector<std::optional<TracedTensor>> outs;
  for (auto& t : jvp_many(ys, wrt, vs)) outs.push_back(t);
  for (auto& g : vjp_many(ys, cts, wrt)) outs.push_back(g);
  bool want_hvp = c.has_second_order;
  for (const Probe& p : c.probes) want_hvp = want_hvp && p.ref.has_hvp;
  if (want_hvp) {
    const TracedTensor phi = inner_all<TracedTensor>(cts, ys);
    auto grads = grad_many(phi, wrt);
    std::vector<TracedTensor> gvals;
    for (std::size_t i = 0; i < n; ++i) gvals.push_back(grads[i] ? *grads[i] : zeros_like(wrt[i]));
    for (auto& h : jvp_many(gvals, wrt, vs)) outs.push_back(h);
  }
  std::vector<TracedTensor> program_outs;
  std::vector<int> slot;  // index into program outputs, -1: zero
  for (auto& o : outs) {
    slot.push_back(o ? static_cast<int>(program_outs.size()) : -1);
    if (o) program_outs.push_back(*o);
  }
  std::vector<TracedTensor> program_ins = ps;
  program_ins.insert(program_ins.end(), vs.begin(), vs.end());
  program_ins.insert(program_ins.end(), cts.begin(), cts.end());
  const Program prog = compile(program_outs, program_ins);

  for (const Probe& p : c.probes) {
    std::vector<Tensor> args = xs;
    for (std::size_t i = 0; i < n; ++i) args.push_back(find(p.direction, name_of(i)));
    for (std::size_t k = 0; k < m; ++k)
      args.push_back(as_dtype(find(p.cotangent, keys[k]), ys[k].dtype(), backend));
    const std::vector<Tensor> res =
        program_outs.empty() ? std::vector<Tensor>{} : run_compiled(runtime, prog, args);
    const auto at = [&](std::size_t j) { return slot[j] < 0 ? Tensor() : res[slot[j]]; };
    for (std::size_t k = 0; k < m; ++k)
      compare(r, mode, p.id, "jvp:" + keys[k], at(k), find(p.ref.jvp, keys[k]), c.first_order);
    for (std::size_t i = 0; i < n; ++i) {
      compare(r, mode, p.id, "vjp:" + name_of(i), at(m + i), find(p.ref.vjp, name_of(i)),
              c.first_order);
    }
    if (want_hvp) {
      for (std::size_t i = 0; i < n; ++i) {
        compare(r, mode, p.id, "hvp:" + name_of(i), at(m + n + i), find(p.ref.hvp, name_of(i)),
                c.second_order);
      }
    }
  }
  return r;
}

}  // namespace replay
