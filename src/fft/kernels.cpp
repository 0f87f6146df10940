// The FFTW kernels of the transform node. Plans are created once per
// (transform, lengths, strides, batch layout, sign, precision) under one
// planner mutex (FFTW's planner is not thread-safe) and kept in the runtime's
// extension cache (bounded, LRU, clearable: kPlanCache of the family);
// execution uses FFTW's new-array interface on a cached plan (planned
// FFTW_UNALIGNED, so any buffer alignment is fine) and is not serialised.

#include <fftw3.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <map>
#include <mutex>

#include "fft/common.hpp"

namespace tenferro::fft::detail {
namespace {

constexpr unsigned kFlags = FFTW_ESTIMATE | FFTW_UNALIGNED;
// A nominal size per cached plan (FFTW does not report a plan's memory).
constexpr std::size_t kPlanBytes = 4096;

std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

template <class R>
struct Fftw;

template <>
struct Fftw<double> {
  using Plan = fftw_plan;
  using Cpx = fftw_complex;
  static Plan c2c(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* h, Cpx* i, Cpx* o,
                  int sign) {
    return fftw_plan_guru64_dft(r, d, hr, h, i, o, sign, kFlags);
  }
  static Plan r2c(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* h, double* i, Cpx* o) {
    return fftw_plan_guru64_dft_r2c(r, d, hr, h, i, o, kFlags);
  }
  static Plan c2r(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* h, Cpx* i, double* o) {
    return fftw_plan_guru64_dft_c2r(r, d, hr, h, i, o, kFlags);
  }
  static void exec_c2c(Plan p, Cpx* i, Cpx* o) { fftw_execute_dft(p, i, o); }
  static void exec_r2c(Plan p, double* i, Cpx* o) { fftw_execute_dft_r2c(p, i, o); }
  static void exec_c2r(Plan p, Cpx* i, double* o) { fftw_execute_dft_c2r(p, i, o); }
  static void destroy(Plan p) { fftw_destroy_plan(p); }
};

template <>
struct Fftw<float> {
  using Plan = fftwf_plan;
  using Cpx = fftwf_complex;
  static Plan c2c(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* h, Cpx* i, Cpx* o,
                  int sign) {
    return fftwf_plan_guru64_dft(r, d, hr, h, i, o, sign, kFlags);
  }
  static Plan r2c(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* h, float* i, Cpx* o) {
    return fftwf_plan_guru64_dft_r2c(r, d, hr, h, i, o, kFlags);
  }
  static Plan c2r(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* h, Cpx* i, float* o) {
    return fftwf_plan_guru64_dft_c2r(r, d, hr, h, i, o, kFlags);
  }
  static void exec_c2c(Plan p, Cpx* i, Cpx* o) { fftwf_execute_dft(p, i, o); }
  static void exec_r2c(Plan p, float* i, Cpx* o) { fftwf_execute_dft_r2c(p, i, o); }
  static void exec_c2r(Plan p, Cpx* i, float* o) { fftwf_execute_dft_c2r(p, i, o); }
  static void destroy(Plan p) { fftwf_destroy_plan(p); }
};

// A plan owned by the runtime's extension cache ("fftw_plans"): destroyed
// under the planner mutex when the cache evicts or clears it and the last
// kernel using it has finished (shared ownership).
template <class R>
struct PlanHolder {
  typename Fftw<R>::Plan plan;
  explicit PlanHolder(typename Fftw<R>::Plan p) : plan(p) {}
  ~PlanHolder() {
    std::lock_guard<std::mutex> lock(planner_mutex());
    Fftw<R>::destroy(plan);
  }
  PlanHolder(const PlanHolder&) = delete;
  PlanHolder& operator=(const PlanHolder&) = delete;
};

// key: transform kind, sign, then (n, is, os) of every dim and batch dim.
template <class R, class Make>
std::shared_ptr<const PlanHolder<R>> cached_plan(ExtensionCaches& caches,
                                                 const std::vector<std::int64_t>& key, Make make) {
  std::string disc = std::is_same_v<R, float> ? "f" : "d";
  for (const std::int64_t k : key) disc += tenferro::detail::cat(":", k);
  return caches.get_or_put<PlanHolder<R>>(kPlanCache, disc, kPlanBytes, [&] {
    std::lock_guard<std::mutex> lock(planner_mutex());
    auto plan = make();
    if (plan == nullptr) fail(ErrorKind::Internal, "fft", "FFTW could not plan the transform");
    return std::make_shared<const PlanHolder<R>>(plan);
  });
}

std::vector<std::int64_t> col_strides(const Shape& s) {
  std::vector<std::int64_t> st(s.size());
  std::int64_t acc = 1;
  for (std::size_t i = 0; i < s.size(); ++i) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

std::int64_t numel_of(const Shape& s) {
  std::int64_t n = 1;
  for (const auto e : s) n *= e;
  return n;
}

// dims over `axes` (in that order) and batch dims over the others, for an
// input of shape `in` and an output of shape `out` (both compact).
struct Layout {
  std::vector<fftw_iodim64> dims, batch;
};
// `in_strides` (empty: compact) lets the c2c and r2c kernels read strided
// inputs in place through FFTW's guru interface.
Layout layout(const Shape& in, const Shape& out, const std::vector<std::int64_t>& axes,
              const Shape& logical, const Strides& in_strides = {}) {
  const auto so = col_strides(out);
  const std::vector<std::int64_t> si =
      in_strides.empty() ? col_strides(in)
                         : std::vector<std::int64_t>(in_strides.begin(), in_strides.end());
  Layout l;
  for (const std::int64_t a : axes) {
    const auto k = static_cast<std::size_t>(a);
    l.dims.push_back({logical[k], si[k], so[k]});
  }
  for (std::size_t k = 0; k < in.size(); ++k) {
    if (std::find(axes.begin(), axes.end(), static_cast<std::int64_t>(k)) != axes.end()) continue;
    if (in[k] == 1) continue;
    l.batch.push_back({in[k], si[k], so[k]});
  }
  return l;
}

template <class R>
std::vector<std::int64_t> plan_key(int kind, int sign, const Layout& l) {
  std::vector<std::int64_t> key{kind, sign, static_cast<std::int64_t>(l.dims.size())};
  for (const auto& d : l.dims) key.insert(key.end(), {d.n, d.is, d.os});
  for (const auto& d : l.batch) key.insert(key.end(), {d.n, d.is, d.os});
  return key;
}

template <class R>
using C = std::complex<R>;

// out = DFT over `axes` of in (both compact of shape `shape`); copies when
// `axes` is empty.
template <class R>
void c2c(ExtensionCaches& caches, const Shape& shape, const std::vector<std::int64_t>& axes,
         const C<R>* in, C<R>* out, int sign, const Strides& in_strides = {}) {
  const std::int64_t total = numel_of(shape);
  if (total == 0) return;
  if (axes.empty()) {  // only for compact inputs (the r2c / c2r remainders)
    std::copy(in, in + total, out);
    return;
  }
  const Layout l = layout(shape, shape, axes, shape, in_strides);
  using F = Fftw<R>;
  auto* i = reinterpret_cast<typename F::Cpx*>(const_cast<C<R>*>(in));
  auto* o = reinterpret_cast<typename F::Cpx*>(out);
  const auto p = cached_plan<R>(caches, plan_key<R>(0, sign, l), [&] {
    return F::c2c(static_cast<int>(l.dims.size()), l.dims.data(), static_cast<int>(l.batch.size()),
                  l.batch.data(), i, o, sign);
  });
  F::exec_c2c(p->plan, i, o);
}

// The half spectrum (axis halved to n / 2 + 1) of a real compact input, exponent -.
template <class R>
void r2c(ExtensionCaches& caches, const Shape& in_shape, std::int64_t axis, const R* in, C<R>* out,
         const Strides& in_strides = {}) {
  Shape out_shape = in_shape;
  out_shape[static_cast<std::size_t>(axis)] = in_shape[static_cast<std::size_t>(axis)] / 2 + 1;
  if (numel_of(in_shape) == 0) return;
  const Layout l = layout(in_shape, out_shape, {axis}, in_shape, in_strides);
  using F = Fftw<R>;
  auto* i = const_cast<R*>(in);
  auto* o = reinterpret_cast<typename F::Cpx*>(out);
  const auto p = cached_plan<R>(caches, plan_key<R>(1, -1, l), [&] {
    return F::r2c(1, l.dims.data(), static_cast<int>(l.batch.size()), l.batch.data(), i, o);
  });
  F::exec_r2c(p->plan, i, o);
}

// The real signal (exponent +) of a half spectrum; `in` is destroyed.
template <class R>
void c2r(ExtensionCaches& caches, const Shape& out_shape, std::int64_t axis, C<R>* in, R* out) {
  Shape in_shape = out_shape;
  in_shape[static_cast<std::size_t>(axis)] = out_shape[static_cast<std::size_t>(axis)] / 2 + 1;
  if (numel_of(out_shape) == 0) return;
  const Layout l = layout(in_shape, out_shape, {axis}, out_shape);
  using F = Fftw<R>;
  auto* i = reinterpret_cast<typename F::Cpx*>(in);
  const auto p = cached_plan<R>(caches, plan_key<R>(2, 1, l), [&] {
    return F::c2r(1, l.dims.data(), static_cast<int>(l.batch.size()), l.batch.data(), i, out);
  });
  F::exec_c2r(p->plan, i, out);
}

// [pre, m, post] view of a compact shape around `axis`.
struct Split {
  std::int64_t pre = 1, m = 1, post = 1;
};
Split split(const Shape& s, std::int64_t axis) {
  Split v;
  for (std::int64_t k = 0; k < static_cast<std::int64_t>(s.size()); ++k) {
    if (k < axis) v.pre *= s[static_cast<std::size_t>(k)];
    if (k > axis) v.post *= s[static_cast<std::size_t>(k)];
  }
  v.m = s[static_cast<std::size_t>(axis)];
  return v;
}

template <class T>
void scale_by(T* p, std::int64_t n, double s) {
  if (s == 1.0) return;
  using R = decltype(std::real(T{}));
  for (std::int64_t i = 0; i < n; ++i) p[i] *= static_cast<R>(s);
}

template <class R>
void conj_in_place(C<R>* p, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) p[i] = std::conj(p[i]);
}

template <class R>
Tensor run(const FftParams& p, const Tensor& xin, Backend& backend, ExtensionCaches& caches) {
  // c2c and r2c read any strides in place; the other kinds copy compactly.
  const bool in_place_read =
      (p.kind == Kind::C2C && !p.axes.empty()) || p.kind == Kind::R2C || p.kind == Kind::C2R_ADJ;
  const Tensor x = xin.is_contiguous() || in_place_read ? xin : [&] {
    Tensor c = backend.empty(xin.shape(), xin.dtype());
    Tensor::copy_into(xin, c);
    return c;
  }();
  const Shape& in_shape = x.shape();
  const DType cdt = std::is_same_v<R, float> ? DType::C64 : DType::C128;
  const DType rdt = std::is_same_v<R, float> ? DType::F32 : DType::F64;
  const std::vector<std::int64_t> rest(p.axes.begin() + (p.kind == Kind::C2C ? 0 : 1),
                                       p.axes.end());
  const std::int64_t a0 = p.axes.empty() ? 0 : p.axes[0];
  switch (p.kind) {
    case Kind::C2C: {
      Tensor out = backend.empty(in_shape, cdt);
      auto* o = static_cast<C<R>*>(out.raw_data());
      c2c<R>(caches, in_shape, p.axes, static_cast<const C<R>*>(x.raw_data()), o, p.sign,
             x.strides());
      scale_by(o, out.numel(), p.scale);
      return out;
    }
    case Kind::R2C:
    case Kind::C2R_ADJ: {
      Shape half = in_shape;
      half[static_cast<std::size_t>(a0)] = p.n / 2 + 1;
      std::vector<C<R>> tmp(static_cast<std::size_t>(numel_of(half)));
      r2c<R>(caches, in_shape, a0, static_cast<const R*>(x.raw_data()), tmp.data(), x.strides());
      if (p.sign > 0) conj_in_place(tmp.data(), static_cast<std::int64_t>(tmp.size()));
      if (p.kind == Kind::C2R_ADJ) {
        // The bins that c2r counts twice (1 .. n - m): its adjoint doubles them.
        const Split v = split(half, a0);
        const std::int64_t twice = p.n - v.m;
        for (std::int64_t q = 0; q < v.post; ++q)
          for (std::int64_t j = 1; j <= twice; ++j)
            for (std::int64_t i = 0; i < v.pre; ++i) tmp[(i + v.pre * (j + v.m * q))] *= R(2);
      }
      Tensor out = backend.empty(half, cdt);
      auto* o = static_cast<C<R>*>(out.raw_data());
      c2c<R>(caches, half, rest, tmp.data(), o, p.sign);
      scale_by(o, out.numel(), p.scale);
      return out;
    }
    case Kind::C2R: {
      Shape full = in_shape;
      full[static_cast<std::size_t>(a0)] = p.n;
      std::vector<C<R>> tmp(static_cast<std::size_t>(numel_of(in_shape)));
      c2c<R>(caches, in_shape, rest, x.data<C<R>>(), tmp.data(), p.sign);
      if (p.sign < 0) conj_in_place(tmp.data(), static_cast<std::int64_t>(tmp.size()));
      Tensor out = backend.empty(full, rdt);
      auto* o = static_cast<R*>(out.raw_data());
      c2r<R>(caches, full, a0, tmp.data(), o);
      scale_by(o, out.numel(), p.scale);
      return out;
    }
    case Kind::R2C_ADJ: {
      Shape full = in_shape;
      full[static_cast<std::size_t>(a0)] = p.n;
      const Split vi = split(in_shape, a0);
      std::vector<C<R>> padded(static_cast<std::size_t>(numel_of(full)));
      const C<R>* src = x.data<C<R>>();
      for (std::int64_t q = 0; q < vi.post; ++q)
        for (std::int64_t j = 0; j < vi.m; ++j)
          for (std::int64_t i = 0; i < vi.pre; ++i)
            padded[i + vi.pre * (j + p.n * q)] = src[i + vi.pre * (j + vi.m * q)];
      std::vector<C<R>> spec(padded.size());
      c2c<R>(caches, full, p.axes, padded.data(), spec.data(), p.sign);
      Tensor out = backend.empty(full, rdt);
      auto* o = static_cast<R*>(out.raw_data());
      for (std::size_t k = 0; k < spec.size(); ++k) o[k] = spec[k].real();
      scale_by(o, out.numel(), p.scale);
      return out;
    }
  }
  fail(ErrorKind::Internal, "fft", "unknown transform kind");
}

}  // namespace

void c2c_in_place(Tensor& x, const std::vector<std::int64_t>& axes, int sign, double scale,
                  ExtensionCaches& caches) {
  auto body = [&]<class R>() {
    const Shape& shape = x.shape();
    if (numel_of(shape) == 0) return;
    auto* data = x.mutable_data<C<R>>();
    const Layout l = layout(shape, shape, axes, shape);
    using F = Fftw<R>;
    auto* io = reinterpret_cast<typename F::Cpx*>(data);
    const auto p = cached_plan<R>(caches, plan_key<R>(3, sign, l), [&] {  // 3: in place
      return F::c2c(static_cast<int>(l.dims.size()), l.dims.data(),
                    static_cast<int>(l.batch.size()), l.batch.data(), io, io, sign);
    });
    F::exec_c2c(p->plan, io, io);
    scale_by(data, numel_of(shape), scale);
  };
  if (x.dtype() == DType::C64) {
    body.template operator()<float>();
  } else {
    body.template operator()<double>();
  }
}

Tensor run_transform(const FftParams& p, const Tensor& x, Backend& backend,
                     ExtensionCaches& caches) {
  const DType d = x.dtype();
  if (d == DType::F32 || d == DType::C64) return run<float>(p, x, backend, caches);
  return run<double>(p, x, backend, caches);
}

}  // namespace tenferro::fft::detail
