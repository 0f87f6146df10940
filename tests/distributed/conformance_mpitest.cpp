// The conformance suite's value tables (conformance/value_rows.hpp) run
// sharded under mpirun -np 1, 2 and 4: every op descriptor the distributed
// layer can express (each unary op through dist::map, + - * / and the
// scalar product, sum and mean) on every placement of a line mesh and, with
// 4 ranks, of a 2x2 mesh (conformance_layouts.hpp), against the one-process
// op, in the eager tier and (the unary ops) in traced programs. Each test
// counts what ran and what the layer cannot express, asserts both, and
// prints them on rank 0. Gradients: conformance_grads_mpitest.cpp.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "conformance/value_rows.hpp"
#include "distributed/conformance_layouts.hpp"
#include "tenferro/backend/reduce.hpp"

using namespace tenferro;
using namespace mpitest;
using dist::DTensor;
using dist::Placements;

namespace {

/// Values compared so far and how many of them had the same bits.
struct Matches {
  int tensors = 0;
  int same_bits = 0;
  std::set<std::string> differing;  ///< the ops whose result differed in bits (within rtol)

  std::string text() const {
    std::string s = std::to_string(same_bits) + "/" + std::to_string(tensors) + " bit-identical";
    for (const auto& op : differing) s += (op == *differing.begin() ? " (not: " : ", ") + op;
    return differing.empty() ? s : s + ")";
  }
};

// got equals want: the same dtype and shape, and each element (each part
// of a complex one) the same, NaN where NaN, or within `rtol` of it.
void expect_match(const Tensor& got, const Tensor& want, double rtol, const std::string& what,
                  Matches& m) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const Tensor g = got.contiguous(), w = want.contiguous();
  ++m.tensors;
  if (std::memcmp(g.raw_data(), w.raw_data(),
                  static_cast<std::size_t>(g.numel()) * itemsize(g.dtype())) == 0) {
    ++m.same_bits;
    return;
  }
  m.differing.insert(what.substr(0, what.find(' ')));
  Tensor gc = zeros(got.shape(), c128), wc = zeros(want.shape(), c128);
  Tensor::copy_into(g, gc);
  Tensor::copy_into(w, wc);
  const auto gv = gc.to_vector<c128_t>(), wv = wc.to_vector<c128_t>();
  const auto close = [&](double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || a == b || std::abs(a - b) <= rtol * std::abs(b);
  };
  for (std::size_t k = 0; k < gv.size(); ++k) {
    EXPECT_TRUE(close(gv[k].real(), wv[k].real()) && close(gv[k].imag(), wv[k].imag()))
        << what << " at " << k << ": got " << gv[k] << " want " << wv[k];
  }
}

// The unary ops that are (real-)linear: dist::map may apply them to each
// rank's part of a pending sum.
bool is_linear(const std::string& name) {
  return one_of(name, {"neg", "conj", "real", "imag"});
}

}  // namespace

TEST(ConformanceDist, EveryUnaryDescriptorThroughMapEqualsOneProcess) {
  const auto rt = runtime();
  const std::size_t n_layouts = layouts().size();
  int ran = 0, refused_complex = 0, linear_on_partial = 0;
  std::set<std::string> complete;  // descriptors that ran on every layout in every dtype
  Matches m;
  for (int i = 0; i < kUnaryOpCount; ++i) {
    const auto op = static_cast<UnaryOp>(i);
    const std::string nm(descriptor(op).name);
    const auto row = tftest::unary_rows().find(nm);
    ASSERT_NE(row, tftest::unary_rows().end()) << nm << " has no value row";
    const auto fn = [op](const EagerTensor& t) { return unary(op, t); };
    std::size_t runs = 0, wanted = 0;
    for (const DType dt : {f64, c128}) {
      if (is_complex(dt) && !descriptor(op).complex_advice.empty()) {
        ++refused_complex;
        continue;
      }
      // The row's own inputs (inf and NaN included) come first.
      const Tensor full = row_grid(row->second.a, dt, 100 + static_cast<std::uint64_t>(i), false);
      const Tensor want = unary(op, rt->tensor(full)).value();
      for (const Layout& l : layouts()) {
        const std::string what = nm + " " + std::string(name(dt)) + " on " + l.label();
        ++wanted;
        runs += run_case(what, [&] {
          const DTensor d = put(full, l);
          const DTensor y = dist::map(d, fn);
          EXPECT_EQ(y.placements(), summed(l.placements)) << what;
          expect_match(dist::full_tensor(y).value(), want, 1e-14, what, m);
        });
        if (is_linear(nm) && has_partial(l.placements)) {
          // A linear op maps each rank's part of a pending sum: no communication.
          run_case(what + " (linear)", [&] {
            const DTensor d = put(full, l);
            dist::reset_comm_stats();
            const DTensor y = dist::map(d, fn, /*linear=*/true);
            EXPECT_EQ(dist::comm_stats().collectives, 0u) << what;
            EXPECT_EQ(y.placements(), l.placements) << what;
            expect_match(dist::full_tensor(y).value(), want, 1e-14, what + " (linear)", m);
            ++linear_on_partial;
          });
        }
      }
    }
    ran += static_cast<int>(runs);
    if (runs == wanted) complete.insert(nm);
  }
  // Every descriptor ran on every layout in f64, and in c128 unless it refuses complex.
  EXPECT_EQ(static_cast<int>(complete.size()), kUnaryOpCount);
  EXPECT_EQ(ran, static_cast<int>((2 * kUnaryOpCount - refused_complex) * n_layouts));
  EXPECT_GT(refused_complex, 0);
  EXPECT_LT(refused_complex, kUnaryOpCount);
  std::size_t partial_layouts = 0;
  for (const auto& l : layouts()) partial_layouts += has_partial(l.placements);
  EXPECT_EQ(linear_on_partial, static_cast<int>(4 * 2 * partial_layouts));  // 4 ops, f64 and c128
  summary("unary: " + std::to_string(complete.size()) + " descriptors, " + std::to_string(ran) +
          " sharded cases on " + std::to_string(n_layouts) + " layouts (" +
          std::to_string(refused_complex) + " descriptors refuse c128), " +
          std::to_string(linear_on_partial) + " linear on Partial; " + m.text());
}

TEST(ConformanceDist, PartialOfANonFiniteTensorKeepsItsValue) {
  // A pending sum of x is x on the first rank of the mesh axis and zeros on
  // the others, whatever x holds: inf, -inf, NaN and -0 come back as they were.
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> v = {1, inf, -inf, std::numeric_limits<double>::quiet_NaN(), -0.0};
  const Tensor full = Tensor::from_col_major({5, 1}, v);
  int ran = 0;
  for (const Layout& l : layouts()) {
    if (!has_partial(l.placements)) continue;
    const DTensor from_full = put(full, l);
    const bool root = l.mesh->comm().rank() == 0;
    const DTensor scattered =
        dist::scatter(runtime(), root ? full : Tensor(), 0, *l.mesh, l.placements);
    const DTensor replicated = put(
        full, {l.mesh, Placements(static_cast<std::size_t>(l.mesh->ndim()), dist::Replicate())});
    const DTensor redistributed = dist::redistribute(replicated, l.placements);
    for (const DTensor* d : {&from_full, &scattered, &redistributed}) {
      const std::vector<double> got = dist::full_tensor(*d).value().to_vector<double>();
      ASSERT_EQ(got.size(), v.size());
      ++ran;
      bool same = true;
      for (std::size_t k = 0; k < v.size(); ++k) {
        same = same &&
               (std::isnan(v[k]) ? std::isnan(got[k])
                                 : got[k] == v[k] && std::signbit(got[k]) == std::signbit(v[k]));
      }
      EXPECT_TRUE(same) << l.label() << ": got " << got[1] << " " << got[2] << " " << got[3] << " "
                        << got[4];
    }
  }
  EXPECT_EQ(ran, 3 * (world_size() == 4 ? 2 : 1));
}

TEST(ConformanceDist, ArithmeticDescriptorsOnEveryPairOfPlacementsEqualOneProcess) {
  const auto rt = runtime();
  int ran = 0, wanted = 0, not_expressible = 0, scalar_ran = 0;
  std::set<std::string> expressed;
  Matches m;
  for (int i = 0; i < kBinaryOpCount; ++i) {
    const auto op = static_cast<BinaryOp>(i);
    const std::string nm(descriptor(op).name);
    const auto row = tftest::binary_rows().find(nm);
    ASSERT_NE(row, tftest::binary_rows().end()) << nm << " has no value row";
    // The layer's elementwise operators; the other binary ops have no
    // sharded form (dist::map takes one operand).
    if (!one_of(nm, {"add", "sub", "mul", "div"})) {
      ++not_expressible;
      continue;
    }
    expressed.insert(nm);
    const bool linear = one_of(nm, {"add", "sub"});
    for (const DType dt : {f64, c128}) {
      const auto seed = 200 + 2 * static_cast<std::uint64_t>(i);
      const Tensor a = row_grid(row->second.a, dt, seed, true);
      const Tensor b = row_grid(row->second.b, dt, seed + 1, true);
      const Tensor want = binary(op, rt->tensor(a), rt->tensor(b)).value();
      for (const dist::Mesh* mesh : meshes()) {
        for (const Layout& la : layouts_on(*mesh)) {
          for (const Layout& lb : layouts_on(*mesh)) {
            const std::string what = nm + " " + std::string(name(dt)) + " on " + la.label() +
                                     " and " + text(lb.placements);
            ++wanted;
            ran += run_case(what, [&] {
              const DTensor da = put(a, la), db = put(b, lb);
              dist::reset_comm_stats();
              const DTensor y = nm == "add"   ? da + db
                                : nm == "sub" ? da - db
                                : nm == "mul" ? da * db
                                              : da / db;
              // Operands placed alike run locally (a pending sum of a
              // product or quotient is summed first).
              if (la.placements == lb.placements && (linear || !has_partial(la.placements))) {
                EXPECT_EQ(dist::comm_stats().collectives, 0u) << what;
                EXPECT_EQ(y.placements(), la.placements) << what;
              }
              expect_match(dist::full_tensor(y).value(), want, 1e-14, what, m);
            });
          }
        }
      }
    }
  }
  // The scalar product and the negation keep any placement, a pending sum included.
  for (const DType dt : {f64, c128}) {
    const Tensor a = row_grid({-2, 3}, dt, 300, true);
    const Tensor twice = (rt->tensor(a) * Scalar(2.5)).value(), minus = (-rt->tensor(a)).value();
    for (const Layout& l : layouts()) {
      const std::string what = std::string(name(dt)) + " on " + l.label();
      scalar_ran += run_case("scalar * and unary - " + what, [&] {
        const DTensor d = put(a, l);
        dist::reset_comm_stats();
        const DTensor s = d * Scalar(2.5), n = -d;
        EXPECT_EQ(dist::comm_stats().collectives, 0u) << what;
        EXPECT_EQ(s.placements(), l.placements) << what;
        EXPECT_EQ(n.placements(), l.placements) << what;
        expect_match(dist::full_tensor(s).value(), twice, 1e-14, "2.5 * x " + what, m);
        expect_match(dist::full_tensor(n).value(), minus, 1e-14, "-x " + what, m);
      });
    }
  }
  EXPECT_EQ(expressed, (std::set<std::string>{"add", "sub", "mul", "div"}));
  EXPECT_EQ(not_expressible, kBinaryOpCount - 4);
  EXPECT_EQ(ran, wanted);
  const int n_line = static_cast<int>(layouts_on(line_mesh()).size());
  const int n_grid = world_size() == 4 ? static_cast<int>(layouts_on(grid_mesh()).size()) : 0;
  EXPECT_EQ(wanted, 4 * 2 * (n_line * n_line + n_grid * n_grid));
  EXPECT_EQ(scalar_ran, 2 * static_cast<int>(layouts().size()));
  summary("binary: 4 descriptors (+ - * /), " + std::to_string(ran) +
          " sharded cases on pairs of placements, " + std::to_string(not_expressible) +
          " descriptors not expressible; scalar * and - on " + std::to_string(scalar_ran) +
          " layouts; " + m.text());
}

namespace {

// Where dist::sum leaves x's placements: a shard of a summed axis becomes
// Partial, a shard of a kept axis follows it to its new index.
Placements summed_placements(const Placements& ps, const std::vector<std::int64_t>& axes,
                             bool keepdim) {
  Placements r = ps;
  for (auto& p : r) {
    if (!p.is_shard()) continue;
    if (std::find(axes.begin(), axes.end(), p.axis) != axes.end()) {
      p = dist::Partial();
    } else if (!keepdim) {
      p.axis -= std::count_if(axes.begin(), axes.end(), [&](auto a) { return a < p.axis; });
    }
  }
  return r;
}

}  // namespace

TEST(ConformanceDist, SumAndMeanOverShardedAxesEqualOneProcess) {
  const auto rt = runtime();
  const std::vector<std::vector<std::int64_t>> axis_sets = {{0}, {1}, {0, 1}, {1, 0}};
  int ran = 0, wanted = 0, not_expressible = 0;
  std::set<std::string> expressed;
  for (std::size_t i = 0; i < std::size(kReduceOps); ++i) {
    const auto op = static_cast<ReduceOp>(i);
    const std::string nm(descriptor(op).name);
    // sum is the layer's reduction, mean its sum times 1/n; prod, max, min,
    // all, any and logsumexp have no sharded form.
    if (!one_of(nm, {"sum", "mean"})) {
      ++not_expressible;
      continue;
    }
    expressed.insert(nm);
    const bool mean = nm == "mean";
    for (const DType dt : {f64, c128}) {
      const Tensor full = row_grid({-1.5, 2}, dt, 400 + i, true);
      for (const Layout& l : layouts()) {
        // Over every axis (axes empty), then over each set, with and without keepdim.
        for (std::size_t s = 0; s <= 2 * axis_sets.size(); ++s) {
          const bool all = s == 0, keepdim = s % 2 == 1;
          const std::vector<std::int64_t> axes =
              all ? std::vector<std::int64_t>{0, 1} : axis_sets[(s - 1) / 2];
          const std::string what = nm + " " + std::string(name(dt)) + " over " +
                                   (all ? std::string("all") : shape_to_string(axes)) +
                                   (keepdim ? " keepdim" : "") + " on " + l.label();
          ++wanted;
          ran += run_case(what, [&] {
            const DTensor d = put(full, l);
            DTensor y = all ? dist::sum(d) : dist::sum(d, axes, keepdim);
            std::int64_t n = 1;
            for (const auto a : axes) n *= full.dim(a);
            if (mean) y = y * Scalar(1.0 / static_cast<double>(n));
            EXPECT_EQ(y.placements(), summed_placements(l.placements, axes, keepdim)) << what;
            const Tensor want = reduce(op, rt->tensor(full), Axes(axes), keepdim).value();
            const Tensor got = dist::full_tensor(y).value();
            ASSERT_EQ(got.shape(), want.shape()) << what;
            EXPECT_LT(rel(got, want), 1e-14) << what;
          });
        }
      }
    }
  }
  EXPECT_EQ(expressed, (std::set<std::string>{"sum", "mean"}));
  EXPECT_EQ(not_expressible, static_cast<int>(std::size(kReduceOps)) - 2);
  EXPECT_EQ(ran, wanted);
  EXPECT_EQ(wanted, 2 * 2 * static_cast<int>(layouts().size()) *
                        (1 + 2 * static_cast<int>(axis_sets.size())));
  summary("reductions: sum and mean, " + std::to_string(ran) +
          " sharded cases (every axis, each axis set, keepdim), " +
          std::to_string(not_expressible) + " descriptors not expressible");
}

TEST(ConformanceDist, EveryUnaryDescriptorInATracedProgramEqualsOneProcess) {
  // The traced tier: per dtype one program maps every descriptor over its
  // own sharded input (its value row's inputs first), the descriptors taking
  // turns through the layouts; each rank compiles and runs its program, the
  // collectives nodes of it.
  const auto rt = runtime();
  const std::size_t n_layouts = layouts().size();
  int compared = 0, expected = 0;
  std::vector<int> per_layout(n_layouts, 0);
  Matches m;
  for (const DType dt : {f64, c128}) {
    std::vector<UnaryOp> ops;
    std::vector<Tensor> inputs, wants;
    for (int i = 0; i < kUnaryOpCount; ++i) {
      const auto op = static_cast<UnaryOp>(i);
      if (is_complex(dt) && !descriptor(op).complex_advice.empty()) continue;
      const auto row = tftest::unary_rows().find(descriptor(op).name);
      ASSERT_NE(row, tftest::unary_rows().end()) << descriptor(op).name;
      ops.push_back(op);
      inputs.push_back(row_grid(row->second.a, dt, 700 + static_cast<std::uint64_t>(i), false));
      wants.push_back(unary(op, rt->tensor(inputs.back())).value());
    }
    const auto layout_of = [&](std::size_t k) { return (k + is_complex(dt)) % n_layouts; };
    expected += static_cast<int>(ops.size());
    run_case(std::string(name(dt)) + " program", [&] {
      std::vector<TracedTensor> xs, ys;
      for (std::size_t k = 0; k < ops.size(); ++k) {
        const Layout& l = layouts()[layout_of(k)];
        xs.push_back(placeholder(dt, {5, 4}));
        const dist::TracedDTensor y =
            dist::map(dist::distribute(xs.back(), *l.mesh, l.placements),
                      [op = ops[k]](const TracedTensor& t) { return unary(op, t); });
        EXPECT_EQ(y.placements(), summed(l.placements));
        ys.push_back(dist::full_tensor(y));
      }
      const std::vector<Tensor> out = run_compiled(*rt->runtime(), compile(ys, xs), inputs);
      ASSERT_EQ(out.size(), ops.size());
      for (std::size_t k = 0; k < ops.size(); ++k) {
        const Layout& l = layouts()[layout_of(k)];
        expect_match(
            out[k], wants[k], 1e-14,
            std::string(name(ops[k])) + " " + std::string(name(dt)) + " (traced) on " + l.label(),
            m);
        ++per_layout[layout_of(k)];
        ++compared;
      }
    });
  }
  // Every descriptor in f64, those that take it in c128, and every layout used.
  EXPECT_EQ(compared, expected);
  EXPECT_GT(compared, kUnaryOpCount);
  EXPECT_EQ(std::count(per_layout.begin(), per_layout.end(), 0), 0);
  summary("unary, traced: 2 programs, " + std::to_string(compared) +
          " sharded descriptor results on " + std::to_string(n_layouts) + " layouts; " + m.text());
}
