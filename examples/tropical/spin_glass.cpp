// A spin glass's ground state by tropical tensor-network contraction (Liu,
// Wang and Zhang, Phys. Rev. Lett. 126, 090506): the energy by a max-plus
// einsum, the number of ground states by the counting semiring, and one
// ground-state configuration by differentiating the contraction
// (docs/tropical.md).
//
//   build/examples/tropical_spin_glass [L] [seed]
//
// A random L x L lattice (default 6) with couplings J = +-1 on the nearest-
// neighbour bonds and fields h = +-1 on half the spins:
//   E(s) = -sum_bonds J s_i s_j - sum_i h_i s_i,  s_i = +-1.
// Up to L = 4 the program also enumerates every configuration and compares.

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <vector>

#include "tenferro/tenferro.hpp"

namespace tf = tenferro;

int main(int argc, char** argv) {
  const int L = argc > 1 ? std::atoi(argv[1]) : 6;
  const unsigned seed = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 1;
  if (L < 2 || L > 16) {
    std::fprintf(stderr, "usage: tropical_spin_glass [L in 2..16] [seed]\n");
    return 2;
  }
  const int n = L * L;
  std::mt19937 rng(seed);
  auto coin = [&] { return rng() % 2 == 0 ? 1.0 : -1.0; };

  // The network: one vector w_i(s) = h_i s per spin (the gradient reads the
  // configuration off these) and one matrix J s_i s_j per bond; index 0 is
  // s = -1, index 1 is s = +1. Labels are the spins.
  auto rt = tf::EagerRuntime::make_cpu();
  std::vector<tf::EagerTensor> tensors;
  tf::EinsumLabels labels;
  labels.output = std::vector<std::int64_t>{};  // contract everything: a number
  std::vector<double> h(static_cast<std::size_t>(n));
  struct Bond {
    int i, j;
    double J;
  };
  std::vector<Bond> bonds;
  for (int i = 0; i < n; ++i) {
    h[static_cast<std::size_t>(i)] = i % 2 == 0 ? coin() : 0.0;
    const double hi = h[static_cast<std::size_t>(i)];
    tensors.push_back(rt->variable(tf::Tensor::from_col_major({2}, std::vector<double>{-hi, hi})));
    labels.inputs.push_back({i});
  }
  for (int i = 0; i < n; ++i) {
    for (const int j : {i % L + 1 < L ? i + 1 : -1, i + L < n ? i + L : -1}) {
      if (j < 0) continue;
      const double J = coin();
      bonds.push_back({i, j, J});
      tensors.push_back(
          rt->tensor(tf::Tensor::from_col_major({2, 2}, std::vector<double>{J, -J, -J, J})));
      labels.inputs.push_back({i, j});
    }
  }

  // max over s of -E(s): one max-plus contraction.
  const tf::EinsumOptions maxplus{.semiring = tf::Semiring::MaxPlus};
  const tf::EagerTensor best = tf::einsum(labels, tensors, maxplus);
  const double ground = -best.value().to_vector<double>()[0];

  // How many configurations reach it: the counting tropical semiring.
  std::vector<tf::Tensor> values;
  for (const tf::EagerTensor& t : tensors) values.push_back(t.value());
  const tf::CountedTensor counted = tf::einsum_count(labels, values, rt->backend(), maxplus);
  const double degeneracy = counted.count.to_vector<double>()[0];

  // One ground state: the gradient of the maximum routes through the winning
  // term, so each spin's vector gets a one at its chosen value.
  best.backward();
  std::vector<int> s(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const auto g = tensors[static_cast<std::size_t>(i)].grad().value().to_vector<double>();
    s[static_cast<std::size_t>(i)] = g[1] > 0.5 ? 1 : -1;
  }
  auto energy = [&](const std::vector<int>& x) {
    double e = 0;
    for (const Bond& b : bonds) {
      e -= b.J * x[static_cast<std::size_t>(b.i)] * x[static_cast<std::size_t>(b.j)];
    }
    for (int i = 0; i < n; ++i)
      e -= h[static_cast<std::size_t>(i)] * x[static_cast<std::size_t>(i)];
    return e;
  };

  std::printf("%d x %d spin glass (seed %u): ground energy %g, %g ground states\n", L, L, seed,
              ground, degeneracy);
  std::printf("a ground state (+ up, - down), its energy %g:\n", energy(s));
  for (int r = 0; r < L; ++r) {
    for (int c = 0; c < L; ++c)
      std::printf("%c", s[static_cast<std::size_t>(r * L + c)] > 0 ? '+' : '-');
    std::printf("\n");
  }
  bool ok = energy(s) == ground;
  if (n <= 16) {  // every configuration, for comparison
    double e_min = std::numeric_limits<double>::infinity(), count = 0;
    for (int bits = 0; bits < (1 << n); ++bits) {
      std::vector<int> x(static_cast<std::size_t>(n));
      for (int i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = (bits >> i) & 1 ? 1 : -1;
      const double e = energy(x);
      if (e < e_min) {
        e_min = e, count = 1;
      } else if (e == e_min) {
        count += 1;
      }
    }
    std::printf("enumeration of all %d configurations: ground energy %g, %g ground states\n",
                1 << n, e_min, count);
    ok = ok && e_min == ground && count == degeneracy;
  }
  std::printf("%s\n", ok ? "ok" : "MISMATCH");
  return ok ? 0 : 1;
}
