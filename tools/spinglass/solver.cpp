// The tropical tensor network of a spin glass, contracted three ways: value
// and count, gradient (a ground state), and a second order (a check).

#include "solver.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "tenferro/ad/eager.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"

namespace spinglass_tool {
namespace {

using tenferro::DType;
using tenferro::EinsumOptions;
using tenferro::EinsumPlan;
using tenferro::Tensor;

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

template <class T>
Tensor tensor_of(const tenferro::Shape& shape, const std::vector<std::int64_t>& values) {
  std::vector<T> data;
  for (const std::int64_t v : values) data.push_back(static_cast<T>(v));
  return Tensor::from_col_major(shape, data);
}

Tensor make(DType dtype, const tenferro::Shape& shape, const std::vector<std::int64_t>& values) {
  return dtype == DType::I64 ? tensor_of<std::int64_t>(shape, values)
                             : tensor_of<double>(shape, values);
}

std::int64_t scalar_of(const Tensor& t) {
  return t.dtype() == DType::I64 ? t.item<std::int64_t>()
                                 : static_cast<std::int64_t>(std::llround(t.item<double>()));
}

std::string mib(double bytes) {
  std::ostringstream s;
  s.precision(3);
  s << bytes / 1048576 << " MiB";
  return s.str();
}

std::string describe(const EinsumPlan& plan) {
  std::ostringstream s;
  s.precision(3);
  s << "log10 flops " << std::log10(std::max(plan.flops, 1.0)) << ", largest intermediate 2^"
    << std::log2(std::max(plan.largest_intermediate, 1.0)) << " elements";
  if (plan.slices > 1) {
    s << ", " << plan.slices << " slices of 2^"
      << std::log2(std::max(plan.sliced_largest_intermediate, 1.0)) << " (overhead "
      << plan.sliced_flops / plan.flops << "x)";
  }
  return s.str();
}

using Say = std::function<void(const std::string&)>;

// The user's options for a max-plus order search, the memory limit scaled.
EinsumOptions max_plus(const EinsumOptions& user, double limit_scale) {
  EinsumOptions o = user;
  o.semiring = tenferro::Semiring::MaxPlus;
  o.path.reset();
  if (o.memory_limit) *o.memory_limit *= limit_scale;
  return o;
}

OrderReport search_order(const Network& net, const EinsumOptions& o, const Say& say) {
  OrderReport report;
  const auto t0 = std::chrono::steady_clock::now();
  report.plan = tenferro::einsum_path(net.labels, net.shapes, o);
  report.search_ms = ms_since(t0);
  say("planned in " + std::to_string(static_cast<long long>(report.search_ms)) +
      " ms: " + describe(report.plan));
  return report;
}

// The spins the gradient of the network's max-plus value (f64) marks, for
// the free spins (spins[i] == 0, whose vertex tensors have two entries);
// whether every such gradient is one-hot.
bool gradient_spins(const Network& net, const tenferro::EinsumPath& path, tenferro::CpuBackend& cpu,
                    std::vector<int>& spins) {
  const auto rt = tenferro::EagerRuntime::attached(cpu);
  std::vector<tenferro::EagerTensor> operands;
  for (std::size_t k = 0; k < net.operands.size(); ++k) {
    const bool leaf = k < spins.size() && spins[k] == 0;
    operands.push_back(leaf ? rt->variable(net.operands[k]) : rt->tensor(net.operands[k]));
  }
  EinsumOptions o;
  o.semiring = tenferro::Semiring::MaxPlus;
  o.path = path;
  tenferro::einsum(net.labels, operands, o).backward();
  bool one_hot = true;
  for (std::size_t i = 0; i < spins.size(); ++i) {
    if (spins[i] != 0) continue;
    const auto g = operands[i].grad().host_value().to_vector<double>();
    one_hot = one_hot && g.size() == 2 && g[0] + g[1] == 1 && g[0] * g[1] == 0;
    spins[i] = g.size() == 2 && g[1] > g[0] ? 1 : -1;
  }
  return one_hot;
}

// A ground state from the gradient. Its tape holds every intermediate of the
// contraction, far more than the largest: with a memory limit, an order is
// sliced until one slice's tape fits, the slices are contracted (values only)
// until one reaches the ground value, and the gradient runs on that slice
// alone, its sliced spins fixed.
void recover_configuration(const Instance& inst, const Network& net, const EinsumOptions& base,
                           tenferro::CpuBackend& cpu, const Say& say, Solution& sol) {
  OrderReport order = sol.first;
  double tape = gradient_tape_bytes(net, order.plan), searched_ms = 0;
  // Half the limit (the pool may still hold the counting's buffers). The
  // tape shrinks more slowly than the largest intermediate: aim the
  // intermediate limit at the square root of the ratio, and repeat. A tape
  // of many small steps cannot fit a tiny limit: stop when slicing would
  // cost more than 16 times the first order's flops.
  const double budget = base.memory_limit.value_or(0) / 2;
  double limit = 2 * budget;
  while (base.memory_limit && tape > budget) {
    limit =
        std::min(limit / 2, 8 * order.plan.sliced_largest_intermediate * std::sqrt(budget / tape));
    if (limit < 64) break;
    say("the gradient's tape (~" + mib(tape) +
        ") exceeds half the memory limit: an order with intermediates of at most " + mib(limit) +
        "...");
    EinsumOptions o = base;
    o.memory_limit = limit;
    OrderReport next = search_order(net, o, say);
    searched_ms += next.search_ms;
    if (next.plan.sliced_flops > 16 * sol.first.plan.sliced_flops ||
        next.plan.sliced_labels.size() > 30) {
      say("slicing the gradient's order further costs too much: going on over the limit");
      break;
    }
    order = std::move(next);
    tape = gradient_tape_bytes(net, order.plan);
    sol.gradient_order_differs = true;
  }
  sol.gradient_tape_bytes = tape;
  order.search_ms = searched_ms;

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<int> spins(static_cast<std::size_t>(inst.n), 0);
  const std::vector<std::int64_t>& sliced = order.plan.sliced_labels;
  if (!sliced.empty()) {
    say("contracting up to " + std::to_string(std::int64_t{1} << sliced.size()) +
        " slices for the one that reaches the ground energy...");
    EinsumOptions o;
    o.semiring = tenferro::Semiring::MaxPlus;
    o.path = order.plan.path;
    const double target = -static_cast<double>(sol.ground_energy);
    bool found = false;
    for (std::uint64_t a = 0; a < (std::uint64_t{1} << sliced.size()) && !found; ++a) {
      for (std::size_t r = 0; r < sliced.size(); ++r) {
        spins[static_cast<std::size_t>(sliced[r])] = (a >> r) & 1 ? 1 : -1;
      }
      const Network part = build_network(inst, DType::F64, spins);
      found = tenferro::einsum(part.labels, part.operands, cpu, o).item<double>() == target;
      ++sol.gradient_slices_contracted;
    }
    if (!found)
      throw std::runtime_error("no slice of the gradient's order reaches the ground energy");
  }
  say("gradient (configuration)...");
  sol.gradient_one_hot =
      gradient_spins(build_network(inst, DType::F64, spins), order.plan.path, cpu, spins);
  sol.configuration = spins;
  sol.gradient_ms = ms_since(t0);
  order.contract_ms = sol.gradient_ms;
  sol.gradient_order = std::move(order);
  sol.energy_check = energy(inst, sol.configuration);
  say("gradient in " + std::to_string(static_cast<long long>(sol.gradient_ms)) +
      " ms; E(configuration) = " + std::to_string(*sol.energy_check));
}

}  // namespace

double gradient_tape_bytes(const Network& net, const EinsumPlan& plan) {
  // Each pairwise step keeps its result (values), its winning indices (i64)
  // and, once the tape runs back, its cotangent: 24 bytes per element of
  // every result, plus the largest step's operand cotangents in flight.
  std::map<std::int64_t, std::int64_t> uses;
  std::vector<std::vector<std::int64_t>> items;
  for (const auto& in : net.labels.inputs) {
    std::vector<std::int64_t> labels(in);
    std::sort(labels.begin(), labels.end());
    labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
    for (const std::int64_t l : labels) ++uses[l];
    items.push_back(std::move(labels));
  }
  const std::set<std::int64_t> sliced(plan.sliced_labels.begin(), plan.sliced_labels.end());
  const auto elements = [&](const std::vector<std::int64_t>& labels) {
    double e = 1;
    for (const std::int64_t l : labels) e *= sliced.count(l) != 0 ? 1 : 2;
    return e;
  };
  double total = 0, largest = 0;
  for (const auto& [i, j] : plan.path) {
    std::vector<std::int64_t> merged;
    std::set_union(items[static_cast<std::size_t>(i)].begin(),
                   items[static_cast<std::size_t>(i)].end(),
                   items[static_cast<std::size_t>(j)].begin(),
                   items[static_cast<std::size_t>(j)].end(), std::back_inserter(merged));
    for (const auto* side :
         {&items[static_cast<std::size_t>(i)], &items[static_cast<std::size_t>(j)]}) {
      for (const std::int64_t l : *side) --uses[l];
    }
    std::vector<std::int64_t> result;  // labels other operands still hold (the output is empty)
    for (const std::int64_t l : merged) {
      if (uses[l] > 0) result.push_back(l);
    }
    for (const std::int64_t l : result) ++uses[l];
    const double e = elements(result);
    total += e;
    largest = std::max(largest, e);
    items.erase(items.begin() + j);
    items.erase(items.begin() + i);
    items.push_back(std::move(result));
  }
  return 24 * total + 16 * largest;
}

Network build_network(const Instance& inst, DType dtype, const std::vector<int>& fixed) {
  if (dtype != DType::F64 && dtype != DType::I64) {
    throw InstanceError("the network's values are f64 or i64");
  }
  const auto fixed_at = [&](std::int64_t i) {
    return fixed.empty() ? 0 : fixed[static_cast<std::size_t>(i)];
  };
  // The values of spin i along its axis: index 0 is s = -1, index 1 is
  // s = +1; a fixed spin's axis has extent 1.
  const auto spins = [&](std::int64_t i) {
    return fixed_at(i) != 0 ? std::vector<std::int64_t>{fixed_at(i)}
                            : std::vector<std::int64_t>{-1, 1};
  };
  Network net;
  net.labels.output = std::vector<std::int64_t>{};
  for (std::int64_t i = 0; i < inst.n; ++i) {  // w(s) = h s
    const std::int64_t h = inst.fields[static_cast<std::size_t>(i)];
    std::vector<std::int64_t> w;
    for (const std::int64_t s : spins(i)) w.push_back(h * s);
    net.labels.inputs.push_back({i});
    net.operands.push_back(make(dtype, {static_cast<std::int64_t>(w.size())}, w));
  }
  for (const Edge& e : inst.edges) {  // B(a, b) = J s_a s_b, column-major
    std::vector<std::int64_t> b;
    const auto si = spins(e.i), sj = spins(e.j);
    for (const std::int64_t t : sj) {
      for (const std::int64_t s : si) b.push_back(e.coupling * s * t);
    }
    net.labels.inputs.push_back({e.i, e.j});
    net.operands.push_back(make(
        dtype, {static_cast<std::int64_t>(si.size()), static_cast<std::int64_t>(sj.size())}, b));
  }
  for (const Tensor& t : net.operands) net.shapes.push_back(t.shape());
  return net;
}

bool Solution::consistent() const {
  if (energy_check && *energy_check != ground_energy) return false;
  if (!gradient_one_hot) return false;
  if (second_order_energy && *second_order_energy != ground_energy) return false;
  if (second_order_degeneracy && *second_order_degeneracy != degeneracy) return false;
  return true;
}

Solution solve(const Instance& inst, const SolveOptions& options) {
  const auto say = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  // The buffer pool keeps freed buffers for reuse: at most the memory limit.
  tenferro::CpuBackendOptions backend_options{.num_threads = options.threads};
  if (options.einsum.memory_limit) {
    backend_options.pool_max_bytes = static_cast<std::size_t>(std::min(
        *options.einsum.memory_limit, static_cast<double>(backend_options.pool_max_bytes)));
  }
  tenferro::CpuBackend cpu(backend_options);
  const Network net = build_network(inst, options.dtype);
  const EinsumOptions base = max_plus(options.einsum, 1);
  // The counting contraction's elements are a value and an f64 count: plan
  // its orders for half the limit in values.
  const EinsumOptions counting = max_plus(options.einsum, 0.5);

  // Each order is searched once, then forced (the contractions do not
  // search again).
  const auto forced = [&](const EinsumOptions& o, const OrderReport& report) {
    EinsumOptions f = o;
    f.path = report.plan.path;
    return f;
  };
  const auto count = [&](const EinsumOptions& o, OrderReport& report) {
    say("contracting (max-plus value and count)...");
    const auto t0 = std::chrono::steady_clock::now();
    const auto counted = tenferro::einsum_count(net.labels, net.operands, cpu, forced(o, report));
    report.contract_ms = ms_since(t0);
    say("contracted in " + std::to_string(static_cast<long long>(report.contract_ms)) + " ms");
    return std::make_pair(-scalar_of(counted.value), counted.count.item<double>());
  };

  Solution sol;
  say("planning " + std::to_string(net.operands.size()) + " tensors (" + std::to_string(inst.n) +
      " spins, " + std::to_string(inst.edges.size()) + " edges)...");
  sol.first = search_order(net, counting, say);
  std::tie(sol.ground_energy, sol.degeneracy) = count(counting, sol.first);

  if (options.configuration) recover_configuration(inst, net, base, cpu, say, sol);

  if (options.second_order) {
    // Another seed of the same strategy; a few more seeds, then Greedy, when
    // the search returns the first path again (small networks).
    say("second contraction order...");
    OrderReport second;
    EinsumOptions o = counting;
    for (int attempt = 1; attempt <= 4; ++attempt) {
      o.seed = counting.seed + static_cast<std::uint64_t>(attempt);
      if (attempt == 4) o.strategy = tenferro::EinsumStrategy::Greedy;
      second = search_order(net, o, say);
      if (second.plan.path != sol.first.plan.path) break;
    }
    sol.second_path_differs = second.plan.path != sol.first.plan.path;
    const auto [energy2, degeneracy2] = count(o, second);
    sol.second_order_energy = energy2;
    sol.second_order_degeneracy = degeneracy2;
    sol.second = std::move(second);
  }
  return sol;
}

}  // namespace spinglass_tool
