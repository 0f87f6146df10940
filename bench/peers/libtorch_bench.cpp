// libtorch C++ peer of the benchmark suite (driven by bench/driver.py). Same
// cases, inputs, protocol and JSON lines as bench/cases/tenferro_bench.cpp.
// Our column-major tensor of shape S is here the row-major tensor of shape
// reversed(S) over the same numbers, so our axis d is axis rank-1-d here.
//
//   libtorch_bench [--smoke] [--quick] [--threads N] [--cases case/size/variant,...]

#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "../cases/harness.hpp"
#include "torch_input.hpp"

#ifdef TENFERRO_EINSUM_INSTANCES
#include "instance.hpp"
#endif

namespace {

using bench::Options;
using bench::torch_input;

// The peer of the extension call (group 13): a custom autograd Function
// computing x + 1, called on an untracked tensor.
struct AddOne : public torch::autograd::Function<AddOne> {
  static torch::Tensor forward(torch::autograd::AutogradContext*, const torch::Tensor& x) {
    return x + 1.0;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext*,
                                                 torch::autograd::variable_list g) {
    return {g[0]};
  }
};

class Suite {
 public:
  explicit Suite(Options o) : o_(std::move(o)) {}

  void run(const std::string& name, const std::string& size, const std::string& variant,
           const std::function<torch::Tensor()>& op, double per_unit = 1.0) {
    if (!bench::selected(o_, bench::case_id(name, size, variant))) return;
    std::fprintf(stderr, "  libtorch %s %s %s (%dT)\n", name.c_str(), size.c_str(), variant.c_str(),
                 o_.threads);
    torch::Tensor r = op().contiguous();
    // A complex result is checked as its memory: interleaved real, imaginary.
    if (r.is_complex()) r = torch::view_as_real(r).contiguous();
    const auto check = bench::make_check(r.data_ptr<double>(), r.numel());
    const bench::Stats st = bench::measure(o_, [&] { (void)op(); });
    bench::emit("libtorch", name, size, variant, o_.threads, st, check, per_unit);
  }

  // Group 13, the C++ autograd rows (the Python peer's are peers.py's).
  void autograd_overheads(const torch::Tensor& x, const torch::Tensor& y) {
    const torch::Tensor yr = y.clone().requires_grad_(true);
    const auto chain = [&] {
      torch::Tensor z = x;
      for (int i = 0; i < 1000; ++i) z = z + yr;
      return z;
    };
    run(
        "overhead_add_recorded", "4", "", [&] { return chain().detach(); }, 1000.0);
    run(
        "overhead_chain_fwd_bwd", "4", "",
        [&] { return torch::autograd::grad({chain().sum()}, {yr})[0]; }, 1000.0);
    for (std::int64_t n : {2, 64, 512}) {
      const torch::Tensor a = torch_input({n, n}, 1).requires_grad_(true);
      const torch::Tensor b = torch_input({n, n}, 2).requires_grad_(true);
      run("overhead_grad_matmul", std::to_string(n), "", [&] {
        const auto g = torch::autograd::grad({torch::matmul(b, a).sum()}, {a, b});
        return g[0] + g[1];
      });
    }
    run("overhead_extension_call", "4", "", [&] { return AddOne::apply(x); });
  }

  void all() {
    for (std::int64_t n : {256, 1024}) {
      auto a = torch_input({n, n}, 1), b = torch_input({n, n}, 2);
      run("matmul", std::to_string(n), "", [&] { return torch::matmul(b, a); });
    }
    for (auto [m, batch] : {std::pair<std::int64_t, std::int64_t>{4, 1024}, {16, 256}}) {
      auto a = torch_input({m, m, batch}, 1), b = torch_input({m, m, batch}, 2);
      run("batched_matmul",
          std::to_string(m) + "x" + std::to_string(m) + "x" + std::to_string(batch), "",
          [&] { return torch::matmul(b, a); });
    }
    {
      auto a = torch_input({32, 32, 32, 32}, 1), b = torch_input({32, 32, 32, 32}, 2);
      run("einsum_abcd_dbef_acef", "32", "", [&] {
        return torch::einsum("abcd,dbef->acef", {a, b});
      });
    }
    {
      auto a = torch_input({20, 20, 20}, 1), b = torch_input({20, 20, 20}, 2),
           c = torch_input({20, 20, 20}, 3);
      run("einsum_sliced_abc_cde_efa_bdf", "20", "", [&] {
        return torch::einsum("abc,cde,efa->bdf", {a, b, c});
      });
    }
    for (int lg : {20, 22}) {
      const std::int64_t n = std::int64_t{1} << lg;
      const std::string size = "2^" + std::to_string(lg);
      auto a = torch_input({n}, 1), b = torch_input({n}, 2), out = torch_input({n}, 3);
      run("add", size, "fresh", [&] { return torch::add(a, b); });
      run("add", size, "into", [&] { return torch::add_out(out, a, b); });
      run("mul", size, "fresh", [&] { return torch::mul(a, b); });
      run("mul", size, "into", [&] { return torch::mul_out(out, a, b); });
    }
    {
      const std::int64_t n = std::int64_t{1} << 22;
      auto a = torch_input({n}, 1), b = torch_input({n}, 2), out = torch_input({n}, 3);
      auto cond = torch::lt(a, b);
      run("neg", "2^22", "into", [&] { return torch::neg_out(out, a); });
      run("copy", "2^22", "into", [&] { return out.copy_(a); });
      // eager: the same two ops as ours; traced: PyTorch's one pass (b + alpha a).
      run("axpy", "2^22", "eager", [&] { return torch::add(torch::mul(a, 0.5), b); });
      run("axpy", "2^22", "traced", [&] { return torch::add(b, a, 0.5); });
      run("where", "2^22", "fresh", [&] { return torch::where(cond, a, b); });
    }
    {
      const std::int64_t n = std::int64_t{1} << 20;
      auto a = torch_input({n}, 1), b = torch_input({n}, 2);
      run("tanh_chain", "2^20", "eager", [&] {
        torch::Tensor x = a;
        for (int i = 0; i < 8; ++i) x = torch::tanh(0.5 * x + b);
        return x;
      });
    }
    {
      auto x = torch_input({2048, 2048}, 1);
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
        auto x = torch_input(c.shape, 1);
        const auto q = bench::peer_perm(c.perm);
        run("permute", c.size, "", [&] { return x.permute(q).contiguous(); });
      }
    }
    {
      auto x = torch_input({4}, 1), y = torch_input({4}, 2);
      run(
          "overhead_add_untracked", "4", "",
          [&] {
            torch::Tensor z = x;
            for (int i = 0; i < 1000; ++i) z = torch::add(z, y);
            return z;
          },
          1000.0);
      run("overhead_small_program", "4", "eager", [&] { return (torch::exp(x) * y + x).sum(); });
      autograd_overheads(x, y);
    }
    {
      auto a2 = torch_input({2, 2}, 1), b2 = torch_input({2, 2}, 2);
      run("overhead_einsum_2x2", "2", "", [&] { return torch::einsum("ij,jk->ik", {b2, a2}); });
    }
#ifdef TENFERRO_EINSUM_INSTANCES
    networks();
#endif
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
    fft();
    scan_sort();
  }

  // Group 16 (bench/cases/scan_sort_cases.cpp): our axis d is dim rank-1-d here.
  void scan_sort() {
    auto x = torch_input({2048, 2048}, 1);
    run("cumsum_axis0", "2048x2048", "", [&] { return torch::cumsum(x, 1); });
    run("cumsum_axis1", "2048x2048", "", [&] { return torch::cumsum(x, 0); });
    auto v = torch_input({std::int64_t{1} << 20}, 2);
    run("sort", "2^20", "",
        [&] { return std::get<0>(torch::sort(v, /*stable=*/true, -1, false)); });
    run("topk", "2^20", "k16", [&] { return std::get<0>(torch::topk(v, 16)); });
    auto m = torch_input({1024, 1024}, 3);
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
      return torch_input({m, m}, off) + static_cast<double>(m) * eye(m);
    };
    const auto spd = [&](std::int64_t m, std::int64_t off) {
      auto mt = torch_input({m, m}, off);
      return torch::matmul(mt.mT(), mt) + static_cast<double>(m) * eye(m);
    };
    const std::int64_t n = 256;
    auto s1 = spd(n, 1), g1 = general(n, 1), g3 = general(n, 3), s4 = spd(n, 4);
    run("cholesky", "256", "", [&] { return L::cholesky(s1).mT(); });
    for (std::int64_t k : {1, 16}) {
      auto b = torch_input({n, k}, 2);
      run("solve", "256", std::to_string(k) + "rhs",
          [&] { return L::solve(g1.mT(), b.mT(), true).mT(); });
    }
    run("svd", "256", "values", [&] { return L::svdvals(g3, c10::nullopt); });
    run("svd", "256", "full", [&] { return std::get<1>(L::svd(g3, false, c10::nullopt)); });
    run("qr", "256", "", [&] { return std::get<1>(L::qr(g3.mT())).mT(); });
    run("eigh", "256", "values", [&] { return L::eigvalsh(s4, "L"); });
    run("eigh", "256", "full", [&] { return std::get<0>(L::eigh(s4, "L")); });
    // c128 at 256: complex inputs are the doubles of input_vector(2 count, off)
    // read as complex128; our general M is M^T here (not conjugated), our
    // Hermitian H = M M^H + n I is H^T = conj(M) M^T.
    const auto cinput = [](std::int64_t rows, std::int64_t cols, std::int64_t off) {
      return torch::view_as_complex(torch_input({2, rows, cols}, off));
    };
    const auto ceye = [](std::int64_t k) { return torch::eye(k, torch::kComplexDouble); };
    const auto cgeneral = [&](std::int64_t k, std::int64_t off) {
      return cinput(k, k, off) + static_cast<double>(k) * ceye(k);
    };
    const auto cherm = [&](std::int64_t k, std::int64_t off) {
      auto mt = cinput(k, k, off);
      return torch::matmul(mt.mH(), mt) + static_cast<double>(k) * ceye(k);
    };
    auto h1 = cherm(n, 1), c1 = cgeneral(n, 1), c3 = cgeneral(n, 3), h4 = cherm(n, 4);
    // The upper factor of conj(H) is L^T: our L's bytes.
    run("cholesky", "256", "c128", [&] { return torch::linalg_cholesky(h1, true); });
    for (std::int64_t k : {1, 16}) {
      auto b = cinput(n, k, 2);
      run("solve", "256", "c128-" + std::to_string(k) + "rhs",
          [&] { return L::solve(c1.mT(), b.mT(), true).mT(); });
    }
    run("svd", "256", "c128-values", [&] { return L::svdvals(c3, c10::nullopt); });
    run("svd", "256", "c128-full", [&] { return std::get<1>(L::svd(c3, false, c10::nullopt)); });
    run("qr", "256", "c128", [&] { return std::get<1>(L::qr(c3.mT())).mT(); });
    run("eigh", "256", "c128-values", [&] { return L::eigvalsh(h4, "L"); });
    run("eigh", "256", "c128-full", [&] { return std::get<0>(L::eigh(h4, "L")); });

    const std::int64_t m = 8, batch = 4096;
    std::vector<torch::Tensor> gs, ps;
    for (std::int64_t b = 0; b < batch; ++b) {
      gs.push_back(general(m, 10 + b));
      ps.push_back(spd(m, 10 + b));
    }
    auto gb = torch::stack(gs), pb = torch::stack(ps);
    auto rb = torch_input({m, 1, batch}, 7);
    run("svd", "8x8x4096", "values", [&] { return L::svdvals(gb, c10::nullopt); });
    run("eigh", "8x8x4096", "values", [&] { return L::eigvalsh(pb, "L"); });
    run("qr", "8x8x4096", "", [&] { return std::get<1>(L::qr(gb.mT())).mT(); });
    run("solve", "8x8x4096", "1rhs", [&] { return L::solve(gb.mT(), rb.mT(), true).mT(); });
  }

  // Group 12 of bench/cases/fft_cases.cpp: complex inputs are the doubles of
  // input_vector(2 n, off) read as complex128; our axis 0 of [1024, 128] is
  // the last dim of (128, 1024) here.
  void fft() {
    const auto cinput = [](const std::vector<std::int64_t>& shape, std::int64_t off) {
      std::vector<std::int64_t> twice = shape;
      twice.insert(twice.begin(), 2);  // reversed below: (..., 2) row-major = re, im pairs
      return torch::view_as_complex(torch_input(twice, off));
    };
    const std::int64_t n = std::int64_t{1} << 20;
    auto x = cinput({n}, 1);
    run("fft", "2^20", "c128", [&] { return torch::fft::fft(x); });
    auto r = torch_input({n}, 1);
    run("rfft", "2^20", "f64", [&] { return torch::fft::rfft(r); });
    auto b = cinput({1024, 128}, 1);
    run("fft", "1024x128", "axis0", [&] { return torch::fft::fft(b, c10::nullopt, -1); });
    auto c = cinput({128, 128, 128}, 1);
    run("fftn", "128^3", "c128", [&] { return torch::fft::fftn(c); });
  }
#ifdef TENFERRO_EINSUM_INSTANCES
  // Group 8: each instance along its recorded opt_flops path, one
  // torch::einsum per pair (same instances, inputs and scale as
  // bench/cases/einsum_cases.cpp). The reader gives our column-major labels;
  // a torch tensor here has them reversed.
  void networks() {
    const std::pair<const char*, double> nets[] = {{"str_matrix_chain_multiplication_100", 1.0},
                                                   {"str_mps_varying_inner_product_200", 1.0},
                                                   {"lm_batch_likelihood_sentence_4_4d", 1.25},
                                                   {"nary_matmul_chain_64", 1.0},
                                                   {"str_nw_mera_closed_120", 1.0}};
    for (const auto& [name, scale] : nets) {
      const auto inst = einsum_path_tool::load_instance(std::string(TENFERRO_EINSUM_INSTANCES) +
                                                        "/" + name + ".json");
      const std::string size = std::to_string(inst.inputs.size());
      if (!bench::selected(o_, bench::case_id(name, size, "recorded"))) continue;
      std::vector<torch::Tensor> xs;
      std::vector<std::vector<std::int64_t>> labels;  // torch order (reversed)
      for (std::size_t k = 0; k < inst.inputs.size(); ++k) {
        std::vector<std::int64_t> shape;
        for (std::int64_t l : inst.inputs[k]) {
          shape.push_back(static_cast<std::int64_t>(inst.extents[static_cast<std::size_t>(l)]));
        }
        auto t = torch_input(shape, static_cast<std::int64_t>(k) + 1);
        xs.push_back(t * scale);
        labels.emplace_back(inst.inputs[k].rbegin(), inst.inputs[k].rend());
      }
      const std::vector<std::int64_t> out(inst.output.rbegin(), inst.output.rend());
      struct Step {
        std::size_t i, j;
        std::string spec;
      };
      std::vector<Step> steps;
      const auto& path = inst.paths["opt_flops"]["path"];
      for (std::size_t n = 0; n < path.size(); ++n) {
        const std::int64_t p0 = path[n][0], p1 = path[n][1];
        const auto i = static_cast<std::size_t>(std::min(p0, p1));
        const auto j = static_cast<std::size_t>(std::max(p0, p1));
        const auto a = labels[i], b = labels[j];
        labels.erase(labels.begin() + static_cast<std::ptrdiff_t>(j));
        labels.erase(labels.begin() + static_cast<std::ptrdiff_t>(i));
        std::vector<std::int64_t> keep, seen;
        auto has = [](const std::vector<std::int64_t>& v, std::int64_t x) {
          return std::find(v.begin(), v.end(), x) != v.end();
        };
        for (const auto* t : {&a, &b}) {
          for (std::int64_t l : *t) {
            if (!has(seen, l)) seen.push_back(l);
            bool kept = has(out, l);
            for (const auto& o : labels) kept = kept || has(o, l);
            if (kept && !has(keep, l)) keep.push_back(l);
          }
        }
        if (n + 1 == path.size()) keep = out;
        auto letters = [&](const std::vector<std::int64_t>& ls) {
          std::string r;
          for (std::int64_t l : ls) {
            const auto k = std::find(seen.begin(), seen.end(), l) - seen.begin();
            r.push_back(static_cast<char>(k < 26 ? 'a' + k : 'A' + (k - 26)));
          }
          return r;
        };
        steps.push_back({i, j, letters(a) + "," + letters(b) + "->" + letters(keep)});
        labels.push_back(keep);
      }
      run(name, size, "recorded", [&] {
        std::vector<torch::Tensor> list = xs;
        for (const Step& s : steps) {
          torch::Tensor x = list[s.i], y = list[s.j];
          list.erase(list.begin() + static_cast<std::ptrdiff_t>(s.j));
          list.erase(list.begin() + static_cast<std::ptrdiff_t>(s.i));
          list.push_back(torch::einsum(s.spec, {x, y}));
        }
        return list.front();
      });
    }
  }
#endif

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
