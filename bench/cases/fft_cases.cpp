// Group 12 of the peer suite: c128 fft and f64 rfft at 2^20, 128 transforms
// of 1024 points (axis 0 of a [1024, 128] tensor) and a 128^3 c128 fftn,
// through the eager tier on untracked tensors of a runtime held across calls
// (its extension cache keeps the FFTW plans, as a user's runtime does; the
// direct tier makes a runtime per call and so re-plans every call, which
// costs FFTW's twiddle set-up: about 10 ms for an r2c of 2^20). Our results are checked before
// timing against a naive DFT at the probed positions. The floor column is FFTW called directly
// (impl "fftw"): the same transform planned with the same flags as the family
// (FFTW_ESTIMATE, threads = the run's thread count) on fftw_malloc'd arrays in
// the same layout, out of place, timing fftw_execute only. The "-measure"
// variants plan with PlanningEffort::Measure and FFTW_MEASURE instead (the
// peers' times are those of the plain rows: they do not plan).

#include "fft_cases.hpp"

#include <fftw3.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

#include "tenferro/fft/fft.hpp"

namespace bench_fft {

using namespace tenferro;
namespace tf = tenferro::fft;
using cd = std::complex<double>;

namespace {

// Complex input number `off` of `count` elements: the interleaved real and
// imaginary parts are bench::input_vector(2 count, off) (the peers view the
// same doubles as complex128).
std::vector<cd> complex_input(std::int64_t count, std::int64_t off) {
  const std::vector<double> v = bench::input_vector(2 * count, off);
  std::vector<cd> c(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) c[i] = cd(v[2 * i], v[2 * i + 1]);
  return c;
}

// exp(-2 pi i t / n) for t = 0 .. n - 1.
std::vector<cd> twiddles(std::int64_t n) {
  std::vector<cd> w(static_cast<std::size_t>(n));
  for (std::int64_t t = 0; t < n; ++t) {
    const double a = -2.0 * std::numbers::pi * static_cast<double>(t) / static_cast<double>(n);
    w[t] = cd(std::cos(a), std::sin(a));
  }
  return w;
}

// Part q % 2 of complex element q / 2 (the flat double memory of a result).
double part(cd v, std::int64_t q) {
  return q % 2 == 0 ? v.real() : v.imag();
}

// The floor: `plan` executed on its own arrays (both fftw_malloc'd).
struct FloorPlan {
  fftw_plan plan = nullptr;
  ~FloorPlan() {
    if (plan != nullptr) fftw_destroy_plan(plan);
  }
};

struct FftwArrays {
  void* in;
  void* out;
  FftwArrays(std::size_t in_bytes, std::size_t out_bytes)
      : in(fftw_malloc(in_bytes)), out(fftw_malloc(out_bytes)) {}
  ~FftwArrays() {
    fftw_free(in);
    fftw_free(out);
  }
  FftwArrays(const FftwArrays&) = delete;
  FftwArrays& operator=(const FftwArrays&) = delete;
};

}  // namespace

void run_cases(const bench::Options& o, CpuBackend& /*cpu*/, const Runner& run,
               const FloorRunner& floor) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = o.threads});
  // The family plans with the backend's thread count; so does the floor.
  fftw_init_threads();
  fftw_plan_with_nthreads(o.threads);
  const auto floor_c2c = [&](const std::string& name, const std::string& size,
                             const std::string& variant, const std::vector<cd>& x, int rank,
                             const int* n, int howmany, int dist, unsigned flags = FFTW_ESTIMATE) {
    if (!bench::selected(o, bench::case_id(name, size, variant))) return;
    FftwArrays a(x.size() * sizeof(cd), x.size() * sizeof(cd));
    auto* in = static_cast<fftw_complex*>(a.in);
    auto* out = static_cast<fftw_complex*>(a.out);
    FloorPlan p;
    p.plan = fftw_plan_many_dft(rank, n, howmany, in, nullptr, 1, dist, out, nullptr, 1, dist,
                                FFTW_FORWARD, flags);
    std::copy(x.begin(), x.end(), reinterpret_cast<cd*>(in));  // after planning (MEASURE writes)
    floor(name, size, variant, [&] { fftw_execute(p.plan); });
  };

  // ---- c128 fft at 2^20 ----------------------------------------------------------------
  {
    const std::int64_t n = std::int64_t{1} << 20;
    const std::vector<cd> x = complex_input(n, 1);
    const EagerTensor X = rt->tensor(Tensor::from_col_major(Shape{n}, x));
    const std::vector<cd> w = twiddles(n);
    // The DFT at probed position q (part q % 2 of bin q / 2).
    const auto dft = [&](std::int64_t q) {
      const std::int64_t k = q / 2;
      cd s = 0;
      for (std::int64_t j = 0; j < n; ++j) s += x[j] * w[(j * k) % n];
      return part(s, q);
    };
    run(
        "fft", "2^20", "c128", [&] { return tf::fft(X).value(); }, dft);
    const int ni = static_cast<int>(n);
    floor_c2c("fft", "2^20", "c128", x, 1, &ni, 1, ni);
    // The same with plans measured (PlanningEffort::Measure, FFTW_MEASURE on
    // both sides): planning happens at the first, untimed call.
    run(
        "fft", "2^20", "c128-measure",
        [&] {
          const tf::PlanningEffortScope measured(tf::PlanningEffort::Measure);
          return tf::fft(X).value();
        },
        dft);
    floor_c2c("fft", "2^20", "c128-measure", x, 1, &ni, 1, ni, FFTW_MEASURE);
  }
  // ---- f64 rfft at 2^20 ----------------------------------------------------------------
  {
    const std::int64_t n = std::int64_t{1} << 20;
    const std::vector<double> x = bench::input_vector(n, 1);
    const EagerTensor X = rt->tensor(Tensor::from_col_major(Shape{n}, x));
    const std::vector<cd> w = twiddles(n);
    const auto dft = [&](std::int64_t q) {
      const std::int64_t k = q / 2;
      cd s = 0;
      for (std::int64_t j = 0; j < n; ++j) s += x[j] * w[(j * k) % n];
      return part(s, q);
    };
    run(
        "rfft", "2^20", "f64", [&] { return tf::rfft(X).value(); }, dft);
    // The floor: FFTW's r2c planned with `flags`, out of place.
    const auto floor_r2c = [&](const std::string& variant, unsigned flags) {
      if (!bench::selected(o, bench::case_id("rfft", "2^20", variant))) return;
      FftwArrays a(n * sizeof(double), (n / 2 + 1) * sizeof(cd));
      auto* in = static_cast<double*>(a.in);
      auto* out = static_cast<fftw_complex*>(a.out);
      FloorPlan p;
      p.plan = fftw_plan_dft_r2c_1d(static_cast<int>(n), in, out, flags);
      std::copy(x.begin(), x.end(), in);  // after planning (MEASURE writes)
      floor("rfft", "2^20", variant, [&] { fftw_execute(p.plan); });
    };
    floor_r2c("f64", FFTW_ESTIMATE);
    run(
        "rfft", "2^20", "f64-measure",
        [&] {
          const tf::PlanningEffortScope measured(tf::PlanningEffort::Measure);
          return tf::rfft(X).value();
        },
        dft);
    floor_r2c("f64-measure", FFTW_MEASURE);
  }
  // ---- 128 transforms of 1024 points: axis 0 of [1024, 128] -----------------------------
  {
    const std::int64_t m = 1024, b = 128;
    const std::vector<cd> x = complex_input(m * b, 1);
    const EagerTensor X = rt->tensor(Tensor::from_col_major(Shape{m, b}, x));
    const std::vector<cd> w = twiddles(m);
    run(
        "fft", "1024x128", "axis0", [&] { return tf::fft(X).value(); },
        [&](std::int64_t q) {
          const std::int64_t e = q / 2, k = e % m, col = e / m;
          cd s = 0;
          for (std::int64_t j = 0; j < m; ++j) s += x[j + m * col] * w[(j * k) % m];
          return part(s, q);
        });
    const int mi = static_cast<int>(m);
    floor_c2c("fft", "1024x128", "axis0", x, 1, &mi, static_cast<int>(b), mi);
  }
  // ---- c128 fftn over 128^3 -------------------------------------------------------------
  {
    const std::int64_t m = 128;
    const std::vector<cd> x = complex_input(m * m * m, 1);
    const EagerTensor X = rt->tensor(Tensor::from_col_major(Shape{m, m, m}, x));
    const std::vector<cd> w = twiddles(m);
    run(
        "fftn", "128^3", "c128", [&] { return tf::fftn(X).value(); },
        [&](std::int64_t q) {
          const std::int64_t e = q / 2, k0 = e % m, k1 = (e / m) % m, k2 = e / (m * m);
          cd s = 0;
          for (std::int64_t j2 = 0; j2 < m; ++j2)
            for (std::int64_t j1 = 0; j1 < m; ++j1)
              for (std::int64_t j0 = 0; j0 < m; ++j0)
                s += x[j0 + m * (j1 + m * j2)] * w[(j0 * k0 + j1 * k1 + j2 * k2) % m];
          return part(s, q);
        });
    const int dims[3] = {static_cast<int>(m), static_cast<int>(m), static_cast<int>(m)};
    floor_c2c("fftn", "128^3", "c128", x, 3, dims, 1, static_cast<int>(m * m * m));
  }
}

}  // namespace bench_fft
