// tenferro quickstart: the direct tier (explicit CpuBackend, no autodiff), then
// eager autodiff (backward, functional grad, Hessian-vector products), then a
// traced program compiled once and run for two different sizes.
//
// Every result is compared with a value computed independently (by hand or
// with a plain loop); the program prints "ok" per check and exits 1 on any
// mismatch, so `./run demo` doubles as a smoke test.

#include <cmath>
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "tenferro/tenferro.hpp"

namespace tf = tenferro;

namespace {

int g_failures = 0;

// Same dtype, same shape and numerically close: allclose alone would accept
// broadcast-compatible shapes.
void check(const std::string& what, const tf::Tensor& got, const tf::Tensor& expected) {
  const bool same_meta = got.dtype() == expected.dtype() && got.shape() == expected.shape();
  const bool ok = same_meta && tf::allclose(got, expected, 1e-12, 1e-12);
  std::cout << what << ":\n  " << got << "\n  " << (ok ? "ok" : "MISMATCH") << "\n";
  if (!ok) {
    std::cout << "  expected " << expected << "\n";
    ++g_failures;
  }
}

void check_true(const std::string& what, bool ok) {
  std::cout << what << ": " << (ok ? "ok" : "MISMATCH") << "\n";
  if (!ok) ++g_failures;
}

}  // namespace

int main() {
  try {
    // Threads, buffer pool and BLAS live in an object we own and pass to ops.
    tf::CpuBackend cpu;
    std::cout << "tenferro quickstart (CPU backend, " << cpu.num_threads() << " threads)\n\n";

    // Constructors name the memory order; storage is always column-major.
    auto a = tf::Tensor::from_row_major({2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6});
    auto b = tf::Tensor::from_row_major({3, 2}, std::vector<double>{7, 8, 9, 10, 11, 12});

    // 1. Matrix product: [2, 3] x [3, 2] -> [2, 2] (GEMM).
    //    Row 0: 1*7+2*9+3*11 = 58, 1*8+2*10+3*12 = 64; row 1: 139, 154.
    check("matmul(a, b)", tf::matmul(a, b, cpu),
          tf::Tensor::from_row_major({2, 2}, std::vector<double>{58, 64, 139, 154}));

    // 2. Reduction over axis 0 (the rows): column sums of a.
    check("sum(a, {0})", tf::sum(a, {0}, cpu),
          tf::Tensor::from_row_major({3}, std::vector<double>{5, 7, 9}));

    // 3. Elementwise with NumPy broadcasting (right-aligned): [2, 3] + [3].
    std::vector<double> v = {0.0, 0.5, -1.0};
    std::vector<double> expected_bc(6);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) expected_bc[i * 3 + j] = (i * 3 + j + 1) + std::exp(v[j]);
    auto ev = tf::exp(tf::Tensor::from_row_major({3}, v), cpu);
    check("add(a, exp(v))", tf::add(a, ev, cpu), tf::Tensor::from_row_major({2, 3}, expected_bc));

    // 4. A permuted view aliases a's buffer; contiguous() is the named copy.
    auto at = a.transpose();  // [3, 2], strides [3, 1]: no copy
    check_true("transpose() is a view of a (shared storage, not contiguous)",
               at.storage() == a.storage() && !at.is_contiguous());
    auto at_compact = at.contiguous();
    check_true("contiguous() made a compact copy",
               at_compact.is_contiguous() && at_compact.storage() != a.storage());
    check("a.transpose().contiguous()", at_compact,
          tf::Tensor::from_row_major({3, 2}, std::vector<double>{1, 4, 2, 5, 3, 6}));

    // 5. Complex tensors: re + i*im (f64 parts give c128); abs gives f64.
    auto re = tf::Tensor::from_row_major({3}, std::vector<double>{3, 0, -1});
    auto im = tf::Tensor::from_row_major({3}, std::vector<double>{4, -2, 0});
    auto z = tf::complex(re, im);
    check_true("complex(re, im) has dtype c128", z.dtype() == tf::c128);
    check("abs(z)", tf::abs(z, cpu), tf::Tensor::from_row_major({3}, std::vector<double>{5, 2, 1}));

    // 6. Python-style slice with a negative step: a view, read backwards.
    auto r = tf::arange(6);  // i64 [0, 1, 2, 3, 4, 5]
    check("arange(6).slice(0, {}, {}, -2)", r.slice(0, std::nullopt, std::nullopt, -2),
          tf::Tensor::from_row_major({3}, std::vector<std::int64_t>{5, 3, 1}));

    // 7. Random input from an explicit generator: I * x == x.
    tf::Generator gen(42);
    auto x = tf::randn({3, 4}, tf::f64, gen);
    check("matmul(eye(3), x) == x", tf::matmul(tf::eye(3), x, cpu), x);

    // 8. Errors are typed: kind() to branch on, what() starts with "[op]".
    try {
      (void)a.permute({0, 0});
      check_true("permute({0, 0}) throws", false);
    } catch (const tf::Error& e) {
      std::cout << "caught: " << e.what() << "\n";
      check_true("error kind is DuplicateAxis", e.kind() == tf::ErrorKind::DuplicateAxis);
    }

    // 9. Eager autodiff: record, backward, functional transforms, HVP.
    std::cout << "\n-- eager autodiff --\n";
    auto rt = tf::EagerRuntime::make_cpu();
    const std::vector<double> xs{0.5, -1.0, 2.0};
    auto w = rt->variable(tf::Tensor::from_col_major({3}, xs));
    tf::sum(w * w * w).backward();
    std::vector<double> three_x2;
    for (double v : xs) three_x2.push_back(3 * v * v);
    check("grad of sum(x^3) is 3 x^2", w.grad().value(), tf::Tensor::from_col_major({3}, three_x2));
    auto f = [](const tf::EagerTensor& z) { return tf::sum(tf::exp(tf::sin(z))); };
    const std::vector<double> vs{1.0, 0.0, -2.0};
    auto dir = rt->tensor(tf::Tensor::from_col_major({3}, vs));
    auto hv_fwd = tf::jvp_tangent([&](const tf::EagerTensor& z) { return tf::grad(f, z); }, w, dir);
    auto hv_rev =
        tf::grad([&](const tf::EagerTensor& z) { return tf::sum(tf::grad(f, z) * dir); }, w);
    std::vector<double> hv_expected;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const double s = std::sin(xs[i]), c = std::cos(xs[i]);
      hv_expected.push_back(std::exp(s) * (c * c - s) * vs[i]);  // d^2/dx^2 exp(sin x)
    }
    const auto hv_ref = tf::Tensor::from_col_major({3}, hv_expected);
    check("H v of sum(exp(sin x)), forward-over-reverse", hv_fwd.value(), hv_ref);
    check("H v of sum(exp(sin x)), reverse-over-reverse", hv_rev.value(), hv_ref);

    // 10. Traced tier: build a graph with a named size, transform it, compile
    //     and prepare once, run for different n without re-preparing.
    std::cout << "\n-- traced program --\n";
    auto runtime = tf::Runtime::builder().backend(std::make_shared<tf::CpuBackend>()).build();
    const tf::SymDim n = tf::SymDim::var("n");
    auto tx = tf::placeholder(tf::f64, {n}, "x");
    auto ty = tf::sum(tf::exp(tf::sin(tx)));
    auto tg = tf::grad(ty, tx);  // same rules as the eager tier
    const std::vector<tf::TracedTensor> outs{ty, tg}, ins{tx};
    tf::Program program = tf::compile(outs, ins);
    const std::vector<tf::Tensor> first{tf::Tensor::from_col_major({3}, xs)};
    tf::PreparedProgram plan = tf::prepare(*runtime, program, tf::InputSignature::of(first));
    for (const auto& values : {xs, std::vector<double>{0.1, 0.2, 0.3, 0.4, 0.5}}) {
      const std::int64_t len = static_cast<std::int64_t>(values.size());
      const std::vector<tf::Tensor> in{tf::Tensor::from_col_major({len}, values)};
      auto out = tf::run(*runtime, plan, in);
      double y = 0;
      std::vector<double> g;
      for (double v : values) {
        y += std::exp(std::sin(v));
        g.push_back(std::cos(v) * std::exp(std::sin(v)));
      }
      check("traced sum(exp(sin x)), n = " + std::to_string(len), out[0], tf::Tensor::scalar(y));
      check("traced gradient, n = " + std::to_string(len), out[1],
            tf::Tensor::from_col_major({len}, g));
    }
  } catch (const tf::Error& e) {
    std::cerr << "unexpected tenferro error (" << tf::name(e.kind()) << "): " << e.what() << "\n";
    return 1;
  }

  if (g_failures > 0) {
    std::cout << "\n" << g_failures << " check(s) FAILED\n";
    return 1;
  }
  std::cout << "\nall checks ok\n";
  return 0;
}
