// Group 20 of the benchmark suite (bench/driver.py): sharded tensors on MPI.
// The same computations run as one process (--mode local --threads T) and as
// P ranks of one thread each (--mode dist under mpirun -np P):
//   dist_matmul       C = A B, n x n f64 (n = 4096; --quick 1024), A and B
//                     row-sharded (Shard(0)): the planner gathers B's rows and
//                     keeps C row-sharded;
//   dist_matmul_grad  the gradient of sum(C * C) in A and B (eager backward);
//   dist_chain        the network "ij,jk,kl,lm->im" of four n x n matrices
//                     (n = 1024; --quick 512);
//   dist_einsum_mps, dist_einsum_mera  the networks
//                     str_mps_varying_inner_product_200 and
//                     str_nw_mera_closed_120 of ../shared/einsum-instances
//                     (group 8's inputs), every operand sharded along its
//                     largest axis. One process: tenferro::einsum along our
//                     planner's path; ranks: the same path, one dist::einsum
//                     per pairwise step (the networks have more labels than
//                     dist::einsum's equations have letters).
// Each repetition starts after a barrier and lasts until the slowest rank is
// done (the time is the maximum over the ranks); a fixed number of
// repetitions, so every rank runs the same collectives. Rank 0 prints one
// JSON line per case: the median, the bytes one rank sent in one call
// (comm_stats), the planner's bandwidth-optimal model of the steps it chose
// (EinsumReport::model_bytes; the gradient: twice the forward's, as each
// collective's transpose moves what the collective moved) and, on ranks, the
// relative difference from the one-process result (max |d| / max |ref|).
//
//   distributed_bench --mode local|dist [--threads T] [--quick|--smoke]

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "dist_common.hpp"
#include "harness.hpp"
#include "tenferro/distributed/distributed.hpp"
#include "tenferro/tenferro.hpp"

#ifdef TENFERRO_EINSUM_INSTANCES
#include "instance.hpp"
#endif

namespace tf = tenferro;
namespace dist = tenferro::dist;

namespace {

using dist_bench::call_ns;
using dist_bench::relative_difference;
using dist_bench::Setup;

int repetitions(const Setup& s) {
  return s.smoke ? 1 : s.quick ? 5 : 7;
}

/// The median over repetitions of the slowest rank's time (ns).
double timed(const Setup& s, MPI_Comm comm, const std::function<void()>& fn) {
  fn();  // warm-up
  std::vector<double> times;
  for (int r = 0; r < repetitions(s); ++r) times.push_back(call_ns(comm, fn));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

/// What one case measured; bytes and the check on ranks only.
struct Row {
  std::string name, size;
  double ns = 0;
  std::uint64_t bytes = 0;
  double model_bytes = 0;
  std::optional<double> rel_diff;
};

Row make_row(std::string name, std::string size, double ns = 0) {
  Row r;
  r.name = std::move(name);
  r.size = std::move(size);
  r.ns = ns;
  return r;
}

#ifdef TENFERRO_EINSUM_INSTANCES

/// An instance with group 8's inputs (operand k is input k + 1, column-major).
struct Network {
  const char* case_name;
  const char* file;
  einsum_path_tool::Instance inst;
  tf::EinsumPath path;  // our planner's, for both sides
  std::vector<tf::Tensor> operands;
};

Network load_network(const char* case_name, const char* file) {
  Network net{case_name,
              file,
              einsum_path_tool::load_instance(std::string(TENFERRO_EINSUM_INSTANCES) + "/" + file +
                                              ".json"),
              {},
              {}};
  net.path = einsum_path_tool::plan_instance(net.inst).path;
  for (std::size_t k = 0; k < net.inst.inputs.size(); ++k) {
    std::vector<std::int64_t> shape;
    std::int64_t n = 1;
    for (const std::int64_t l : net.inst.inputs[k]) {
      shape.push_back(static_cast<std::int64_t>(net.inst.extents[static_cast<std::size_t>(l)]));
      n *= shape.back();
    }
    const std::vector<double> v = bench::input_vector(n, static_cast<std::int64_t>(k) + 1);
    net.operands.push_back(tf::Tensor::from_col_major(shape, std::span<const double>(v)));
  }
  return net;
}

/// A sharded operand and its dense labels.
struct Term {
  dist::DTensor x;
  std::vector<std::int64_t> labels;
};

/// The network along `path`, one dist::einsum per pairwise step, its
/// labels renamed to letters; the steps' model bytes added to `model`.
dist::DTensor contract_network(const Network& net, std::vector<Term> terms, double* model) {
  const auto& output = net.inst.output;
  for (const auto& [p, q] : net.path) {
    const std::size_t i = static_cast<std::size_t>(std::min(p, q));
    const std::size_t j = static_cast<std::size_t>(std::max(p, q));
    const Term a = terms[i], b = terms[j];
    terms.erase(terms.begin() + static_cast<std::ptrdiff_t>(j));
    terms.erase(terms.begin() + static_cast<std::ptrdiff_t>(i));
    std::vector<std::int64_t> seen, keep;
    for (const Term* t : {&a, &b}) {
      for (const std::int64_t l : t->labels) {
        if (std::find(seen.begin(), seen.end(), l) != seen.end()) continue;
        seen.push_back(l);
        bool used = std::find(output.begin(), output.end(), l) != output.end();
        for (const Term& o : terms) {
          used |= std::find(o.labels.begin(), o.labels.end(), l) != o.labels.end();
        }
        if (used) keep.push_back(l);
      }
    }
    if (seen.size() > 52) {
      tf::fail(tf::ErrorKind::Unsupported, "distributed_bench", net.file, ": a step with ",
               seen.size(), " labels, more than dist::einsum's 52 letters");
    }
    const auto letters = [&](const std::vector<std::int64_t>& ls) {
      std::string s;
      for (const std::int64_t l : ls) {
        const auto at = std::find(seen.begin(), seen.end(), l) - seen.begin();
        s += static_cast<char>(at < 26 ? 'a' + at : 'A' + (at - 26));
      }
      return s;
    };
    dist::EinsumReport report;
    const dist::DTensor y = dist::einsum(
        letters(a.labels) + "," + letters(b.labels) + "->" + letters(keep), {a.x, b.x}, &report);
    *model += report.model_bytes;
    terms.push_back({y, keep});
  }
  if (terms.size() != 1 || terms[0].labels != output) {
    tf::fail(tf::ErrorKind::Internal, "distributed_bench", net.file,
             ": the path does not end in the output");
  }
  return terms[0].x;
}

#endif

}  // namespace

int main(int argc, char** argv) {
  const Setup s = dist_bench::parse(argc, argv);
  try {
    const dist_bench::World w = dist_bench::world(s);
    const int ranks = w.ranks, me = w.me;
    const MPI_Comm comm = w.comm;
    const int threads = s.dist ? 1 : s.threads;
    const auto& rt = w.rt;
    const std::int64_t n = s.smoke ? 64 : s.quick ? 1024 : 4096;
    const std::int64_t n_chain = s.smoke ? 64 : s.quick ? 512 : 1024;
    tf::Generator gen(7);
    std::vector<tf::Tensor> m, c;
    for (int k = 0; k < 2; ++k) m.push_back(tf::randn({n, n}, tf::f64, gen));
    for (int k = 0; k < 4; ++k) c.push_back(tf::randn({n_chain, n_chain}, tf::f64, gen));
    const std::string variant =
        s.dist ? std::to_string(ranks) + " ranks" : std::string("1 process");
    // The distributed results must equal the one-process ones to 1e-10
    // (relative): a mismatch is marked in the table and the exit status is 3.
    bool mismatch = false;
    const auto report = [&](const Row& r) {
      if (r.rel_diff && !(*r.rel_diff <= 1e-10)) {
        mismatch = true;
        std::fprintf(stderr, "distributed_bench: %s %s differs from one process by %.3e\n",
                     r.name.c_str(), r.size.c_str(), *r.rel_diff);
      }
      if (me != 0) return;
      std::string extra;
      if (s.dist) {
        char buf[160];
        std::snprintf(buf, sizeof buf, ",\"bytes_sent\":%llu,\"model_bytes\":%.1f",
                      static_cast<unsigned long long>(r.bytes), r.model_bytes);
        extra = buf;
        if (r.rel_diff) {
          std::snprintf(buf, sizeof buf, ",\"rel_diff\":%.3e", *r.rel_diff);
          extra += buf;
        }
      }
      std::printf(
          "{\"case\":\"%s\",\"size\":\"%s\",\"impl\":\"tenferro\",\"variant\":\"%s\","
          "\"threads\":%d,\"median_ns\":%.1f,\"reps\":%d%s}\n",
          r.name.c_str(), r.size.c_str(), variant.c_str(), s.dist ? ranks : threads, r.ns,
          repetitions(s), extra.c_str());
      std::fflush(stdout);
    };
#ifdef TENFERRO_EINSUM_INSTANCES
    // MERA's intermediates reach 256 MiB and 5e10 flops: not in --smoke.
    std::vector<Network> networks;
    networks.push_back(load_network("dist_einsum_mps", "str_mps_varying_inner_product_200"));
    if (!s.smoke) networks.push_back(load_network("dist_einsum_mera", "str_nw_mera_closed_120"));
#endif
    const auto one_process_gradient = [&](std::vector<tf::Tensor>* grads) {
      auto va = rt->variable(m[0]), vb = rt->variable(m[1]);
      const auto y = tf::matmul(va, vb);
      tf::sum(y * y).backward();
      if (grads) *grads = {va.grad().value(), vb.grad().value()};
    };
    if (!s.dist) {
      const auto a = rt->tensor(m[0]), b = rt->tensor(m[1]);
      std::vector<tf::EagerTensor> ec;
      for (const auto& t : c) ec.push_back(rt->tensor(t));
      const std::string sn = std::to_string(n), sc = std::to_string(n_chain);
      report(make_row("dist_matmul", sn, timed(s, comm, [&] { (void)tf::matmul(a, b).value(); })));
      report(
          make_row("dist_matmul_grad", sn, timed(s, comm, [&] { one_process_gradient(nullptr); })));
      report(make_row("dist_chain", sc,
                      timed(s, comm, [&] { (void)tf::einsum("ij,jk,kl,lm->im", ec).value(); })));
#ifdef TENFERRO_EINSUM_INSTANCES
      for (const Network& net : networks) {
        std::vector<tf::EagerTensor> xs;
        for (const auto& t : net.operands) xs.push_back(rt->tensor(t));
        const tf::EinsumLabels labels{net.inst.inputs, net.inst.output};
        report(make_row(net.case_name, std::to_string(net.operands.size()), timed(s, comm, [&] {
                          (void)tf::einsum(labels, xs, {.path = net.path}).value();
                        })));
      }
#endif
      return 0;
    }
    const dist::Mesh mesh = dist::Mesh::line();
    const dist::Placements rows = {dist::Shard(0)};
    const auto put = [&](const tf::Tensor& t, dist::Placements p) {
      return dist::distribute(rt->tensor(t), mesh, std::move(p));
    };
    const auto bytes_of = [&](const std::function<void()>& fn) {
      dist::reset_comm_stats();
      fn();
      return dist::comm_stats().bytes_sent;
    };
    // A case: its time, then one more call for its bytes, model and result.
    const auto measure = [&](Row r, const std::function<void(dist::EinsumReport*)>& fn) {
      r.ns = timed(s, comm, [&] { fn(nullptr); });
      dist::EinsumReport rep;
      r.bytes = bytes_of([&] { fn(&rep); });
      r.model_bytes = rep.model_bytes;
      return r;
    };

    const dist::DTensor da = put(m[0], rows), db = put(m[1], rows);
    dist::DTensor product;
    Row row = measure(make_row("dist_matmul", std::to_string(n)), [&](dist::EinsumReport* rep) {
      product = dist::matmul(da, db, rep);
      (void)product.local().value();
    });
    row.rel_diff = relative_difference(dist::full_tensor(product).value(),
                                       tf::matmul(m[0], m[1], rt->backend()));
    const double matmul_model = row.model_bytes;
    report(row);

    dist::DTensor ga, gb;
    row = measure(make_row("dist_matmul_grad", std::to_string(n)), [&](dist::EinsumReport* rep) {
      dist::DTensor a = da, b = db;
      a = dist::DTensor(a.shape(), a.mesh(), a.placements(), rt->variable(a.local().value()));
      b = dist::DTensor(b.shape(), b.mesh(), b.placements(), rt->variable(b.local().value()));
      const dist::DTensor y = dist::matmul(a, b, rep);
      dist::backward(dist::sum(y * y));
      ga = a.grad();
      gb = b.grad();
    });
    row.model_bytes = 2 * matmul_model;
    std::vector<tf::Tensor> want;
    one_process_gradient(&want);
    row.rel_diff = std::max(relative_difference(dist::full_tensor(ga).value(), want[0]),
                            relative_difference(dist::full_tensor(gb).value(), want[1]));
    report(row);

    std::vector<dist::DTensor> dc;
    for (const auto& t : c) dc.push_back(put(t, rows));
    dist::DTensor chain;
    row = measure(make_row("dist_chain", std::to_string(n_chain)), [&](dist::EinsumReport* rep) {
      chain = dist::einsum("ij,jk,kl,lm->im", dc, rep);
      (void)chain.local().value();
    });
    row.rel_diff = relative_difference(dist::full_tensor(chain).value(),
                                       tf::einsum("ij,jk,kl,lm->im", c, rt->backend()));
    report(row);

#ifdef TENFERRO_EINSUM_INSTANCES
    for (const Network& net : networks) {
      std::vector<Term> terms;
      for (std::size_t k = 0; k < net.operands.size(); ++k) {
        const tf::Tensor& t = net.operands[k];
        const auto& sh = t.shape();
        const auto largest = std::max_element(sh.begin(), sh.end()) - sh.begin();
        terms.push_back({put(t, {dist::Shard(largest)}), net.inst.inputs[k]});
      }
      dist::DTensor result;
      row = measure(make_row(net.case_name, std::to_string(net.operands.size())),
                    [&](dist::EinsumReport* rep) {
                      double model = 0;
                      result = contract_network(net, terms, &model);
                      (void)result.local().value();
                      if (rep) rep->model_bytes = model;
                    });
      const tf::EinsumLabels labels{net.inst.inputs, net.inst.output};
      row.rel_diff =
          relative_difference(dist::full_tensor(result).value(),
                              tf::einsum(labels, net.operands, rt->backend(), {.path = net.path}));
      report(row);
    }
#endif
    return mismatch ? 3 : 0;
  } catch (const tf::Error& e) {
    std::fprintf(stderr, "distributed_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
