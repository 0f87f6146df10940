// The einsum rows of the peer suite. Every result is checked against naive
// loops that do not go through tenferro: a direct sum for the 4-index case
// and the 2x2 product, and for the tensor networks a naive pairwise
// contraction along the same recorded path (for MERA, too large for naive
// loops, our own planner's path: another order; the peers check it too).
//
// Group 8: each instance of ../shared/einsum-instances filled with the
// suite's deterministic inputs (operand k is input number k + 1, in its
// column-major shape), contracted along the instance's recorded opt_flops
// path by an EinsumPlan prepared before the clock (direct tier). The peers
// contract the same pairs in the same order (bench/python/peers.py,
// bench/peers/libtorch_bench.cpp). A line of impl "planner" per instance
// reports our planner's path cost (the instances' convention) next to the
// recorded one, and its search time.

#include "einsum_cases.hpp"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <vector>

#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/einsum/einsum.hpp"

#ifdef TENFERRO_EINSUM_INSTANCES
#include "instance.hpp"
#endif

namespace bench_einsum {

using namespace tenferro;
using bench::input_vector;

namespace {

Tensor make_input(const std::vector<std::int64_t>& shape, std::int64_t off) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  return Tensor::from_col_major(Shape(shape.begin(), shape.end()), input_vector(n, off));
}

#ifdef TENFERRO_EINSUM_INSTANCES

// A column-major tensor for the naive reference: one label per axis.
struct Naive {
  std::vector<std::int64_t> labels;
  std::vector<double> v;
};

// Sum over the labels of a and b not in `keep` of a * b, with axes `keep`
// (column-major). Offsets advance per label (a repeated label sums strides).
Naive contract_naive(const Naive& a, const Naive& b, const std::vector<std::int64_t>& keep,
                     const std::vector<double>& extents) {
  std::vector<std::int64_t> all = keep;
  for (const auto* t : {&a, &b}) {
    for (std::int64_t l : t->labels) {
      if (std::find(all.begin(), all.end(), l) == all.end()) all.push_back(l);
    }
  }
  const std::size_t L = all.size();
  std::vector<std::int64_t> ext(L), sa(L, 0), sb(L, 0);
  for (std::size_t i = 0; i < L; ++i) ext[i] = static_cast<std::int64_t>(extents[all[i]]);
  auto strides = [&](const Naive& t, std::vector<std::int64_t>& s) {
    std::int64_t st = 1;
    for (std::int64_t l : t.labels) {
      const auto i = static_cast<std::size_t>(std::find(all.begin(), all.end(), l) - all.begin());
      s[i] += st;
      st *= ext[i];
    }
  };
  strides(a, sa);
  strides(b, sb);
  std::int64_t n_out = 1, n_sum = 1;
  for (std::size_t i = 0; i < keep.size(); ++i) n_out *= ext[i];
  for (std::size_t i = keep.size(); i < L; ++i) n_sum *= ext[i];
  Naive r{keep, std::vector<double>(static_cast<std::size_t>(n_out), 0.0)};
  std::vector<std::int64_t> idx(L, 0);
  std::int64_t oa = 0, ob = 0;
  for (std::int64_t q = 0; q < n_out; ++q) {
    double acc = 0;
    for (std::int64_t s = 0; s < n_sum; ++s) {
      acc += a.v[static_cast<std::size_t>(oa)] * b.v[static_cast<std::size_t>(ob)];
      for (std::size_t i = keep.size(); i < L; ++i) {  // next summed index
        oa += sa[i], ob += sb[i];
        if (++idx[i] < ext[i]) break;
        oa -= sa[i] * ext[i], ob -= sb[i] * ext[i];
        idx[i] = 0;
      }
    }
    r.v[static_cast<std::size_t>(q)] = acc;
    for (std::size_t i = 0; i < keep.size(); ++i) {  // next output index
      oa += sa[i], ob += sb[i];
      if (++idx[i] < ext[i]) break;
      oa -= sa[i] * ext[i], ob -= sb[i] * ext[i];
      idx[i] = 0;
    }
  }
  return r;
}

// The whole network along `path`, naively; the result in the output's order.
std::vector<double> network_naive(const einsum_path_tool::Instance& inst, const EinsumPath& path,
                                  const std::vector<std::vector<double>>& values) {
  std::vector<Naive> list;
  for (std::size_t k = 0; k < inst.inputs.size(); ++k) list.push_back({inst.inputs[k], values[k]});
  for (const auto& [i, j] : path) {
    Naive a = std::move(list[static_cast<std::size_t>(i)]);
    Naive b = std::move(list[static_cast<std::size_t>(j)]);
    list.erase(list.begin() + j);
    list.erase(list.begin() + i);
    std::vector<std::int64_t> keep;
    for (const auto* t : {&a, &b}) {
      for (std::int64_t l : t->labels) {
        bool kept = std::find(inst.output.begin(), inst.output.end(), l) != inst.output.end();
        for (const Naive& o : list) {
          kept = kept || std::find(o.labels.begin(), o.labels.end(), l) != o.labels.end();
        }
        if (kept && std::find(keep.begin(), keep.end(), l) == keep.end()) keep.push_back(l);
      }
    }
    list.push_back(contract_naive(a, b, keep, inst.extents));
  }
  // The output order: a copy through a one-element tensor sums nothing.
  const Naive one{{}, {1.0}};
  return contract_naive(list.front(), one, inst.output, inst.extents).v;
}

// The GEMMs of `path` alone, one per pairwise step: batch labels (in both
// operands and needed later), contracted ones (in both, not needed), and the
// labels of one operand that are needed (m for the left, n for the right).
// Labels of one operand that are not needed (summed first) and every
// permutation are left out, so this is a floor for any contraction that
// runs the path's pairs on GEMM.
struct GemmStep {
  std::int64_t batch = 1, m = 1, n = 1, k = 1;
};
std::vector<GemmStep> path_gemms(const einsum_path_tool::Instance& inst, const EinsumPath& path) {
  std::vector<std::vector<std::int64_t>> list = inst.inputs;
  std::vector<GemmStep> steps;
  auto has = [](const std::vector<std::int64_t>& v, std::int64_t l) {
    return std::find(v.begin(), v.end(), l) != v.end();
  };
  for (const auto& [i, j] : path) {
    const auto a = list[static_cast<std::size_t>(i)], b = list[static_cast<std::size_t>(j)];
    list.erase(list.begin() + j);
    list.erase(list.begin() + i);
    auto needed = [&](std::int64_t l) {
      bool kept = has(inst.output, l);
      for (const auto& o : list) kept = kept || has(o, l);
      return kept;
    };
    GemmStep st;
    std::vector<std::int64_t> out;
    for (const auto* t : {&a, &b}) {
      for (std::int64_t l : *t) {
        if (has(out, l)) continue;
        const auto e = static_cast<std::int64_t>(inst.extents[static_cast<std::size_t>(l)]);
        const bool both = has(a, l) && has(b, l);
        if (both && !needed(l)) {
          if (t == &a) st.k *= e;  // counted once, from the left operand
          continue;
        }
        if (!needed(l)) continue;
        out.push_back(l);
        (both ? st.batch : t == &a ? st.m : st.n) *= e;
      }
    }
    list.push_back(out);
    steps.push_back(st);
  }
  return steps;
}

EinsumPath opt_flops_path(const einsum_path_tool::Instance& inst) {
  EinsumPath p;
  const EinsumPath rec = einsum_path_tool::recorded_path(inst).value();
  for (const auto& [i, j] : rec) {
    p.emplace_back(std::min(i, j), std::max(i, j));
  }
  return p;
}

// The instances and the factor every input value is multiplied by (peers.py
// and libtorch_bench.cpp use the same): 1.25 brings the 84-factor
// lm_batch_likelihood result from about 1e-8 to order one, so the checks
// (absolute below 1) compare something.
struct Network {
  const char* name;
  double scale;
};
constexpr Network kNetworks[] = {{"str_matrix_chain_multiplication_100", 1.0},
                                 {"str_mps_varying_inner_product_200", 1.0},
                                 {"lm_batch_likelihood_sentence_4_4d", 1.25},
                                 {"nary_matmul_chain_64", 1.0},
                                 {"str_nw_mera_closed_120", 1.0}};

void network_cases(const bench::Options& o, CpuBackend& cpu, const Runner& run,
                   const FloorRunner& floor) {
  for (const Network& net : kNetworks) {
    const std::string name = net.name;
    const auto inst = einsum_path_tool::load_instance(std::string(TENFERRO_EINSUM_INSTANCES) + "/" +
                                                      name + ".json");
    const std::string size = std::to_string(inst.inputs.size());
    if (!bench::selected(o, bench::case_id(name, size, "recorded"))) continue;
    std::vector<Tensor> xs;
    std::vector<std::vector<double>> values;
    for (std::size_t k = 0; k < inst.inputs.size(); ++k) {
      std::vector<std::int64_t> shape;
      std::int64_t n = 1;
      for (std::int64_t l : inst.inputs[k]) {
        shape.push_back(static_cast<std::int64_t>(inst.extents[static_cast<std::size_t>(l)]));
        n *= shape.back();
      }
      values.push_back(input_vector(n, static_cast<std::int64_t>(k) + 1));
      for (double& v : values.back()) v *= net.scale;
      xs.push_back(Tensor::from_col_major(Shape(shape.begin(), shape.end()), values.back()));
    }
    const EinsumPath path = opt_flops_path(inst);
    // Prepared before the clock, as the peers build their pairwise equations
    // before it; the timed call only contracts.
    std::vector<Shape> shapes;
    for (const Tensor& x : xs) shapes.push_back(x.shape());
    const EinsumPlan plan = EinsumPlan::prepare(EinsumLabels{inst.inputs, inst.output}, DType::F64,
                                                shapes, {.path = path});
    // Our planner on the same network (also the reference of the networks
    // too large for the naive loops: another contraction order).
    const auto ours = einsum_path_tool::plan_instance(inst);
    const auto rec = einsum_path_tool::instance_cost(inst, path);
    constexpr double kNaiveLog10Flops = 9.5;
    std::vector<double> want;  // computed on first use (the check before timing)
    run(
        name, size, "recorded", [&] { return plan.run(xs, cpu); },
        [&](std::int64_t q) {
          if (want.empty()) {
            if (rec.log10_flops <= kNaiveLog10Flops) {
              want = network_naive(inst, path, values);
            } else {
              const Tensor r = EinsumPlan::prepare(EinsumLabels{inst.inputs, inst.output},
                                                   DType::F64, shapes, {.path = ours.path})
                                   .run(xs, cpu);
              want = r.to_vector<double>();
            }
          }
          return want[static_cast<std::size_t>(q)];
        });
    // The floor: the path's GEMMs alone through cblas_dgemm (one call per
    // batch index). A step reads an input operand in the input's own memory
    // (every input is streamed in once, as in any contraction) and an
    // intermediate in the buffer its step wrote; buffers are reused once
    // their intermediate is consumed, as an allocator would; all allocated
    // before the clock.
    {
      const std::vector<GemmStep> gemms = path_gemms(inst, path);
      struct Source {
        const double* a;
        const double* b;
        std::size_t c;  // the buffer written
      };
      std::vector<std::vector<double>> buffers;
      std::vector<std::size_t> free_buffers;
      // Per list item: the input it is (>= 0), or -1 - its buffer.
      std::vector<std::int64_t> items(xs.size());
      std::iota(items.begin(), items.end(), std::int64_t{0});
      std::vector<std::int64_t> plan_items;  // per step: a, b item codes, c buffer
      for (std::size_t s = 0; s < path.size(); ++s) {
        const auto [i, j] = path[s];
        const std::int64_t a = items[static_cast<std::size_t>(i)];
        const std::int64_t b = items[static_cast<std::size_t>(j)];
        items.erase(items.begin() + j);
        items.erase(items.begin() + i);
        const GemmStep& g = gemms[s];
        const auto need = static_cast<std::size_t>(g.batch * g.m * g.n);
        std::size_t c = buffers.size();
        for (std::size_t f = 0; f < free_buffers.size(); ++f) {
          if (buffers[free_buffers[f]].size() >= need) {
            c = free_buffers[f];
            free_buffers.erase(free_buffers.begin() + static_cast<std::ptrdiff_t>(f));
            break;
          }
        }
        if (c == buffers.size()) buffers.emplace_back(need, 0.0);
        for (std::int64_t code : {a, b}) {
          if (code < 0) free_buffers.push_back(static_cast<std::size_t>(-1 - code));
        }
        items.push_back(-1 - static_cast<std::int64_t>(c));
        plan_items.insert(plan_items.end(), {a, b, static_cast<std::int64_t>(c)});
      }
      // Pointers only now that every buffer exists (the vector grew above).
      auto data = [&](std::int64_t code) -> const double* {
        return code >= 0 ? static_cast<const double*>(xs[static_cast<std::size_t>(code)].raw_data())
                         : buffers[static_cast<std::size_t>(-1 - code)].data();
      };
      std::vector<Source> sources;
      for (std::size_t s = 0; s < path.size(); ++s) {
        sources.push_back({data(plan_items[3 * s]), data(plan_items[3 * s + 1]),
                           static_cast<std::size_t>(plan_items[3 * s + 2])});
      }
      floor(name, size, "recorded", [&] {
        for (std::size_t s = 0; s < gemms.size(); ++s) {
          const GemmStep& g = gemms[s];
          double* c = buffers[sources[s].c].data();
          for (std::int64_t q = 0; q < g.batch; ++q) {
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(g.m),
                        static_cast<int>(g.n), static_cast<int>(g.k), 1.0,
                        sources[s].a + q * g.m * g.k, static_cast<int>(g.m),
                        sources[s].b + q * g.k * g.n, static_cast<int>(g.k), 0.0, c + q * g.m * g.n,
                        static_cast<int>(g.m));
          }
        }
      });
    }
    // Our planner's path cost against the recorded one (both under the
    // instances' convention) and its search time.
    std::printf(
        "{\"case\":\"%s\",\"size\":\"%s\",\"impl\":\"planner\",\"variant\":\"recorded\","
        "\"threads\":%d,\"search_ms\":%.3f,\"log10_flops\":%.4f,\"recorded_log10_flops\":%.4f,"
        "\"log2_size\":%.4f,\"recorded_log2_size\":%.4f}\n",
        name.c_str(), size.c_str(), o.threads, ours.search_ms, ours.cost.log10_flops,
        rec.log10_flops, ours.cost.log2_size, rec.log2_size);
    std::fflush(stdout);
  }
}

#endif

}  // namespace

void run_cases(const bench::Options& o, CpuBackend& cpu, const Runner& run,
               const FloorRunner& floor) {
  {
    // The peers' "abcd,dbef->acef" on row-major arrays is, on our
    // column-major axes (reversed), "dcba,febd->feca".
    const std::int64_t n = 32;
    const Tensor a = make_input({n, n, n, n}, 1), b = make_input({n, n, n, n}, 2);
    const auto av = input_vector(n * n * n * n, 1), bv = input_vector(n * n * n * n, 2);
    run(
        "einsum_abcd_dbef_acef", "32", "",
        [&] {
          return einsum("dcba,febd->feca", {a, b}, cpu);
        },
        [&](std::int64_t q) {
          const std::int64_t f = q % n, e = q / n % n, c = q / (n * n) % n, aa = q / (n * n * n);
          double s = 0;
          for (std::int64_t bb = 0; bb < n; ++bb) {
            for (std::int64_t d = 0; d < n; ++d) {
              s += av[static_cast<std::size_t>(d + n * (c + n * (bb + n * aa)))] *
                   bv[static_cast<std::size_t>(f + n * (e + n * (bb + n * d)))];
            }
          }
          return s;
        });
  }
  {
    // Memory-limited: the peers' "abc,cde,efa->bdf" (ours "cba,edc,afe->fdb")
    // holds an n^4 intermediate unsliced; a limit of two n^3 intermediates
    // slices one summed label and runs two slices at once (2 threads; the
    // steps of a slice are below the size BLAS threads itself).
    const std::int64_t n = 20;
    const Tensor a = make_input({n, n, n}, 1), b = make_input({n, n, n}, 2),
                 c = make_input({n, n, n}, 3);
    const auto av = input_vector(n * n * n, 1), bv = input_vector(n * n * n, 2),
               cv = input_vector(n * n * n, 3);
    EinsumOptions limited;
    limited.memory_limit = 2.0 * static_cast<double>(n * n * n) * 8.0;
    run(
        "einsum_sliced_abc_cde_efa_bdf", "20", "",
        [&] {
          return einsum("cba,edc,afe->fdb", {a, b, c}, cpu, limited);
        },
        [&](std::int64_t q) {
          const std::int64_t f = q % n, d = q / n % n, bb = q / (n * n);
          double s = 0;
          for (std::int64_t aa = 0; aa < n; ++aa) {
            for (std::int64_t cc = 0; cc < n; ++cc) {
              for (std::int64_t e = 0; e < n; ++e) {
                s += av[static_cast<std::size_t>(cc + n * (bb + n * aa))] *
                     bv[static_cast<std::size_t>(e + n * (d + n * cc))] *
                     cv[static_cast<std::size_t>(aa + n * (f + n * e))];
              }
            }
          }
          return s;
        });
  }
  {
    // Eager, warm: the plan comes from the runtime's cache.
    auto rt = EagerRuntime::make_cpu(CpuBackendOptions{o.threads});
    const EagerTensor a = rt->tensor(make_input({2, 2}, 1)), b = rt->tensor(make_input({2, 2}, 2));
    const auto av = input_vector(4, 1), bv = input_vector(4, 2);
    run(
        "overhead_einsum_2x2", "2", "",
        [&] {
          return einsum("ij,jk->ik", {a, b}).value();
        },
        [&](std::int64_t q) {
          const std::int64_t i = q % 2, j = q / 2;
          return av[i] * bv[2 * j] + av[i + 2] * bv[1 + 2 * j];
        });
  }
#ifdef TENFERRO_EINSUM_INSTANCES
  network_cases(o, cpu, run, floor);
#endif
}

}  // namespace bench_einsum
