#include "tenferro/ad/grad_check.hpp"

#include <cmath>
#include <sstream>

#include "tenferro/ad/eager_ops.hpp"

namespace tenferro {

namespace {

// Re(sum conj(a) * b) over all elements, on the host.
double real_inner(const Tensor& a, const Tensor& b) {
  const Tensor ca = a.contiguous(), cb = b.contiguous();
  std::vector<c128_t> va(static_cast<std::size_t>(ca.numel())), vb(va.size());
  Tensor::copy_into(ca, Tensor::wrap(va.data(), ca.shape()));
  Tensor::copy_into(cb, Tensor::wrap(vb.data(), cb.shape()));
  double s = 0;
  for (std::size_t i = 0; i < va.size(); ++i) s += (std::conj(va[i]) * vb[i]).real();
  return s;
}

double max_abs(const Tensor& a) {
  return max_abs_diff(a, zeros({}, DType::F64));
}

Tensor axpy(const Tensor& x, double h, const Tensor& t) {
  // x + h t on the host, in x's dtype.
  Tensor out = x.clone();
  Tensor scaled = t.clone();
  std::vector<c128_t> vx(static_cast<std::size_t>(x.numel())), vt(vx.size());
  Tensor::copy_into(x, Tensor::wrap(vx.data(), x.shape()));
  Tensor::copy_into(t, Tensor::wrap(vt.data(), t.shape()));
  for (std::size_t i = 0; i < vx.size(); ++i) vx[i] += h * vt[i];
  Tensor::copy_into(Tensor::wrap(vx.data(), x.shape()), out);
  return out;
}

Tensor random_like(const Tensor& x, Generator& gen) {
  return randn(x.shape(), x.dtype(), gen);
}

}  // namespace

GradCheckResult check_gradients(const EagerFnN& f, ListRef<EagerTensor> inputs,
                                GradCheckOptions options) {
  if (!f) {
    fail(ErrorKind::InvalidArgument, "check_gradients", "the function is empty; pass a callable");
  }
  GradCheckResult result;
  if (inputs.empty())
    fail(ErrorKind::InvalidArgument, "check_gradients", "at least one input is required");
  const EagerRuntimePtr& rt = inputs[0].runtime();
  // The function runs on the runtime's backend; the check's own arithmetic
  // (tangents, inner products, differences) on host copies (to_host,
  // from_host), so it works for a backend with memory of its own.
  Backend& backend = rt->backend();
  auto host = [&](const Tensor& t) { return to_host(t, backend); };
  auto on_backend = [&](const Tensor& t) { return rt->tensor(from_host(t, backend)); };
  Generator gen(options.seed);
  std::ostringstream detail;
  std::vector<EagerTensor> base(inputs.begin(), inputs.end());
  for (auto& b : base) b = b.detach();
  const EagerTensor y0 = f(base);
  for (int probe = 0; probe < options.probes; ++probe) {
    std::vector<Tensor> t(base.size());
    for (std::size_t i = 0; i < base.size(); ++i)
      if (is_inexact(base[i].dtype())) t[i] = random_like(base[i].value(), gen);
    const Tensor c = random_like(y0.value(), gen);

    // J t as the sum of per-input jvps (c128 on the host); J^T c per input via vjp.
    Tensor jt = zeros(y0.shape(), DType::C128);
    double adjoint_rhs = 0;
    for (std::size_t i = 0; i < base.size(); ++i) {
      if (!t[i].defined()) continue;
      auto fi = [&, i](const EagerTensor& xi) {
        std::vector<EagerTensor> args = base;
        args[i] = xi;
        return f(args);
      };
      auto j = jvp(fi, base[i], on_backend(t[i]));
      if (j.tangent) jt = axpy(jt, 1.0, host(j.tangent->value()));
      auto v = vjp(fi, base[i], on_backend(c));
      if (v.cotangent) adjoint_rhs += real_inner(host(v.cotangent->value()), t[i]);
    }
    // Central finite difference along all tangents at once.
    std::vector<EagerTensor> plus = base, minus = base;
    for (std::size_t i = 0; i < base.size(); ++i) {
      if (!t[i].defined()) continue;
      const Tensor x = host(base[i].value());
      plus[i] = on_backend(axpy(x, options.eps, t[i]));
      minus[i] = on_backend(axpy(x, -options.eps, t[i]));
    }
    const Tensor fd_diff = axpy(axpy(zeros(y0.shape(), DType::C128), 1.0, host(f(plus).value())),
                                -1.0, host(f(minus).value()));
    const Tensor fd = axpy(zeros(y0.shape(), DType::C128), 0.5 / options.eps, fd_diff);
    const double scale = std::max(1.0, max_abs(jt));
    const double fd_err = max_abs_diff(jt, fd) / scale;
    result.max_fd_error = std::max(result.max_fd_error, fd_err);
    if (!(fd_err <= options.atol + options.rtol)) {
      result.ok = false;
      detail << "probe " << probe << ": jvp differs from finite differences by " << fd_err
             << " (relative); ";
    }
    const double lhs = real_inner(c, jt);
    const double adj_err =
        std::fabs(lhs - adjoint_rhs) / std::max({1.0, std::fabs(lhs), std::fabs(adjoint_rhs)});
    result.max_adjoint_error = std::max(result.max_adjoint_error, adj_err);
    if (!(adj_err <= options.atol + options.rtol)) {
      result.ok = false;
      detail << "probe " << probe << ": Re<c, J t> = " << lhs
             << " but Re<J^T c, t> = " << adjoint_rhs << "; ";
    }
  }
  result.detail = detail.str();
  return result;
}

}  // namespace tenferro
