// In-process A/B of the memory-bound rows against libtorch (driven by
// bench/driver.py after the main table). Both sides run in this one process
// on the same input numbers, alternating: each round times a block of calls of
// one side, then a block of the other (the side that goes first alternates
// too). The main table runs every side in its own process, and on a shared
// virtual machine a process's memory (where its pages sit, whether they are
// huge) moves a 2^20-element add by up to 1.5x from one process to the next;
// here both sides share those conditions, so the comparison keeps only what
// the code does.
//
//   libtorch_ab [--quick] [--threads N] [--cases case/size/variant,...]
//
// One JSON line per case: "ours_ns" and "libtorch_ns" are the medians over the
// rounds of each block's median call time, "ours_faster" counts the rounds in
// which ours was faster, "check" is ours (sum and probes, as harness.hpp) and
// must match libtorch's before anything is timed (exit status 1 otherwise).

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "../cases/harness.hpp"
#include "tenferro/tenferro.hpp"
#include "torch_input.hpp"

namespace {

namespace tf = tenferro;
using clock_type = std::chrono::steady_clock;

tf::Tensor ours_input(const std::vector<std::int64_t>& shape, std::int64_t off) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  return tf::Tensor::from_col_major(tf::Shape(shape.begin(), shape.end()),
                                    bench::input_vector(n, off));
}

/// Median call time (ns) of a block of `calls` calls, after a pause and `warm`
/// untimed ones. The pause lets the other side's threads go to sleep first:
/// libtorch's OpenMP threads spin for milliseconds after each parallel region
/// (ours for 0.2 ms), and a spinning thread takes a core from the block that
/// follows (on 2 cores at 2T it made ours the slower side in 15 of 15 rounds).
double block_median(const std::function<void()>& fn, int warm, int calls) {
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  for (int i = 0; i < warm; ++i) fn();
  std::vector<double> t(static_cast<std::size_t>(calls));
  for (double& x : t) {
    const auto t0 = clock_type::now();
    fn();
    x = static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now() - t0).count());
  }
  return bench::quantile(t, 0.5);
}

class Ab {
 public:
  explicit Ab(bench::Options o)
      : o_(std::move(o)), cpu_(tf::CpuBackendOptions{.num_threads = o_.threads}) {
    at::set_num_threads(o_.threads);
  }

  int failures() const { return failures_; }

  void run(const std::string& name, const std::string& size, const std::string& variant,
           const std::function<tf::Tensor()>& ours, const std::function<torch::Tensor()>& theirs) {
    if (!bench::selected(o_, bench::case_id(name, size, variant))) return;
    std::fprintf(stderr, "  a/b %s %s %s (%dT)\n", name.c_str(), size.c_str(), variant.c_str(),
                 o_.threads);
    const tf::Tensor r = ours().contiguous();
    const torch::Tensor q = theirs().contiguous();
    const auto mine = bench::make_check(r.data<double>(), r.numel());
    const auto peer = bench::make_check(q.data_ptr<double>(), q.numel());
    bool same = mine.size() == peer.size();
    for (std::size_t i = 0; same && i < mine.size(); ++i)
      same = std::abs(mine[i] - peer[i]) <= 1e-9 * std::max(1.0, std::abs(peer[i]));
    if (!same) {
      std::fprintf(stderr, "MISMATCH a/b %s %s %s: tenferro and libtorch differ\n", name.c_str(),
                   size.c_str(), variant.c_str());
      ++failures_;
      return;
    }
    const std::function<void()> a = [&] { (void)ours(); }, b = [&] { (void)theirs(); };
    // Blocks of about 20 ms (5 ms with --quick), at least 10 calls.
    const auto t0 = clock_type::now();
    a();
    const double one = static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now() - t0).count());
    const int calls = std::max(10, static_cast<int>((o_.quick ? 5e6 : 20e6) / std::max(one, 1.0)));
    const int rounds = o_.quick ? 6 : 15;
    std::vector<double> ta, tb;
    int ours_faster = 0;
    for (int k = 0; k < rounds; ++k) {
      double x = 0, y = 0;
      if (k % 2 == 0) {
        x = block_median(a, 5, calls);
        y = block_median(b, 5, calls);
      } else {
        y = block_median(b, 5, calls);
        x = block_median(a, 5, calls);
      }
      ta.push_back(x);
      tb.push_back(y);
      ours_faster += x < y ? 1 : 0;
    }
    std::string line = "{\"case\":\"" + name + "\",\"size\":\"" + size +
                       "\",\"impl\":\"ab\",\"variant\":\"" + variant +
                       "\",\"threads\":" + std::to_string(o_.threads) +
                       ",\"ours_ns\":" + bench::json_number(bench::quantile(ta, 0.5)) +
                       ",\"libtorch_ns\":" + bench::json_number(bench::quantile(tb, 0.5)) +
                       ",\"ours_faster\":" + std::to_string(ours_faster) +
                       ",\"rounds\":" + std::to_string(rounds) + "}\n";
    std::fputs(line.c_str(), stdout);
    std::fflush(stdout);
  }

  void all() {
    for (int lg : {20, 22}) {
      const std::int64_t n = std::int64_t{1} << lg;
      const std::string size = "2^" + std::to_string(lg);
      const tf::Tensor a = ours_input({n}, 1), b = ours_input({n}, 2);
      const tf::Tensor out = cpu_.empty(tf::Shape{n}, tf::f64);
      auto ta = bench::torch_input({n}, 1), tb = bench::torch_input({n}, 2),
           tout = bench::torch_input({n}, 3);
      for (auto [opname, op] : {std::pair<const char*, tf::BinaryOp>{"add", tf::BinaryOp::Add},
                                {"mul", tf::BinaryOp::Mul}}) {
        const bool add = op == tf::BinaryOp::Add;
        run(
            opname, size, "fresh", [&, op = op] { return tf::binary(op, a, b, cpu_); },
            [&, add] { return add ? torch::add(ta, tb) : torch::mul(ta, tb); });
        run(
            opname, size, "into",
            [&, op = op] {
              tf::binary_into(op, a, b, out, cpu_);
              return out;
            },
            [&, add] { return add ? torch::add_out(tout, ta, tb) : torch::mul_out(tout, ta, tb); });
      }
    }
    {
      // Light ops beyond the cache (streamed through blocks on our side).
      const std::int64_t n = std::int64_t{1} << 22;
      const tf::Tensor a = ours_input({n}, 1), b = ours_input({n}, 2);
      const tf::Tensor out = cpu_.empty(tf::Shape{n}, tf::f64), cond = tf::lt(a, b, cpu_);
      auto ta = bench::torch_input({n}, 1), tb = bench::torch_input({n}, 2),
           tout = bench::torch_input({n}, 3);
      auto tcond = torch::lt(ta, tb);
      run(
          "neg", "2^22", "into",
          [&] {
            tf::unary_into(tf::UnaryOp::Neg, a, out, cpu_);
            return out;
          },
          [&] { return torch::neg_out(tout, ta); });
      run(
          "copy", "2^22", "into",
          [&] {
            cpu_.copy(a, out);
            return out;
          },
          [&] { return tout.copy_(ta); });
      run(
          "where", "2^22", "fresh", [&] { return tf::where(cond, a, b, cpu_); },
          [&] { return torch::where(tcond, ta, tb); });
    }
    const std::string size = "2048x2048";
    const tf::Tensor x = ours_input({2048, 2048}, 1);
    const torch::Tensor tx = bench::torch_input({2048, 2048}, 1);
    // Our axis d is axis rank-1-d of the peer's row-major layout.
    run(
        "sum_all", size, "", [&] { return tf::sum(x, cpu_); }, [&] { return tx.sum(); });
    run(
        "sum_axis0", size, "", [&] { return tf::sum(x, {0}, cpu_); }, [&] { return tx.sum(1); });
    run(
        "sum_axis1", size, "", [&] { return tf::sum(x, {1}, cpu_); }, [&] { return tx.sum(0); });
    run(
        "max_all", size, "", [&] { return tf::max(x, cpu_); }, [&] { return tx.max(); });
  }

 private:
  bench::Options o_;
  tf::CpuBackend cpu_;
  int failures_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const bench::Options o = bench::parse_options(argc, argv);
  if (o.smoke) {
    std::fprintf(stderr, "libtorch_ab: --smoke is not supported (it only times)\n");
    return 2;
  }
  Ab ab(o);
  ab.all();
  return ab.failures() == 0 ? 0 : 1;
}
