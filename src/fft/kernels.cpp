// The FFTW kernels of the transform node. Plans are created once per
// (transform, lengths, strides, batch layout, sign, precision, planning
// effort, thread count, SIMD alignment of the arrays) and kept in the
// runtime's extension cache (bounded, LRU, clearable: kPlanCache of the
// family). Every FFTW planner call (plan creation and destruction, thread
// setup, wisdom: planner.cpp) holds the one planner mutex, since FFTW's
// planner is not thread-safe; execution uses FFTW's new-array interface on a
// cached plan and is not serialised.
//
// Alignment: a plan for SIMD-aligned arrays (fftw_alignment_of == 0, true of
// the backend's buffers) is faster than an FFTW_UNALIGNED one (3x for short
// batched transforms), so both kinds exist and the key says which. Threads:
// transforms of at least kThreadedElements elements are planned with the
// backend's thread count (FFTW splits the transform or its batch loop), smaller
// ones with one thread. Efforts other than estimate overwrite the arrays while
// planning, so they plan on scratch arrays of the same layout and alignment.

#include <fftw3.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <map>
#include <mutex>

#include "fft/common.hpp"

namespace tenferro::fft::detail {
namespace {

// A nominal size per cached plan (FFTW does not report a plan's memory).
constexpr std::size_t kPlanBytes = 4096;
constexpr std::int64_t kThreadedElements = std::int64_t{1} << 15;

// How a plan is made: the planner flags and the thread count.
struct PlanConfig {
  unsigned flags = FFTW_ESTIMATE;
  int threads = 1;
  bool aligned = false;
};

template <class R>
struct Fftw;

template <>
struct Fftw<double> {
  using Plan = fftw_plan;
  using Cpx = fftw_complex;
  static Plan c2c(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* h, Cpx* i, Cpx* o,
                  int sign, unsigned f) {
    return fftw_plan_guru64_dft(r, d, hr, h, i, o, sign, f);
  }
  static Plan r2c(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* h, double* i, Cpx* o,
                  unsigned f) {
    return fftw_plan_guru64_dft_r2c(r, d, hr, h, i, o, f);
  }
  static Plan c2r(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* h, Cpx* i, double* o,
                  unsigned f) {
    return fftw_plan_guru64_dft_c2r(r, d, hr, h, i, o, f);
  }
  static void exec_c2c(Plan p, Cpx* i, Cpx* o) { fftw_execute_dft(p, i, o); }
  static void exec_r2c(Plan p, double* i, Cpx* o) { fftw_execute_dft_r2c(p, i, o); }
  static void exec_c2r(Plan p, Cpx* i, double* o) { fftw_execute_dft_c2r(p, i, o); }
  static void destroy(Plan p) { fftw_destroy_plan(p); }
  static void threads(int n) { fftw_plan_with_nthreads(n); }
  static bool aligned(const void* p) {
    return fftw_alignment_of(static_cast<double*>(const_cast<void*>(p))) == 0;
  }
};

template <>
struct Fftw<float> {
  using Plan = fftwf_plan;
  using Cpx = fftwf_complex;
  static Plan c2c(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* h, Cpx* i, Cpx* o,
                  int sign, unsigned f) {
    return fftwf_plan_guru64_dft(r, d, hr, h, i, o, sign, f);
  }
  static Plan r2c(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* h, float* i, Cpx* o,
                  unsigned f) {
    return fftwf_plan_guru64_dft_r2c(r, d, hr, h, i, o, f);
  }
  static Plan c2r(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* h, Cpx* i, float* o,
                  unsigned f) {
    return fftwf_plan_guru64_dft_c2r(r, d, hr, h, i, o, f);
  }
  static void exec_c2c(Plan p, Cpx* i, Cpx* o) { fftwf_execute_dft(p, i, o); }
  static void exec_r2c(Plan p, float* i, Cpx* o) { fftwf_execute_dft_r2c(p, i, o); }
  static void exec_c2r(Plan p, Cpx* i, float* o) { fftwf_execute_dft_c2r(p, i, o); }
  static void destroy(Plan p) { fftwf_destroy_plan(p); }
  static void threads(int n) { fftwf_plan_with_nthreads(n); }
  static bool aligned(const void* p) {
    return fftwf_alignment_of(static_cast<float*>(const_cast<void*>(p))) == 0;
  }
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

// Uninitialised SIMD-aligned scratch (fftw_malloc).
template <class T>
class Scratch {
 public:
  using value_type = T;
  explicit Scratch(std::int64_t count)
      : p_(static_cast<T*>(
            fftw_malloc(sizeof(T) * static_cast<std::size_t>(std::max<std::int64_t>(count, 1))))) {
    if (p_ == nullptr) {
      fail(ErrorKind::OutOfMemory, "fft", "could not allocate ", sizeof(T) * count,
           " bytes of FFT scratch");
    }
  }
  ~Scratch() { fftw_free(p_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  T* get() const { return p_; }

 private:
  T* p_;
};

// The plan config of a transform of `elements` elements on arrays `in`, `out`.
template <class R>
PlanConfig config_for(const KernelSettings& ks, std::int64_t elements, const void* in,
                      const void* out) {
  PlanConfig c;
  c.aligned = Fftw<R>::aligned(in) && Fftw<R>::aligned(out);
  c.flags = effort_flags(ks.effort) | (c.aligned ? 0u : unsigned(FFTW_UNALIGNED));
  c.threads = elements >= kThreadedElements ? std::max(1, ks.threads) : 1;
  return c;
}

// Before running a threaded plan: the CPU backend's idle pool workers sleep
// instead of competing with FFTW's threads.
void park_pool_for(const KernelSettings& ks, const PlanConfig& c) {
  if (c.threads > 1 && ks.cpu != nullptr) ks.cpu->park_threads();
}

// key: precision, flags, threads, then the transform's own key.
template <class R, class Make>
std::shared_ptr<const PlanHolder<R>> cached_plan(ExtensionCaches& caches, const PlanConfig& c,
                                                 const std::vector<std::int64_t>& key, Make make) {
  std::string disc =
      tenferro::detail::cat(std::is_same_v<R, float> ? "f" : "d", ":", c.flags, ":", c.threads);
  for (const std::int64_t k : key) disc += tenferro::detail::cat(":", k);
  return caches.get_or_put<PlanHolder<R>>(kPlanCache, disc, kPlanBytes, [&] {
    std::lock_guard<std::mutex> lock(planner_mutex());
    init_threads_locked();
    Fftw<R>::threads(c.threads);
    auto plan = make(c.flags);
    if (plan == nullptr) fail(ErrorKind::Internal, "fft", "FFTW could not plan the transform");
    return std::make_shared<const PlanHolder<R>>(plan);
  });
}

// The [lowest, highest] element offsets an iodim layout touches (input side
// when `input`), for scratch arrays of the same layout.
struct Span {
  std::int64_t lo = 0, hi = 0;
};
Span span_of(const std::vector<fftw_iodim64>& dims, const std::vector<fftw_iodim64>& batch,
             bool input) {
  Span s;
  for (const auto* v : {&dims, &batch}) {
    for (const auto& d : *v) {
      const std::int64_t step = (d.n - 1) * (input ? d.is : d.os);
      (step < 0 ? s.lo : s.hi) += step;
    }
  }
  return s;
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

// The arrays a plan is made on: the caller's under FFTW_ESTIMATE (which does
// not touch them), else scratch of the same layout and SIMD alignment (the
// other efforts run trial transforms that overwrite both arrays).
template <class TI, class TO>
struct PlanArrays {
  std::unique_ptr<Scratch<TI>> sin;
  std::unique_ptr<Scratch<TO>> sout;
  TI* in;
  TO* out;
  PlanArrays(unsigned flags, const Layout& l, TI* i, TO* o) : in(i), out(o) {
    if ((flags & FFTW_ESTIMATE) != 0) return;
    const auto make = [](const Span sp, auto& holder) {
      using T = typename std::remove_reference_t<decltype(*holder)>::value_type;
      const std::int64_t pad = (-sp.lo + 15) / 16 * 16;  // keeps the base 64-byte aligned
      holder = std::make_unique<Scratch<T>>(pad + sp.hi + 1);
      std::memset(static_cast<void*>(holder->get()), 0, sizeof(T) * (pad + sp.hi + 1));
      return holder->get() + pad;
    };
    in = make(span_of(l.dims, l.batch, true), sin);
    if (static_cast<const void*>(i) == static_cast<const void*>(o)) {
      out = reinterpret_cast<TO*>(in);
    } else {
      out = make(span_of(l.dims, l.batch, false), sout);
    }
  }
};

// out = DFT over `axes` of in (out compact of shape `shape`, in compact or
// of strides `in_strides`); copies when `axes` is empty (compact inputs only).
// in == out transforms in place (kind 3 in the key).
template <class R>
void c2c(ExtensionCaches& caches, const KernelSettings& ks, const Shape& shape,
         const std::vector<std::int64_t>& axes, const C<R>* in, C<R>* out, int sign,
         const Strides& in_strides = {}) {
  const std::int64_t total = numel_of(shape);
  if (total == 0) return;
  if (axes.empty()) {
    if (in != out) std::copy(in, in + total, out);
    return;
  }
  const Layout l = layout(shape, shape, axes, shape, in_strides);
  using F = Fftw<R>;
  auto* i = reinterpret_cast<typename F::Cpx*>(const_cast<C<R>*>(in));
  auto* o = reinterpret_cast<typename F::Cpx*>(out);
  const PlanConfig c = config_for<R>(ks, total, i, o);
  const auto p = cached_plan<R>(caches, c, plan_key<R>(i == o ? 3 : 0, sign, l), [&](unsigned f) {
    PlanArrays<typename F::Cpx, typename F::Cpx> a(f, l, i, o);
    return F::c2c(static_cast<int>(l.dims.size()), l.dims.data(), static_cast<int>(l.batch.size()),
                  l.batch.data(), a.in, a.out, sign, f);
  });
  park_pool_for(ks, c);
  F::exec_c2c(p->plan, i, o);
}

// The half spectrum (axis halved to n / 2 + 1) of a real input (compact or of
// strides `in_strides`) into a compact `out`, exponent -.
template <class R>
void r2c(ExtensionCaches& caches, const KernelSettings& ks, const Shape& in_shape,
         std::int64_t axis, const R* in, C<R>* out, const Strides& in_strides = {}) {
  Shape out_shape = in_shape;
  out_shape[static_cast<std::size_t>(axis)] = in_shape[static_cast<std::size_t>(axis)] / 2 + 1;
  if (numel_of(in_shape) == 0) return;
  const Layout l = layout(in_shape, out_shape, {axis}, in_shape, in_strides);
  using F = Fftw<R>;
  auto* i = const_cast<R*>(in);
  auto* o = reinterpret_cast<typename F::Cpx*>(out);
  const PlanConfig c = config_for<R>(ks, numel_of(in_shape), i, o);
  const auto p = cached_plan<R>(caches, c, plan_key<R>(1, -1, l), [&](unsigned f) {
    PlanArrays<R, typename F::Cpx> a(f, l, i, o);
    return F::r2c(1, l.dims.data(), static_cast<int>(l.batch.size()), l.batch.data(), a.in, a.out,
                  f);
  });
  park_pool_for(ks, c);
  F::exec_r2c(p->plan, i, o);
}

// The real signal (exponent +) of a compact half spectrum; `in` is destroyed.
template <class R>
void c2r(ExtensionCaches& caches, const KernelSettings& ks, const Shape& out_shape,
         std::int64_t axis, C<R>* in, R* out) {
  Shape in_shape = out_shape;
  in_shape[static_cast<std::size_t>(axis)] = out_shape[static_cast<std::size_t>(axis)] / 2 + 1;
  if (numel_of(out_shape) == 0) return;
  const Layout l = layout(in_shape, out_shape, {axis}, out_shape);
  using F = Fftw<R>;
  auto* i = reinterpret_cast<typename F::Cpx*>(in);
  const PlanConfig c = config_for<R>(ks, numel_of(out_shape), i, out);
  const auto p = cached_plan<R>(caches, c, plan_key<R>(2, 1, l), [&](unsigned f) {
    PlanArrays<typename F::Cpx, R> a(f, l, i, out);
    return F::c2r(1, l.dims.data(), static_cast<int>(l.batch.size()), l.batch.data(), a.in, a.out,
                  f);
  });
  park_pool_for(ks, c);
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
Tensor run(const FftParams& p, const Tensor& xin, Backend& backend, ExtensionCaches& caches,
           const KernelSettings& ks) {
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
      c2c<R>(caches, ks, in_shape, p.axes, static_cast<const C<R>*>(x.raw_data()), o, p.sign,
             x.strides());
      scale_by(o, out.numel(), p.scale);
      return out;
    }
    case Kind::R2C:
    case Kind::C2R_ADJ: {
      Shape half = in_shape;
      half[static_cast<std::size_t>(a0)] = p.n / 2 + 1;
      Tensor out = backend.empty(half, cdt);
      auto* o = static_cast<C<R>*>(out.raw_data());
      const std::int64_t count = numel_of(half);
      // With no other axis the half spectrum is written straight into out;
      // else into scratch that the DFT over the other axes reads.
      std::unique_ptr<Scratch<C<R>>> scratch;
      if (!rest.empty()) scratch = std::make_unique<Scratch<C<R>>>(count);
      C<R>* tmp = rest.empty() ? o : scratch->get();
      r2c<R>(caches, ks, in_shape, a0, static_cast<const R*>(x.raw_data()), tmp, x.strides());
      if (p.sign > 0) conj_in_place(tmp, count);
      if (p.kind == Kind::C2R_ADJ) {
        // The bins that c2r counts twice (1 .. n - m): its adjoint doubles them.
        const Split v = split(half, a0);
        const std::int64_t twice = p.n - v.m;
        for (std::int64_t q = 0; q < v.post; ++q)
          for (std::int64_t j = 1; j <= twice; ++j)
            for (std::int64_t i = 0; i < v.pre; ++i) tmp[(i + v.pre * (j + v.m * q))] *= R(2);
      }
      if (!rest.empty()) c2c<R>(caches, ks, half, rest, tmp, o, p.sign);
      scale_by(o, out.numel(), p.scale);
      return out;
    }
    case Kind::C2R: {
      Shape full = in_shape;
      full[static_cast<std::size_t>(a0)] = p.n;
      // c2r destroys its input: the (other-axes DFT of the) input goes to scratch.
      const std::int64_t count = numel_of(in_shape);
      Scratch<C<R>> tmp(count);
      c2c<R>(caches, ks, in_shape, rest, x.data<C<R>>(), tmp.get(), p.sign);
      if (p.sign < 0) conj_in_place(tmp.get(), count);
      Tensor out = backend.empty(full, rdt);
      auto* o = static_cast<R*>(out.raw_data());
      c2r<R>(caches, ks, full, a0, tmp.get(), o);
      scale_by(o, out.numel(), p.scale);
      return out;
    }
    case Kind::R2C_ADJ: {
      Shape full = in_shape;
      full[static_cast<std::size_t>(a0)] = p.n;
      const Split vi = split(in_shape, a0);
      const std::int64_t count = numel_of(full);
      Scratch<C<R>> padded(count);
      std::fill(padded.get(), padded.get() + count, C<R>(0));
      const C<R>* src = x.data<C<R>>();
      for (std::int64_t q = 0; q < vi.post; ++q)
        for (std::int64_t j = 0; j < vi.m; ++j)
          for (std::int64_t i = 0; i < vi.pre; ++i)
            padded.get()[i + vi.pre * (j + p.n * q)] = src[i + vi.pre * (j + vi.m * q)];
      c2c<R>(caches, ks, full, p.axes, padded.get(), padded.get(), p.sign);  // in place
      Tensor out = backend.empty(full, rdt);
      auto* o = static_cast<R*>(out.raw_data());
      for (std::int64_t k = 0; k < count; ++k) o[k] = padded.get()[k].real();
      scale_by(o, out.numel(), p.scale);
      return out;
    }
  }
  fail(ErrorKind::Internal, "fft", "unknown transform kind");
}

}  // namespace

void c2c_in_place(Tensor& x, const std::vector<std::int64_t>& axes, int sign, double scale,
                  ExtensionCaches& caches, const KernelSettings& ks) {
  auto body = [&]<class R>() {
    auto* data = x.mutable_data<C<R>>();
    c2c<R>(caches, ks, x.shape(), axes, data, data, sign);
    scale_by(data, numel_of(x.shape()), scale);
  };
  if (numel_of(x.shape()) == 0) return;
  if (x.dtype() == DType::C64) {
    body.template operator()<float>();
  } else {
    body.template operator()<double>();
  }
}

Tensor run_transform(const FftParams& p, const Tensor& x, Backend& backend,
                     ExtensionCaches& caches) {
  const KernelSettings ks = settings_for(backend);
  const DType d = x.dtype();
  if (d == DType::F32 || d == DType::C64) return run<float>(p, x, backend, caches, ks);
  return run<double>(p, x, backend, caches, ks);
}

}  // namespace tenferro::fft::detail
