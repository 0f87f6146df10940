// Group 18 of the peer suite: C = A (max,+) B for 1024 x 1024 operands, f64
// and f32, through the tropical GEMM kernel (src/einsum/semiring_gemm.hpp).
// The floor column is OpenBLAS's GEMM of the same size and dtype through
// tenferro::matmul: the same m n k element operations at the BLAS rate, the
// rate issue 50 aims at half of. Peers (bench/python/peers.py) write it the
// way users do: np.max / torch.amax of a broadcast sum over row blocks.

#include "tropical_cases.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "einsum/semiring_gemm.hpp"
#include "tenferro/ad/ops.hpp"

namespace bench_tropical {

using namespace tenferro;

namespace {

template <class T>
int run_maxplus(const bench::Options& o, CpuBackend& cpu, const FloorRunner& floor,
                const char* variant) {
  constexpr std::int64_t n = 1024;
  const std::string name = "maxplus_gemm", size = std::to_string(n);
  if (!bench::selected(o, bench::case_id(name, size, variant))) return 0;
  std::fprintf(stderr, "  tenferro %s %s %s (%dT)\n", name.c_str(), size.c_str(), variant,
               o.threads);
  const std::vector<double> av = bench::input_vector(n * n, 1), bv = bench::input_vector(n * n, 2);
  const std::vector<T> a(av.begin(), av.end()), b(bv.begin(), bv.end());
  std::vector<T> c(static_cast<std::size_t>(n * n));
  const GemmOperand ga{a.data(), false, n, {}}, gb{b.data(), false, n, {}};
  const auto op = [&] {
    einsum_detail::semiring_gemm(Semiring::MaxPlus, dtype_of_v<T>, n, n, n, ga, gb, c.data(),
                                 Shape{}, nullptr, &cpu);
  };
  op();
  const std::vector<double> cd(c.begin(), c.end());
  const std::vector<double> check = bench::make_check(cd.data(), n * n);
  int failures = 0;
  const std::vector<std::int64_t> qs = bench::probe_positions(n * n);
  for (std::size_t q = 0; q < qs.size(); ++q) {
    const std::int64_t i = qs[q] % n, j = qs[q] / n;
    T want = a[static_cast<std::size_t>(i)] + b[static_cast<std::size_t>(j * n)];
    for (std::int64_t p = 1; p < n; ++p) {
      want = std::max<T>(
          want, a[static_cast<std::size_t>(i + p * n)] + b[static_cast<std::size_t>(p + j * n)]);
    }
    if (static_cast<double>(want) != check[q + 1]) {
      std::fprintf(stderr, "MISMATCH tenferro %s %s %s at %lld: got %.17g want %.17g\n",
                   name.c_str(), size.c_str(), variant, static_cast<long long>(qs[q]), check[q + 1],
                   static_cast<double>(want));
      ++failures;
    }
  }
  const bench::Stats st = bench::measure(o, op);
  bench::emit("tenferro", name, size, variant, o.threads, st, check);
  const Tensor at = Tensor::from_col_major(Shape{n, n}, a);
  const Tensor bt = Tensor::from_col_major(Shape{n, n}, b);
  floor(name, size, variant, [&] { (void)matmul(at, bt, cpu); });
  return failures;
}

}  // namespace

int run_cases(const bench::Options& o, CpuBackend& cpu, const FloorRunner& floor) {
  return run_maxplus<double>(o, cpu, floor, "f64") + run_maxplus<float>(o, cpu, floor, "f32");
}

}  // namespace bench_tropical
