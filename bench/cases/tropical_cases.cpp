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
#include "tenferro/einsum/einsum.hpp"

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

// The ground energy of an L x L +-1 spin glass (open boundaries, no field):
// -max over s of sum_edges J s_i s_j, one max-plus einsum of the 2 x 2 edge
// tensors J s_i s_j over the spins (labels), planned before the clock. Edges
// row by row, each site's right then lower neighbour; J = +1 where
// input_vector(edges, 7) >= 0, else -1 (peers.py builds the same instance and
// solves it by a row-by-row transfer-matrix dynamic program). Checked against
// that dynamic program (here in C++ too) before timing.
int run_spinglass(const bench::Options& o, CpuBackend& cpu) {
  constexpr std::int64_t L = 16;
  const std::string name = "spinglass_ground", size = std::to_string(L), variant = "square";
  if (!bench::selected(o, bench::case_id(name, size, variant))) return 0;
  std::fprintf(stderr, "  tenferro %s %s %s (%dT)\n", name.c_str(), size.c_str(), variant.c_str(),
               o.threads);
  const std::int64_t edges = 2 * L * (L - 1);
  const std::vector<double> u = bench::input_vector(edges, 7);
  EinsumLabels labels;
  labels.output = std::vector<std::int64_t>{};
  std::vector<Tensor> ops;
  std::vector<std::vector<double>> right(L, std::vector<double>(L, 0)), down = right;
  std::int64_t e = 0;
  for (std::int64_t r = 0; r < L; ++r) {
    for (std::int64_t c = 0; c < L; ++c) {
      const std::int64_t i = r * L + c;
      for (const std::int64_t j : {c + 1 < L ? i + 1 : -1, r + 1 < L ? i + L : -1}) {
        if (j < 0) continue;
        const double J = u[static_cast<std::size_t>(e++)] >= 0 ? 1.0 : -1.0;
        (j == i + 1 ? right : down)[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)] = J;
        labels.inputs.push_back({i, j});
        ops.push_back(Tensor::from_col_major(Shape{2, 2}, std::vector<double>{J, -J, -J, J}));
      }
    }
  }
  std::vector<Shape> shapes;
  for (const Tensor& t : ops) shapes.push_back(t.shape());
  const EinsumPlan plan =
      EinsumPlan::prepare(labels, DType::F64, shapes, {.semiring = Semiring::MaxPlus});
  double energy = 0;
  const auto op = [&] { energy = -plan.run(ops, cpu).to_vector<double>()[0]; };
  op();
  // The transfer-matrix dynamic program over the frontier of one spin per
  // column (bit c of the state: that column's latest spin is +1).
  std::vector<double> v(std::size_t{1} << L, 0.0), next(v.size());
  for (std::int64_t r = 0; r < L; ++r) {
    for (std::int64_t c = 0; c < L; ++c) {
      const double Jv =
          r > 0 ? down[static_cast<std::size_t>(r - 1)][static_cast<std::size_t>(c)] : 0;
      const double Jh =
          c > 0 ? right[static_cast<std::size_t>(r)][static_cast<std::size_t>(c - 1)] : 0;
      for (std::size_t st = 0; st < v.size(); ++st) {
        const double s_new = (st >> c) & 1 ? 1.0 : -1.0;
        const double left = c > 0 ? ((st >> (c - 1)) & 1 ? 1.0 : -1.0) : 0.0;
        double best = -1e300;
        for (const std::size_t old : {st & ~(std::size_t{1} << c), st | (std::size_t{1} << c)}) {
          const double s_old = (old >> c) & 1 ? 1.0 : -1.0;
          best = std::max(best, v[old] + Jv * s_old * s_new);
        }
        next[st] = best + Jh * left * s_new;
      }
      v.swap(next);
    }
  }
  const double want = -*std::max_element(v.begin(), v.end());
  int failures = 0;
  if (energy != want) {
    std::fprintf(stderr, "MISMATCH tenferro %s: ground energy %.17g, transfer matrix %.17g\n",
                 name.c_str(), energy, want);
    ++failures;
  }
  const bench::Stats st = bench::measure(o, op);
  bench::emit("tenferro", name, size, variant, o.threads, st, bench::make_check(&energy, 1));
  return failures;
}

}  // namespace

int run_cases(const bench::Options& o, CpuBackend& cpu, const FloorRunner& floor) {
  return run_maxplus<double>(o, cpu, floor, "f64") + run_maxplus<float>(o, cpu, floor, "f32") +
         run_spinglass(o, cpu);
}

}  // namespace bench_tropical
