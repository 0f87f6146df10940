// libtorch C++ peer of the benchmark suite (driven by bench/driver.py). Same
// cases, inputs, protocol and JSON lines as bench/cases/tenferro_bench.cpp.
// Our column-major tensor of shape S is here the row-major tensor of shape
// reversed(S) over the same numbers, so our axis d is axis rank-1-d here.
//
//   libtorch_bench [--smoke] [--quick] [--threads N] [--cases case/size/variant,...]

#include <torch/torch.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "../cases/harness.hpp"

namespace {

using bench::Options;

torch::Tensor make_input(const std::vector<std::int64_t>& shape, std::int64_t off) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  auto v = bench::input_vector(n, off);
  auto t = torch::empty(bench::reversed(shape), torch::kFloat64);
  std::copy(v.begin(), v.end(), t.data_ptr<double>());
  return t;
}

class Suite {
 public:
  explicit Suite(Options o) : o_(std::move(o)) {}

  void run(const std::string& name, const std::string& size, const std::string& variant,
           const std::function<torch::Tensor()>& op, double per_unit = 1.0) {
    if (!bench::selected(o_, bench::case_id(name, size, variant))) return;
    std::fprintf(stderr, "  libtorch %s %s %s (%dT)\n", name.c_str(), size.c_str(), variant.c_str(),
                 o_.threads);
    const torch::Tensor r = op().contiguous();
    const auto check = bench::make_check(r.data_ptr<double>(), r.numel());
    const bench::Stats st = bench::measure(o_, [&] { (void)op(); });
    bench::emit("libtorch", name, size, variant, o_.threads, st, check, per_unit);
  }

  void all() {
    for (std::int64_t n : {256, 1024}) {
      auto a = make_input({n, n}, 1), b = make_input({n, n}, 2);
      run("matmul", std::to_string(n), "", [&] { return torch::matmul(b, a); });
    }
    for (auto [m, batch] : {std::pair<std::int64_t, std::int64_t>{4, 1024}, {16, 256}}) {
      auto a = make_input({m, m, batch}, 1), b = make_input({m, m, batch}, 2);
      run("batched_matmul",
          std::to_string(m) + "x" + std::to_string(m) + "x" + std::to_string(batch), "",
          [&] { return torch::matmul(b, a); });
    }
    {
      auto a = make_input({32, 32, 32, 32}, 1), b = make_input({32, 32, 32, 32}, 2);
      run("einsum_abcd_dbef_acef", "32", "", [&] {
        return torch::einsum("abcd,dbef->acef", {a, b});
      });
    }
    for (int lg : {20, 22}) {
      const std::int64_t n = std::int64_t{1} << lg;
      const std::string size = "2^" + std::to_string(lg);
      auto a = make_input({n}, 1), b = make_input({n}, 2), out = make_input({n}, 3);
      run("add", size, "fresh", [&] { return torch::add(a, b); });
      run("add", size, "into", [&] { return torch::add_out(out, a, b); });
      run("mul", size, "fresh", [&] { return torch::mul(a, b); });
      run("mul", size, "into", [&] { return torch::mul_out(out, a, b); });
    }
    {
      const std::int64_t n = std::int64_t{1} << 20;
      auto a = make_input({n}, 1), b = make_input({n}, 2);
      run("tanh_chain", "2^20", "eager", [&] {
        torch::Tensor x = a;
        for (int i = 0; i < 8; ++i) x = torch::tanh(0.5 * x + b);
        return x;
      });
    }
    {
      auto x = make_input({2048, 2048}, 1);
      const std::string size = "2048x2048";
      run("sum_all", size, "", [&] { return x.sum(); });
      run("sum_axis0", size, "", [&] { return x.sum(1); });  // our axis 0 = axis 1 here
      run("sum_axis1", size, "", [&] { return x.sum(0); });
      run("max_all", size, "", [&] { return x.max(); });
    }
    {
      std::vector<std::int64_t> rev15(15), shape15(15, 3);
      for (int i = 0; i < 15; ++i) rev15[i] = 14 - i;
      struct PermCase {
        std::string size;
        std::vector<std::int64_t> shape, perm;
      };
      const std::vector<PermCase> cases{{"2048x2048", {2048, 2048}, {1, 0}},
                                        {"256x256x64", {256, 256, 64}, {2, 0, 1}},
                                        {"3^15", shape15, rev15}};
      for (const auto& c : cases) {
        auto x = make_input(c.shape, 1);
        const auto q = bench::peer_perm(c.perm);
        run("permute", c.size, "", [&] { return x.permute(q).contiguous(); });
      }
    }
    {
      auto x = make_input({4}, 1), y = make_input({4}, 2);
      run(
          "overhead_add_untracked", "4", "",
          [&] {
            torch::Tensor z = x;
            for (int i = 0; i < 1000; ++i) z = torch::add(z, y);
            return z;
          },
          1000.0);
    }
    {
      // Group 15: special functions and activations, inputs in each op's domain.
      const std::int64_t n = std::int64_t{1} << 20;
      const auto in = [&](const char* name, std::int64_t off) {
        auto v = bench::domain_vector(name, n, off);
        auto t = torch::empty({n}, torch::kFloat64);
        std::copy(v.begin(), v.end(), t.data_ptr<double>());
        return t;
      };
      auto x = in("lgamma", 1);
      run("lgamma", "2^20", "direct", [&] { return torch::lgamma(x); });
      x = in("digamma", 1);
      run("digamma", "2^20", "direct", [&] { return torch::digamma(x); });
      x = in("erfinv", 1);
      run("erfinv", "2^20", "direct", [&] { return torch::erfinv(x); });
      x = in("i0e", 1);
      run("i0e", "2^20", "direct", [&] { return torch::special::i0e(x); });
      x = in("log_ndtr", 1);
      run("log_ndtr", "2^20", "direct", [&] { return torch::special::log_ndtr(x); });
      x = in("softplus", 1);
      run("softplus", "2^20", "eager", [&] { return torch::softplus(x); });
      x = in("silu", 1);
      run("silu", "2^20", "eager", [&] { return torch::silu(x); });
      x = in("logsigmoid", 1);
      run("logsigmoid", "2^20", "eager", [&] { return torch::log_sigmoid(x); });
      auto a = in("logaddexp", 1), b = in("logaddexp", 2);
      run("logaddexp", "2^20", "direct", [&] { return torch::logaddexp(a, b); });
    }
    linalg();
    scan_sort();
  }

  // Group 16 (bench/cases/scan_sort_cases.cpp): our axis d is dim rank-1-d here.
  void scan_sort() {
    auto x = make_input({2048, 2048}, 1);
    run("cumsum_axis0", "2048x2048", "", [&] { return torch::cumsum(x, 1); });
    run("cumsum_axis1", "2048x2048", "", [&] { return torch::cumsum(x, 0); });
    auto v = make_input({std::int64_t{1} << 20}, 2);
    run("sort", "2^20", "",
        [&] { return std::get<0>(torch::sort(v, /*stable=*/true, -1, false)); });
    run("topk", "2^20", "k16", [&] { return std::get<0>(torch::topk(v, 16)); });
    auto m = make_input({1024, 1024}, 3);
    run("sort_axis0", "1024x1024", "",
        [&] { return std::get<0>(torch::sort(m, /*stable=*/true, 1, false)); });
  }

 private:
  // Groups 9 (forward) of bench/cases/linalg_cases.cpp: our column-major
  // matrix M is M^T here, so each call returns the transpose of our result.
  void linalg() {
    namespace L = torch::linalg;
    const auto eye = [](std::int64_t m) { return torch::eye(m, torch::kFloat64); };
    const auto general = [&](std::int64_t m, std::int64_t off) {
      return make_input({m, m}, off) + static_cast<double>(m) * eye(m);
    };
    const auto spd = [&](std::int64_t m, std::int64_t off) {
      auto mt = make_input({m, m}, off);
      return torch::matmul(mt.mT(), mt) + static_cast<double>(m) * eye(m);
    };
    const std::int64_t n = 256;
    auto s1 = spd(n, 1), g1 = general(n, 1), g3 = general(n, 3), s4 = spd(n, 4);
    run("cholesky", "256", "", [&] { return L::cholesky(s1).mT(); });
    for (std::int64_t k : {1, 16}) {
      auto b = make_input({n, k}, 2);
      run("solve", "256", std::to_string(k) + "rhs",
          [&] { return L::solve(g1.mT(), b.mT(), true).mT(); });
    }
    run("svd", "256", "values", [&] { return L::svdvals(g3, c10::nullopt); });
    run("svd", "256", "full", [&] { return std::get<1>(L::svd(g3, false, c10::nullopt)); });
    run("qr", "256", "", [&] { return std::get<1>(L::qr(g3.mT())).mT(); });
    run("eigh", "256", "values", [&] { return L::eigvalsh(s4, "L"); });
    run("eigh", "256", "full", [&] { return std::get<0>(L::eigh(s4, "L")); });
    const std::int64_t m = 8, batch = 4096;
    std::vector<torch::Tensor> gs, ps;
    for (std::int64_t b = 0; b < batch; ++b) {
      gs.push_back(general(m, 10 + b));
      ps.push_back(spd(m, 10 + b));
    }
    auto gb = torch::stack(gs), pb = torch::stack(ps);
    auto rb = make_input({m, 1, batch}, 7);
    run("svd", "8x8x4096", "values", [&] { return L::svdvals(gb, c10::nullopt); });
    run("eigh", "8x8x4096", "values", [&] { return L::eigvalsh(pb, "L"); });
    run("qr", "8x8x4096", "", [&] { return std::get<1>(L::qr(gb.mT())).mT(); });
    run("solve", "8x8x4096", "1rhs", [&] { return L::solve(gb.mT(), rb.mT(), true).mT(); });
  }

  Options o_;
};

}  // namespace

int main(int argc, char** argv) {
  const Options o = bench::parse_options(argc, argv);
  torch::set_num_threads(o.threads);
  try {
    Suite(o).all();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "libtorch_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
