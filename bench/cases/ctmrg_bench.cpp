// Group 19 of the benchmark suite (bench/driver.py): the gradient d(ln Z/N)/d
// beta of the 2D Ising model's CTMRG environment (examples/ctmrg_ising), at
// its fixed point, taken two ways from the same iterations in the eager tier:
//   implicit  the plain loop to convergence (nothing recorded), then
//             tenferro::fixed_point at the result: the implicit derivative
//             solves (I - df/dx)^T lambda = ybar by iteration;
//   unrolled  every iteration recorded from the initial environment (as many
//             as the plain loop took) and backpropagated through;
//   value     the plain loop and ln Z alone (the forward cost and the
//             process's baseline memory).
// One case per process, so that the peak RSS (getrusage) is the case's own.
// Prints one JSON line: the harness's fields plus iterations, peak_rss_mb
// and the gradient (the driver checks implicit against unrolled).
//
//   ctmrg_bench --chi N --variant implicit|unrolled|value [--temperature T] [--quick|--smoke]

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ctmrg.hpp"
#include "harness.hpp"
#include "tenferro/tenferro.hpp"

namespace tf = tenferro;

namespace {

struct Setup {
  bench::Options timing;
  std::int64_t chi = 16;
  std::string variant = "implicit";
  double temperature = 2.5;
  double tol = 1e-10;
  std::int64_t max_iter = 5000;
};

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s --chi N --variant implicit|unrolled|value [--temperature T] "
               "[--quick|--smoke]\n",
               argv0);
  std::exit(2);
}

Setup parse(int argc, char** argv) {
  Setup s;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(argv[0]);
      return argv[++i];
    };
    if (a == "--chi") {
      s.chi = std::atoll(value().c_str());
    } else if (a == "--variant") {
      s.variant = value();
    } else if (a == "--temperature") {
      s.temperature = std::atof(value().c_str());
    } else if (a == "--quick") {
      s.timing.quick = true;
    } else if (a == "--smoke") {
      s.timing.smoke = true;
    } else {
      usage(argv[0]);
    }
  }
  if (s.chi < 2 || !(s.temperature > 0) ||
      (s.variant != "implicit" && s.variant != "unrolled" && s.variant != "value"))
    usage(argv[0]);
  return s;
}

double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

// The environment iterated without recording until the update is below tol.
std::vector<tf::EagerTensor> converge(const tf::EagerRuntimePtr& rt, const Setup& s,
                                      const ctmrg::CtmrgOptions& options, bool ordered,
                                      std::int64_t& iterations) {
  const tf::NoGradGuard no_grad;
  const tf::EagerTensor b = rt->tensor(tf::Tensor::scalar(1.0 / s.temperature));
  const tf::EagerTensor a = ctmrg::site_tensors(b).a;
  std::vector<tf::EagerTensor> env = ctmrg::initial_environment(b, options, ordered);
  for (iterations = 1; iterations <= s.max_iter; ++iterations) {
    std::vector<tf::EagerTensor> next = ctmrg::ctmrg_step<tf::EagerTensor>(env, a, options);
    const double update = ctmrg::update_size<tf::EagerTensor>(next, env).item<double>();
    env = std::move(next);
    if (update <= s.tol) return env;
  }
  throw tf::Error(tf::ErrorKind::NoConvergence, "ctmrg_bench", "ctmrg_bench: no convergence");
}

}  // namespace

int main(int argc, char** argv) {
  const Setup s = parse(argc, argv);
  try {
    auto rt = tf::EagerRuntime::make_cpu(tf::CpuBackendOptions{.num_threads = 1});
    ctmrg::CtmrgOptions options;
    options.chi = s.chi;
    const double beta = 1.0 / s.temperature;
    const bool ordered = beta * 2.0 / std::log(1.0 + std::sqrt(2.0)) > 1.0;
    tf::FixedPointOptions fp;
    fp.tol = s.tol;
    fp.max_iter = s.max_iter;

    std::int64_t iterations = 0;
    double result = 0;
    const auto gradient = [&] {
      const std::vector<tf::EagerTensor> solution = converge(rt, s, options, ordered, iterations);
      const auto log_z = [&](const tf::EagerTensor& b) {
        const tf::EagerTensor a = ctmrg::site_tensors(b).a;
        std::vector<tf::EagerTensor> x;
        if (s.variant == "implicit") {
          const auto step = [&](std::span<const tf::EagerTensor> env,
                                std::span<const tf::EagerTensor> params) {
            return ctmrg::ctmrg_step(env, params[0], options);
          };
          x = tf::fixed_point(step, solution, {a}, fp).value;
        } else {
          x = ctmrg::initial_environment(b, options, ordered);
          for (std::int64_t i = 0; i < iterations; ++i)
            x = ctmrg::ctmrg_step<tf::EagerTensor>(x, a, options);
        }
        return ctmrg::log_z_per_site<tf::EagerTensor>(x, a);
      };
      if (s.variant == "value") {
        const tf::EagerTensor a = ctmrg::site_tensors(rt->tensor(tf::Tensor::scalar(beta))).a;
        result = ctmrg::log_z_per_site<tf::EagerTensor>(solution, a).item<double>();
      } else {
        result = tf::grad(log_z, rt->variable(tf::Tensor::scalar(beta))).item<double>();
      }
    };
    const bench::Stats st = bench::measure(s.timing, gradient);
    std::printf(
        "{\"case\":\"ctmrg_grad\",\"size\":\"chi%lld\",\"impl\":\"tenferro\",\"variant\":\"%s\","
        "\"threads\":1,\"median_ns\":%.1f,\"iqr_ns\":%.1f,\"temperature\":%g,\"iterations\":%lld,"
        "\"peak_rss_mb\":%.1f,\"result\":%.15g}\n",
        static_cast<long long>(s.chi), s.variant.c_str(), st.median_ns, st.iqr_ns, s.temperature,
        static_cast<long long>(iterations), peak_rss_mb(), result);
  } catch (const tf::Error& e) {
    std::fprintf(stderr, "ctmrg_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
