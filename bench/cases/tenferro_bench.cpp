// Our side of the peer benchmark suite (driven by bench/driver.py through
// `./run bench`). One JSON line per case (see harness.hpp). Every result is
// also checked against a naive reference at the probed positions before it is
// timed; a mismatch is reported on stderr and makes the exit status 1.
//
//   tenferro_bench [--smoke] [--quick] [--threads N] [--cases case/size/variant,...]

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <numbers>
#include <string>
#include <thread>
#include <vector>

#include "einsum_cases.hpp"
#include "fft_cases.hpp"
#include "harness.hpp"
#include "linalg_cases.hpp"
#include "scan_sort_cases.hpp"
#include "tenferro/ad/eager.hpp"
#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/transforms.hpp"
#include "tenferro/runtime/simple_family.hpp"
#include "tenferro/tenferro.hpp"
#include "tropical_cases.hpp"

namespace {

using namespace tenferro;
using bench::input_vector;
using bench::Options;

Tensor make_input(const std::vector<std::int64_t>& shape, std::int64_t off) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  const Shape s(shape.begin(), shape.end());
  return Tensor::from_col_major(s, input_vector(n, off));
}

class Suite {
 public:
  explicit Suite(Options o)
      : o_(std::move(o)), cpu_(CpuBackendOptions{.num_threads = o_.threads}) {}

  int failures() const { return failures_; }

  /// Runs one case: `op` produces the result (it is also the timed call);
  /// `ref(q)` is the naive value at flat position q; per_unit divides the time.
  void run(const std::string& name, const std::string& size, const std::string& variant,
           const std::function<Tensor()>& op, const std::function<double(std::int64_t)>& ref,
           double per_unit = 1.0) {
    if (!bench::selected(o_, bench::case_id(name, size, variant))) return;
    std::fprintf(stderr, "  tenferro %s %s %s (%dT)\n", name.c_str(), size.c_str(), variant.c_str(),
                 o_.threads);
    const Tensor r = op().contiguous();
    // A complex result is checked as its memory: interleaved real, imaginary.
    const std::int64_t count = is_complex(r.dtype()) ? 2 * r.numel() : r.numel();
    const auto* mem =
        is_complex(r.dtype()) ? static_cast<const double*>(r.raw_data()) : r.data<double>();
    const auto check = bench::make_check(mem, count);
    verify(name, size, variant, check, bench::probe_positions(count), ref);
    const bench::Stats st = bench::measure(o_, [&] { (void)op(); });
    bench::emit("tenferro", name, size, variant, o_.threads, st, check, per_unit);
  }

  /// As run(), for a case with several results (a traced program's outputs):
  /// the check covers their flat memories one after another, and `ref(q)` is
  /// the naive value at position q of that concatenation.
  void run_many(const std::string& name, const std::string& size, const std::string& variant,
                const std::function<std::vector<Tensor>()>& op,
                const std::function<double(std::int64_t)>& ref) {
    if (!bench::selected(o_, bench::case_id(name, size, variant))) return;
    std::fprintf(stderr, "  tenferro %s %s %s (%dT)\n", name.c_str(), size.c_str(), variant.c_str(),
                 o_.threads);
    std::vector<double> flat;
    for (const Tensor& r : op()) {
      const Tensor c = r.contiguous();
      flat.insert(flat.end(), c.data<double>(), c.data<double>() + c.numel());
    }
    const auto n = static_cast<std::int64_t>(flat.size());
    const auto check = bench::make_check(flat.data(), n);
    verify(name, size, variant, check, bench::probe_positions(n), ref);
    const bench::Stats st = bench::measure(o_, [&] { (void)op(); });
    bench::emit("tenferro", name, size, variant, o_.threads, st, check);
  }

  void matmul_cases();
  void traced_cases();
  void elementwise_cases();
  void reduction_cases();
  void permute_cases();
  void overhead_cases();
  void autodiff_cases();
  void special_cases();
  void scan_sort_cases() {
    bench_scan_sort::run_cases(
        cpu_,
        [this](const std::string& name, const std::string& size, const std::string& variant,
               const std::function<Tensor()>& op, const std::function<double(std::int64_t)>& ref) {
          run(name, size, variant, op, ref);
        });
  }
  void linalg_cases() {
    bench_linalg::run_cases(o_, cpu_, runner(), floor_runner("lapack"));
    bench_linalg::run_traced_cases(
        o_, [this](const std::string& name, const std::string& size, const std::string& variant,
                   const std::function<std::vector<Tensor>()>& op,
                   const std::function<double(std::int64_t)>& ref) {
          run_many(name, size, variant, op, ref);
        });
  }
  void fft_cases() { bench_fft::run_cases(o_, cpu_, runner(), floor_runner("fftw")); }
  void einsum_cases() { bench_einsum::run_cases(o_, cpu_, runner(), floor_runner("blas")); }
  void tropical_cases() { failures_ += bench_tropical::run_cases(o_, cpu_, floor_runner("blas")); }

 private:
  bench_linalg::Runner runner() {
    return
        [this](const std::string& name, const std::string& size, const std::string& variant,
               const std::function<Tensor()>& op, const std::function<double(std::int64_t)>& ref) {
          run(name, size, variant, op, ref);
        };
  }
  /// The floor column of a family's rows: `body` calls the vendor library
  /// directly; emitted as impl `impl` ("lapack", "fftw").
  bench_linalg::FloorRunner floor_runner(const char* impl) {
    return [this, impl](const std::string& name, const std::string& size,
                        const std::string& variant, const std::function<void()>& body) {
      if (!bench::selected(o_, bench::case_id(name, size, variant))) return;
      if (o_.smoke) {
        body();
        return;
      }
      const bench::Stats st = bench::measure(o_, body);
      bench::emit(impl, name, size, variant, o_.threads, st, {});
    };
  }

  void verify(const std::string& name, const std::string& size, const std::string& variant,
              const std::vector<double>& check, const std::vector<std::int64_t>& qs,
              const std::function<double(std::int64_t)>& ref) {
    for (std::size_t i = 0; i < qs.size(); ++i) {
      const double want = ref(qs[i]);
      const double got = check[i + 1];
      if (!(std::abs(got - want) <= 1e-9 * std::max(1.0, std::abs(want)))) {
        std::fprintf(stderr, "MISMATCH tenferro %s %s %s at %lld: got %.17g want %.17g\n",
                     name.c_str(), size.c_str(), variant.c_str(), static_cast<long long>(qs[i]),
                     got, want);
        ++failures_;
      }
    }
  }

  Options o_;
  CpuBackend cpu_;
  int failures_ = 0;
};

void Suite::matmul_cases() {
  for (std::int64_t n : {256, 1024}) {
    const Tensor a = make_input({n, n}, 1), b = make_input({n, n}, 2);
    const auto av = input_vector(n * n, 1), bv = input_vector(n * n, 2);
    run(
        "matmul", std::to_string(n), "", [&] { return matmul(a, b, cpu_); },
        [&](std::int64_t q) {
          const std::int64_t i = q % n, j = q / n;
          double s = 0;
          for (std::int64_t k = 0; k < n; ++k) s += av[i + k * n] * bv[k + j * n];
          return s;
        });
  }
  // Batch last: [m, m, batch] x [m, m, batch].
  for (auto [m, batch] : {std::pair<std::int64_t, std::int64_t>{4, 1024}, {16, 256}}) {
    const Tensor a = make_input({m, m, batch}, 1), b = make_input({m, m, batch}, 2);
    const auto av = input_vector(m * m * batch, 1), bv = input_vector(m * m * batch, 2);
    const std::string size =
        std::to_string(m) + "x" + std::to_string(m) + "x" + std::to_string(batch);
    run(
        "batched_matmul", size, "", [&] { return matmul(a, b, cpu_); },
        [&](std::int64_t q) {
          const std::int64_t i = q % m, j = (q / m) % m, base = (q / (m * m)) * m * m;
          double s = 0;
          for (std::int64_t l = 0; l < m; ++l) s += av[base + i + l * m] * bv[base + l + j * m];
          return s;
        });
  }
}

void Suite::elementwise_cases() {
  for (int lg : {20, 22}) {
    const std::int64_t n = std::int64_t{1} << lg;
    const std::string size = "2^" + std::to_string(lg);
    const Tensor a = make_input({n}, 1), b = make_input({n}, 2);
    const auto av = input_vector(n, 1), bv = input_vector(n, 2);
    const Tensor out = cpu_.empty(Shape{n}, f64);
    for (auto [opname, op] :
         {std::pair<const char*, BinaryOp>{"add", BinaryOp::Add}, {"mul", BinaryOp::Mul}}) {
      const auto ref = [&, op = op](std::int64_t q) {
        return op == BinaryOp::Add ? av[q] + bv[q] : av[q] * bv[q];
      };
      run(
          opname, size, "fresh", [&, op = op] { return binary(op, a, b, cpu_); }, ref);
      run(
          opname, size, "into",
          [&, op = op] {
            binary_into(op, a, b, out, cpu_);
            return out;
          },
          ref);
    }
  }
  {
    // Light ops beyond the cache: their outputs are streamed (cpu/stream_store.hpp).
    const std::int64_t n = std::int64_t{1} << 22;
    const Tensor a = make_input({n}, 1), b = make_input({n}, 2);
    const auto av = input_vector(n, 1), bv = input_vector(n, 2);
    const Tensor out = cpu_.empty(Shape{n}, f64);
    const Tensor cond = lt(a, b, cpu_);
    run(
        "neg", "2^22", "into",
        [&] {
          unary_into(UnaryOp::Neg, a, out, cpu_);
          return out;
        },
        [&](std::int64_t q) { return -av[q]; });
    run(
        "copy", "2^22", "into",
        [&] {
          cpu_.copy(a, out);
          return out;
        },
        [&](std::int64_t q) { return av[q]; });
    run(
        "axpy", "2^22", "eager", [&] { return add(mul(Tensor::scalar(0.5), a, cpu_), b, cpu_); },
        [&](std::int64_t q) { return 0.5 * av[q] + bv[q]; });
    run(
        "where", "2^22", "fresh", [&] { return where(cond, a, b, cpu_); },
        [&](std::int64_t q) { return av[q] < bv[q] ? av[q] : bv[q]; });
  }
  // x <- tanh(t * x + b), eight times, from x = a; eager direct ops.
  const std::int64_t n = std::int64_t{1} << 20;
  const Tensor a = make_input({n}, 1), b = make_input({n}, 2);
  const auto av = input_vector(n, 1), bv = input_vector(n, 2);
  const Tensor t = Tensor::scalar(0.5);
  run(
      "tanh_chain", "2^20", "eager",
      [&] {
        Tensor x = a;
        for (int i = 0; i < 8; ++i) x = tanh(add(mul(t, x, cpu_), b, cpu_), cpu_);
        return x;
      },
      [&](std::int64_t q) {
        double x = av[q];
        for (int i = 0; i < 8; ++i) x = std::tanh(0.5 * x + bv[q]);
        return x;
      });
}

// The traced tier: programs compiled and prepared once, before the clock;
// each timed call is one run() of the prepared program.
void Suite::traced_cases() {
  auto rt = Runtime::builder()
                .backend(std::make_shared<CpuBackend>(CpuBackendOptions{.num_threads = o_.threads}))
                .build();
  const auto prepared = [&](const Program& p, const std::vector<Tensor>& inputs) {
    return prepare(*rt, p, InputSignature::of(inputs));
  };

  // Case 5, traced: the eager chain x <- tanh(t x + b) from x = a as one
  // program; elementwise fusion runs the 24 ops as one pass over memory.
  {
    const std::int64_t n = std::int64_t{1} << 20;
    const auto av = input_vector(n, 1), bv = input_vector(n, 2);
    auto t = placeholder(f64, {}, "t");
    auto a = placeholder(f64, {n}, "a");
    auto b = placeholder(f64, {n}, "b");
    TracedTensor x = a;
    for (int i = 0; i < 8; ++i) x = tanh(t * x + b);
    const std::vector<Tensor> in{Tensor::scalar(0.5), make_input({n}, 1), make_input({n}, 2)};
    const PreparedProgram plan = prepared(compile({x}, {t, a, b}), in);
    if (plan.fused_group_count() != 1) {
      std::fprintf(stderr, "tanh_chain traced: expected one fused group, got %zu (%zu ops)\n",
                   plan.fused_group_count(), plan.fused_op_count());
      ++failures_;
    }
    run(
        "tanh_chain", "2^20", "traced", [&] { return tenferro::run(*rt, plan, in)[0]; },
        [&](std::int64_t q) {
          double v = av[q];
          for (int i = 0; i < 8; ++i) v = std::tanh(0.5 * v + bv[q]);
          return v;
        });
  }

  // t * a + b over 2^22 doubles as one fused pass (the output streamed from
  // the registers); the peers run the eager row.
  {
    const std::int64_t n = std::int64_t{1} << 22;
    const auto av = input_vector(n, 1), bv = input_vector(n, 2);
    auto t = placeholder(f64, {}, "t");
    auto a = placeholder(f64, {n}, "a");
    auto b = placeholder(f64, {n}, "b");
    const std::vector<Tensor> in{Tensor::scalar(0.5), make_input({n}, 1), make_input({n}, 2)};
    const PreparedProgram plan = prepared(compile({t * a + b}, {t, a, b}), in);
    run(
        "axpy", "2^22", "traced", [&] { return tenferro::run(*rt, plan, in)[0]; },
        [&](std::int64_t q) { return 0.5 * av[q] + bv[q]; });
  }

  // Case 13, small programs: sum(exp(x) * w + x) on 4 elements as one run()
  // of the prepared program, and as the same four direct calls (eager,
  // untracked); the peers run the four ops eagerly.
  {
    const Tensor x4 = make_input({4}, 1), w4 = make_input({4}, 2);
    const auto xv = input_vector(4, 1), wv = input_vector(4, 2);
    auto x = placeholder(f64, {4}, "x");
    auto w = placeholder(f64, {4}, "w");
    const std::vector<Tensor> in{x4, w4};
    const PreparedProgram plan = prepared(compile({sum(exp(x) * w + x)}, {x, w}), in);
    const auto ref = [&](std::int64_t) {
      double s = 0;
      for (std::size_t i = 0; i < 4; ++i) s += std::exp(xv[i]) * wv[i] + xv[i];
      return s;
    };
    run(
        "overhead_small_program", "4", "prepared", [&] { return tenferro::run(*rt, plan, in)[0]; },
        ref);
    run(
        "overhead_small_program", "4", "eager",
        [&] { return sum(add(mul(exp(x4, cpu_), w4, cpu_), x4, cpu_), cpu_); }, ref);
  }

  // Case 11: jvp and vjp programs of a loss (the program-level transforms):
  // jvp: (inputs, tangents) -> (loss, tangent of loss);
  // vjp: (inputs, cotangent 1) -> (loss, one cotangent per input).
  const auto jvp_vjp = [&](const std::string& size, const std::string& loss, const Program& p,
                           const std::vector<Tensor>& primals, const std::vector<Tensor>& tangents,
                           const std::vector<double>& jvp_ref, const std::vector<double>& vjp_ref) {
    std::vector<Tensor> jin = primals;
    jin.insert(jin.end(), tangents.begin(), tangents.end());
    std::vector<Tensor> vin = primals;
    vin.push_back(Tensor::scalar(1.0));
    const PreparedProgram jplan = prepared(jvp(p), jin);
    const PreparedProgram vplan = prepared(vjp(p), vin);
    run_many(
        "jvp_traced", size, loss, [&] { return tenferro::run(*rt, jplan, jin); },
        [&](std::int64_t q) { return jvp_ref[q]; });
    run_many(
        "vjp_traced", size, loss, [&] { return tenferro::run(*rt, vplan, vin); },
        [&](std::int64_t q) { return vjp_ref[q]; });
  };
  {
    // sum(tanh(A x)), A 256 x 256: references by the chain rule with
    // s = 1 - tanh(A x)^2: d = s . (dA x + A dx), gA = s x^T, gx = A^T s.
    const std::int64_t n = 256;
    const auto av = input_vector(n * n, 1), xv = input_vector(n, 2);
    const auto dav = input_vector(n * n, 3), dxv = input_vector(n, 4);
    auto a = placeholder(f64, {n, n}, "A");
    auto x = placeholder(f64, {n}, "x");
    const Program p = compile({sum(tanh(matmul(a, x)))}, {a, x});
    std::vector<double> s(n);
    double f = 0, d = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      double y = 0, dy = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        y += av[i + j * n] * xv[j];
        dy += dav[i + j * n] * xv[j] + av[i + j * n] * dxv[j];
      }
      const double th = std::tanh(y);
      f += th;
      s[i] = 1 - th * th;
      d += s[i] * dy;
    }
    std::vector<double> vref{f};
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) vref.push_back(s[i] * xv[j]);
    for (std::int64_t j = 0; j < n; ++j) {
      double g = 0;
      for (std::int64_t i = 0; i < n; ++i) g += av[i + j * n] * s[i];
      vref.push_back(g);
    }
    jvp_vjp("256", "tanh_Ax", p, {make_input({n, n}, 1), make_input({n}, 2)},
            {make_input({n, n}, 3), make_input({n}, 4)}, {f, d}, vref);
  }
  {
    // sum(exp(sin x) x) on 2^16: g = exp(sin x) (x cos x + 1).
    const std::int64_t n = std::int64_t{1} << 16;
    const auto xv = input_vector(n, 1), dxv = input_vector(n, 2);
    auto x = placeholder(f64, {n}, "x");
    const Program p = compile({sum(exp(sin(x)) * x)}, {x});
    double f = 0, d = 0;
    std::vector<double> vref{0.0};
    for (std::int64_t k = 0; k < n; ++k) {
      const double e = std::exp(std::sin(xv[k]));
      const double g = e * (xv[k] * std::cos(xv[k]) + 1);
      f += e * xv[k];
      d += g * dxv[k];
      vref.push_back(g);
    }
    vref[0] = f;
    jvp_vjp("2^16", "expsin_x", p, {make_input({n}, 1)}, {make_input({n}, 2)}, {f, d}, vref);
  }
}

void Suite::reduction_cases() {
  const std::int64_t n = 2048;
  const Tensor x = make_input({n, n}, 1);
  const auto xv = input_vector(n * n, 1);
  const std::string size = "2048x2048";
  run(
      "sum_all", size, "", [&] { return sum(x, cpu_); },
      [&](std::int64_t) {
        double s = 0;
        for (double v : xv) s += v;
        return s;
      });
  // Our axis 0 is the contiguous one (peer axis 1 of the reversed row-major array).
  run(
      "sum_axis0", size, "", [&] { return sum(x, {0}, cpu_); },
      [&](std::int64_t j) {
        double s = 0;
        for (std::int64_t i = 0; i < n; ++i) s += xv[i + j * n];
        return s;
      });
  run(
      "sum_axis1", size, "", [&] { return sum(x, {1}, cpu_); },
      [&](std::int64_t i) {
        double s = 0;
        for (std::int64_t j = 0; j < n; ++j) s += xv[i + j * n];
        return s;
      });
  run(
      "max_all", size, "", [&] { return max(x, cpu_); },
      [&](std::int64_t) {
        double m = xv[0];
        for (double v : xv) m = std::max(m, v);
        return m;
      });
  // The floor of every row (impl "stream"): a plain read of the 32 MiB with
  // four accumulators per thread, split over the run's threads.
  const auto stream = floor_runner("stream");
  const double* px = x.data<double>();
  const auto read_all = [&] {
    std::atomic<double> sink{0.0};
    cpu_.parallel_for(n * n, std::int64_t{1} << 16, [&](std::int64_t b, std::int64_t e) {
      double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
      const double* p = px + b;
      const std::int64_t len = e - b, quads = len / 4;
      for (std::int64_t q = 0; q < quads; ++q) {
        a0 += p[4 * q];
        a1 += p[4 * q + 1];
        a2 += p[4 * q + 2];
        a3 += p[4 * q + 3];
      }
      for (std::int64_t r = 4 * quads; r < len; ++r) a0 += p[r];
      sink.store(sink.load(std::memory_order_relaxed) + (a0 + a1) + (a2 + a3),
                 std::memory_order_relaxed);
    });
    volatile double keep = sink.load();
    (void)keep;
  };
  for (const char* c : {"sum_all", "sum_axis0", "sum_axis1", "max_all"})
    stream(c, size, "", read_all);
}

void Suite::permute_cases() {
  struct PermCase {
    std::string size;
    std::vector<std::int64_t> shape, perm;
  };
  std::vector<std::int64_t> rev15(15), shape15(15, 3);
  for (int i = 0; i < 15; ++i) rev15[i] = 14 - i;
  const std::vector<PermCase> cases{{"2048x2048", {2048, 2048}, {1, 0}},
                                    {"256x256x64", {256, 256, 64}, {2, 0, 1}},
                                    {"3^15", shape15, rev15}};
  for (const auto& c : cases) {
    const Tensor x = make_input(c.shape, 1);
    std::int64_t numel = 1;
    for (auto e : c.shape) numel *= e;
    const auto xv = input_vector(numel, 1);
    run(
        "permute", c.size, "", [&] { return permute(x, c.perm, cpu_); },
        [&](std::int64_t q) {
          // Output index (column-major unravel), then input axis perm[d] = out[d].
          const std::size_t r = c.shape.size();
          std::vector<std::int64_t> in(r);
          for (std::size_t d = 0; d < r; ++d) {
            const std::int64_t ext = c.shape[c.perm[d]];
            in[c.perm[d]] = q % ext;
            q /= ext;
          }
          std::int64_t lin = 0, stride = 1;
          for (std::size_t d = 0; d < r; ++d) {
            lin += in[d] * stride;
            stride *= c.shape[d];
          }
          return xv[lin];
        });
  }
}

class AddOne final : public ExtensionOpWithParams<AddOne, NoParams> {
 public:
  AddOne() : ExtensionOpWithParams("bench.add_one.v1", {}) {}
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return 1; }
  InferenceResult infer(std::span<const TensorMeta> in) const override { return {{in[0]}, {}}; }
};

void Suite::overhead_cases() {
  const Tensor x = make_input({4}, 1), y = make_input({4}, 2);
  const auto xv = input_vector(4, 1), yv = input_vector(4, 2);
  constexpr int kChain = 1000;
  run(
      "overhead_add_untracked", "4", "",
      [&] {
        Tensor z = x;
        for (int i = 0; i < kChain; ++i) z = add(z, y, cpu_);
        return z;
      },
      [&](std::int64_t q) {
        double z = xv[q];
        for (int i = 0; i < kChain; ++i) z += yv[q];
        return z;
      },
      kChain);

  // One eager call of a one-input extension op through Runtime::apply (warm plan cache).
  auto module = std::make_shared<SimpleModule>("bench.families");
  module->family<AddOne>("bench.add_one.v1", [](const AddOne&, ExecutionScope& scope,
                                                ExtensionCaches&, std::span<const Tensor> in) {
    Tensor src = scope.compact(in[0]);
    Tensor dst = scope.backend().empty(src.shape(), src.dtype());
    const double* s = src.data<double>();
    double* d = static_cast<double*>(dst.raw_data());
    for (std::int64_t i = 0; i < src.numel(); ++i) d[i] = s[i] + 1.0;
    return std::vector<Tensor>{dst};
  });
  auto rt = Runtime::builder()
                .backend(std::make_shared<CpuBackend>(CpuBackendOptions{o_.threads}))
                .module(module)
                .build();
  auto op = std::make_shared<AddOne>();
  const std::vector<Tensor> inputs{x};
  run(
      "overhead_extension_call", "4", "", [&] { return rt->apply(op, inputs)[0]; },
      [&](std::int64_t q) { return xv[q] + 1.0; });
}

// Eager-tier AD overheads, the counterparts of PyTorch's autograd (x untracked,
// y a leaf requiring grad, as in the peer).
void Suite::autodiff_cases() {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{o_.threads});
  const EagerTensor x = rt->tensor(make_input({4}, 1));
  const EagerTensor y = rt->variable(make_input({4}, 2));
  const auto xv = input_vector(4, 1), yv = input_vector(4, 2);
  constexpr int kChain = 1000;
  const auto chain = [&](const EagerTensor& yy) {
    EagerTensor z = x;
    for (int i = 0; i < kChain; ++i) z = z + yy;
    return z;
  };
  run(
      "overhead_add_recorded", "4", "", [&] { return chain(y).value(); },
      [&](std::int64_t q) {
        double z = xv[q];
        for (int i = 0; i < kChain; ++i) z += yv[q];
        return z;
      },
      kChain);
  run(
      "overhead_chain_fwd_bwd", "4", "",
      [&] { return grad([&](const EagerTensor& yy) { return sum(chain(yy)); }, y).value(); },
      [&](std::int64_t) { return static_cast<double>(kChain); }, kChain);
  // grad of sum(A B) w.r.t. A and B, reported as gA + gB.
  for (std::int64_t n : {2, 64, 512}) {
    const std::vector<EagerTensor> ab{rt->variable(make_input({n, n}, 1)),
                                      rt->variable(make_input({n, n}, 2))};
    const auto av = input_vector(n * n, 1), bv = input_vector(n * n, 2);
    run(
        "overhead_grad_matmul", std::to_string(n), "",
        [&] {
          auto g = grad_many(
              [](std::span<const EagerTensor> in) { return sum(matmul(in[0], in[1])); }, ab);
          return add(g[0]->value(), g[1]->value(), rt->backend());
        },
        [&](std::int64_t q) {
          // d/dA = 1 B^T: row sums of B; d/dB = A^T 1: column sums of A.
          const std::int64_t i = q % n, j = q / n;
          double s = 0;
          for (std::int64_t k = 0; k < n; ++k) s += bv[j + k * n] + av[k + i * n];
          return s;
        });
  }
}

// ---- group 15: naive references of the special functions (slow, exact enough)

// Recurrence up to x >= 10, then the asymptotic series (error ~1e-14).
double naive_digamma(double x) {
  double r = 0;
  for (; x < 10; x += 1) r -= 1 / x;
  const double f = 1 / (x * x);
  return r + std::log(x) - 0.5 / x -
         f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}

// Newton on erf(y) = |x| from y = 0: erf is concave there, so the iterates
// increase monotonically to the root.
double naive_erfinv(double x) {
  const double t = std::abs(x);
  double y = 0;
  for (int i = 0; i < 200; ++i) {
    const double step = (std::erf(y) - t) / (2 / std::sqrt(std::numbers::pi) * std::exp(-y * y));
    y -= step;
    if (std::abs(step) <= 1e-17 * std::max(1.0, y)) break;
  }
  return std::copysign(y, x);
}

// exp(-|x|) I0(x) by its power series (all terms positive: no cancellation).
double naive_i0e(double x) {
  const double h = x * x / 4;
  double term = 1, s = 1;
  for (int k = 1; term > 1e-18 * s; ++k) {
    term *= h / (static_cast<double>(k) * k);
    s += term;
  }
  return std::exp(-std::abs(x)) * s;
}

double naive_log_ndtr(double x) {
  return x < 0 ? std::log(0.5 * std::erfc(-x / std::sqrt(2.0)))
               : std::log1p(-0.5 * std::erfc(x / std::sqrt(2.0)));
}

// Group 15: the direct special-function kernels and the eager composite
// activations (untracked EagerTensor), 2^20 f64, inputs in each op's domain.
void Suite::special_cases() {
  const std::int64_t n = std::int64_t{1} << 20;
  const std::string size = "2^20";
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = o_.threads});
  using Op = std::function<Tensor(const Tensor&, const EagerTensor&)>;
  const auto unary_case = [&](const char* name, const char* variant, const Op& op,
                              double (*ref)(double)) {
    if (!bench::selected(o_, bench::case_id(name, size, variant))) return;
    const auto xv = bench::domain_vector(name, n, 1);
    const Tensor x = Tensor::from_col_major(Shape{n}, xv);
    const EagerTensor ex = rt->tensor(x);
    run(
        name, size, variant, [&] { return op(x, ex); }, [&](std::int64_t q) { return ref(xv[q]); });
  };
  unary_case(
      "lgamma", "direct", [&](const Tensor& x, const EagerTensor&) { return lgamma(x, cpu_); },
      [](double v) { return std::lgamma(v); });
  unary_case(
      "digamma", "direct", [&](const Tensor& x, const EagerTensor&) { return digamma(x, cpu_); },
      naive_digamma);
  unary_case(
      "erfinv", "direct", [&](const Tensor& x, const EagerTensor&) { return erfinv(x, cpu_); },
      naive_erfinv);
  unary_case(
      "i0e", "direct", [&](const Tensor& x, const EagerTensor&) { return i0e(x, cpu_); },
      naive_i0e);
  unary_case(
      "log_ndtr", "direct", [&](const Tensor& x, const EagerTensor&) { return log_ndtr(x, cpu_); },
      naive_log_ndtr);
  unary_case(
      "softplus", "eager", [](const Tensor&, const EagerTensor& x) { return softplus(x).value(); },
      [](double v) { return v > 20 ? v : std::log1p(std::exp(v)); });
  unary_case(
      "silu", "eager", [](const Tensor&, const EagerTensor& x) { return silu(x).value(); },
      [](double v) { return v / (1 + std::exp(-v)); });
  unary_case(
      "logsigmoid", "eager",
      [](const Tensor&, const EagerTensor& x) { return logsigmoid(x).value(); },
      [](double v) { return std::min(v, 0.0) - std::log1p(std::exp(-std::abs(v))); });
  if (bench::selected(o_, bench::case_id("logaddexp", size, "direct"))) {
    const auto av = bench::domain_vector("logaddexp", n, 1);
    const auto bv = bench::domain_vector("logaddexp", n, 2);
    const Tensor a = Tensor::from_col_major(Shape{n}, av);
    const Tensor b = Tensor::from_col_major(Shape{n}, bv);
    run(
        "logaddexp", size, "direct", [&] { return logaddexp(a, b, cpu_); },
        [&](std::int64_t q) {
          const double m = std::max(av[q], bv[q]);
          return m + std::log1p(std::exp(-std::abs(av[q] - bv[q])));
        });
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = bench::parse_options(argc, argv);
  try {
    Suite suite(o);
    // OpenBLAS starts its worker threads when the library loads and they
    // spin (yielding) for about 0.1 s (its THREAD_TIMEOUT, 2^28 cycles)
    // before they sleep; measured in that window, our pool's threads share
    // cores with them. The peers' start-up (Python, libtorch) outlasts it;
    // wait it out too, so every side is measured in steady state.
    if (o.threads > 1 && !o.smoke) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    suite.matmul_cases();
    suite.elementwise_cases();
    suite.traced_cases();
    suite.reduction_cases();
    suite.permute_cases();
    suite.overhead_cases();
    suite.autodiff_cases();
    suite.special_cases();
    suite.linalg_cases();
    suite.fft_cases();
    suite.einsum_cases();
    suite.scan_sort_cases();
    suite.tropical_cases();
    if (suite.failures() > 0) {
      std::fprintf(stderr, "tenferro_bench: %d result(s) differ from the naive reference\n",
                   suite.failures());
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tenferro_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
