// scan in traced programs: values against the same body unrolled in a flat
// graph (forward and reverse order, symbolic and zero lengths, no xs),
// derivatives against unrolled AD and finite differences (jvp, vjp, HVP in
// both modes, captured values), refused carries, and the checkpointed
// reverse pass: equal gradients, fewer live values.

#include "ad/traced_fixtures.hpp"
#include "tenferro/ad/control_flow.hpp"

using namespace ttest;

namespace {

using Traced = std::vector<TracedTensor>;

// Slice t of x along its last axis (concrete shapes), as flat-graph ops.
TracedTensor slice_last(const TracedTensor& x, std::int64_t t) {
  Shape start, limit, shape;
  for (std::size_t d = 0; d + 1 < x.shape().size(); ++d) {
    start.push_back(0);
    limit.push_back(x.shape()[d].constant());
    shape.push_back(x.shape()[d].constant());
  }
  start.push_back(t);
  limit.push_back(t + 1);
  SymShape target;
  for (std::int64_t e : shape) target.push_back(e);
  return reshape(slice(x, start, limit), target);
}

// The scan unrolled: the same body on slices, the ys stacked on a new last axis.
ScanResult unrolled(const ScanFn& body, const Traced& init, const Traced& xs, std::int64_t n,
                    bool reverse = false) {
  Traced carry = init;
  std::vector<Traced> ys;
  for (std::int64_t s = 0; s < n; ++s) {
    const std::int64_t t = reverse ? n - 1 - s : s;
    Traced x;
    for (const auto& v : xs) x.push_back(slice_last(v, t));
    ScanStep st = body(carry, x);
    carry = st.carry;
    if (ys.empty()) ys.resize(st.ys.size());
    for (std::size_t j = 0; j < st.ys.size(); ++j) ys[j].push_back(st.ys[j]);
  }
  ScanResult r{carry, {}};
  for (auto& y : ys) {
    if (reverse) std::reverse(y.begin(), y.end());
    r.ys.push_back(stack(y, y[0].rank()));
  }
  return r;
}

// A recurrent cell: h' = tanh(W h + x_t) * a, y_t = (sum(h' * x_t), h').
// W and a are captured from outside the body.
struct Cell {
  TracedTensor w = placeholder(f64, {3, 3});
  TracedTensor a = placeholder(f64, {});
  ScanFn fn() const {
    return [w = w, a = a](std::span<const TracedTensor> c, std::span<const TracedTensor> x) {
      TracedTensor h = tanh(matmul(w, c[0]) + x[0]) * a;
      return ScanStep{{h}, {sum(h * x[0]), h}};
    };
  }
};

Tensor vec(std::vector<double> v) {
  const auto n = static_cast<std::int64_t>(v.size());
  return Tensor::from_col_major({n}, v);
}

std::vector<Tensor> cell_inputs(std::int64_t n) {
  return {random({3}, f64, 1), random({3, n}, f64, 2), random({3, 3}, f64, 3), Tensor::scalar(0.9)};
}

const PrepareOptions kNoFusion{false, 2048};

// A scalar loss reading the final carry and both ys.
TracedTensor loss_of(const ScanResult& r) {
  return sum(r.carry[0] * r.carry[0]) + sum(sin(r.ys[0])) + sum(r.ys[1] * r.ys[1]) * 0.5;
}

}  // namespace

TEST(TracedScan, ValuesEqualTheUnrolledBody) {
  auto rt = cpu_runtime();
  for (bool reverse : {false, true}) {
    Cell cell;
    auto h0 = placeholder(f64, {3});
    auto xs = placeholder(f64, {3, 5});
    ScanOptions opt;
    opt.reverse = reverse;
    ScanResult s = scan(cell.fn(), {h0}, {xs}, opt);
    ScanResult u = unrolled(cell.fn(), {h0}, {xs}, 5, reverse);
    ASSERT_EQ(s.ys.size(), 2u);
    EXPECT_EQ(s.ys[0].shape(), (SymShape{5}));
    EXPECT_EQ(s.ys[1].shape(), (SymShape{3, 5}));
    Program ps = compile({s.carry[0], s.ys[0], s.ys[1]}, {h0, xs, cell.w, cell.a});
    Program pu = compile({u.carry[0], u.ys[0], u.ys[1]}, {h0, xs, cell.w, cell.a});
    EXPECT_EQ(ps.count_ops("scan"), 1u);
    auto a = eval(*rt, ps, cell_inputs(5)), b = eval(*rt, pu, cell_inputs(5));
    for (std::size_t j = 0; j < 3; ++j) EXPECT_TRUE(close(a[j], b[j], 1e-14)) << reverse << j;
  }
}

TEST(TracedScan, SymbolicLengthBindsAtRunTime) {
  auto rt = cpu_runtime();
  Cell cell;
  auto h0 = placeholder(f64, {3});
  auto xs = placeholder(f64, {3, n_dim()});
  ScanResult s = scan(cell.fn(), {h0}, {xs});
  EXPECT_EQ(s.ys[1].shape(), (SymShape{3, n_dim()}));
  Program ps = compile({s.carry[0], s.ys[1]}, {h0, xs, cell.w, cell.a});
  const std::vector<Tensor> in4 = cell_inputs(4), in7 = cell_inputs(7);
  PreparedProgram plan = prepare(*rt, ps, InputSignature::of(in4));
  for (const auto& in : {in4, in7}) {
    const std::int64_t n = in[1].shape()[1];
    auto xs_n = placeholder(f64, {3, n});
    ScanResult u = unrolled(cell.fn(), {h0}, {xs_n}, n);
    auto b = eval(*rt, compile({u.carry[0], u.ys[1]}, {h0, xs_n, cell.w, cell.a}), in);
    auto a = run(*rt, plan, in);
    EXPECT_EQ(a[1].shape(), (Shape{3, n}));
    EXPECT_TRUE(close(a[0], b[0], 1e-14)) << n;
    EXPECT_TRUE(close(a[1], b[1], 1e-14)) << n;
  }
}

TEST(TracedScan, NoXsRunsOptionsLength) {
  auto rt = cpu_runtime();
  auto x0 = placeholder(f64, {2});
  auto step = [](std::span<const TracedTensor> c, std::span<const TracedTensor>) {
    TracedTensor x = c[0] * 0.5 + sin(c[0]);
    return ScanStep{{x}, {x}};
  };
  ScanOptions opt;
  opt.length = 6;
  ScanResult s = scan(step, {x0}, {}, opt);
  ScanResult u = unrolled(step, {x0}, {}, 6);
  const std::vector<Tensor> in = {vec({0.3, -1.2})};
  auto a = eval(*rt, compile({s.carry[0], s.ys[0]}, {x0}), in);
  auto b = eval(*rt, compile({u.carry[0], u.ys[0]}, {x0}), in);
  EXPECT_EQ(a[1].shape(), (Shape{2, 6}));
  EXPECT_TRUE(close(a[0], b[0], 1e-15));
  EXPECT_TRUE(close(a[1], b[1], 1e-15));
  // Gradient through the no-xs scan.
  auto ls = sum(s.ys[0]) + sum(s.carry[0]), lu = sum(u.ys[0]) + sum(u.carry[0]);
  auto g = eval(*rt, compile({grad(ls, x0), grad(lu, x0)}, {x0}), in);
  EXPECT_TRUE(close(g[0], g[1], 1e-12));
  opt.length = -1;
  EXPECT_TF_ERROR(scan(step, {x0}, {}, opt), ErrorKind::InvalidArgument);
}

TEST(TracedScan, ZeroLengthReturnsInitAndEmptyYs) {
  auto rt = cpu_runtime();
  Cell cell;
  auto h0 = placeholder(f64, {3});
  auto xs = placeholder(f64, {3, n_dim()});
  ScanResult s = scan(cell.fn(), {h0}, {xs});
  auto l = loss_of(s);
  Program p = compile({s.carry[0], s.ys[0], s.ys[1], grad(l, h0), grad(l, cell.w)},
                      {h0, xs, cell.w, cell.a});
  const std::vector<Tensor> in = cell_inputs(0);
  auto out = eval(*rt, p, in);
  EXPECT_TRUE(close(out[0], in[0], 0.0));
  EXPECT_EQ(out[1].shape(), (Shape{0}));
  EXPECT_EQ(out[2].shape(), (Shape{3, 0}));
  EXPECT_TRUE(close(out[3], mul(in[0], Tensor::scalar(2.0), rt->backend()), 0.0));
  EXPECT_TRUE(close(out[4], zeros({3, 3}, f64), 0.0));
  // No xs and length 0.
  ScanOptions opt;
  opt.length = 0;
  auto z = scan([](auto c, auto) { return ScanStep{{c[0] * 2.0}, {c[0]}}; }, {h0}, {}, opt);
  auto zo = eval(*rt, compile({z.carry[0], z.ys[0]}, {h0}), {in[0]});
  EXPECT_TRUE(close(zo[0], in[0], 0.0));
  EXPECT_EQ(zo[1].shape(), (Shape{3, 0}));
}

TEST(TracedScan, RefusesCarriesThatChangeAndBadArguments) {
  auto a = placeholder(f64, {2});
  auto b = placeholder(f64, {3});
  auto xs = placeholder(f64, {3, 4});
  auto longer = [](std::span<const TracedTensor> c, std::span<const TracedTensor>) {
    return ScanStep{{c[0], concatenate({c[1], c[0]}, 0)}, {}};
  };
  try {
    (void)scan(longer, {a, b}, {xs});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
    EXPECT_NE(std::string(e.what()).find(
                  "carry 1 is f64[3] in init but the body returns f64[5]; a carry keeps its "
                  "dtype and shape"),
              std::string::npos)
        << e.what();
  }
  auto to_f32 = [](std::span<const TracedTensor> c, std::span<const TracedTensor>) {
    return ScanStep{{cast(c[0], f32)}, {}};
  };
  try {
    (void)scan(to_f32, {a}, {xs});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::DTypeMismatch);
    EXPECT_NE(std::string(e.what()).find("carry 0 is f64[2] in init but the body returns f32[2]"),
              std::string::npos)
        << e.what();
  }
  auto keep = [](std::span<const TracedTensor> c, std::span<const TracedTensor>) {
    return ScanStep{{c[0]}, {}};
  };
  auto fewer = [](std::span<const TracedTensor>, std::span<const TracedTensor>) {
    return ScanStep{{}, {}};
  };
  EXPECT_TF_ERROR(scan(fewer, {a}, {xs}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(scan(ScanFn(), {a}, {xs}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(scan(keep, {a}, {placeholder(f64, {})}), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(scan(keep, {a}, {xs, placeholder(f64, {5})}), ErrorKind::ShapeMismatch);
  ScanOptions bad;
  bad.checkpoint_every = -2;
  EXPECT_TF_ERROR(scan(keep, {a}, {xs}, bad), ErrorKind::InvalidArgument);
  // Symbolic extents that differ become a constraint checked at run time.
  auto rt = cpu_runtime();
  auto u = placeholder(f64, {n_dim()});
  auto v = placeholder(f64, {m_dim()});
  auto c0 = placeholder(f64, {});
  auto s = scan([](auto c, auto x) { return ScanStep{{c[0] + x[0] * x[1]}, {}}; }, {c0}, {u, v});
  Program p = compile({s.carry[0]}, {c0, u, v});
  EXPECT_NEAR(eval(*rt, p, {Tensor::scalar(1.0), vec({1, 2}), vec({3, 4})})[0].item().real(), 12.0,
              1e-15);
  EXPECT_TF_ERROR(eval(*rt, p, {Tensor::scalar(1.0), vec({1, 2}), vec({3, 4, 5})}),
                  ErrorKind::ShapeMismatch);
}

TEST(TracedScan, JvpAndVjpEqualUnrolledAndFiniteDifferences) {
  auto rt = cpu_runtime();
  for (bool reverse : {false, true}) {
    Cell cell;
    auto h0 = placeholder(f64, {3});
    auto xs = placeholder(f64, {3, 5});
    ScanOptions opt;
    opt.reverse = reverse;
    const Traced wrt = {h0, xs, cell.w, cell.a};
    auto ls = loss_of(scan(cell.fn(), {h0}, {xs}, opt));
    auto lu = loss_of(unrolled(cell.fn(), {h0}, {xs}, 5, reverse));
    auto gs = grad_many(ls, wrt), gu = grad_many(lu, wrt);
    // Forward mode along a direction in every input.
    Traced dirs;
    for (const auto& w : wrt) dirs.push_back(placeholder(w.dtype(), w.shape()));
    auto js = jvp_many({ls}, wrt, dirs)[0], ju = jvp_many({lu}, wrt, dirs)[0];
    ASSERT_TRUE(js && ju);
    Traced all = wrt;
    all.insert(all.end(), dirs.begin(), dirs.end());
    Program p =
        compile({*gs[0], *gs[1], *gs[2], *gs[3], *gu[0], *gu[1], *gu[2], *gu[3], *js, *ju}, all);
    std::vector<Tensor> in = cell_inputs(5);
    const std::vector<Tensor> dir = {random({3}, f64, 7), random({3, 5}, f64, 8),
                                     random({3, 3}, f64, 9), Tensor::scalar(0.3)};
    std::vector<Tensor> in_all = in;
    in_all.insert(in_all.end(), dir.begin(), dir.end());
    auto out = eval(*rt, p, in_all);
    for (std::size_t i = 0; i < 4; ++i) EXPECT_TRUE(close(out[i], out[4 + i], 1e-12)) << i;
    EXPECT_TRUE(close(out[8], out[9], 1e-12));
    Program lp = compile({ls}, wrt);
    for (std::size_t i = 0; i < 4; ++i) EXPECT_TRUE(close(out[i], fd_grad(*rt, lp, in, i), 1e-7));
    EXPECT_TRUE(close(out[8], fd_jvp(*rt, lp, in, dir)[0], 1e-7));
    // Adjoint consistency: <grad, dir> is the jvp.
    double dot = 0;
    for (std::size_t i = 0; i < 4; ++i)
      dot += sum(mul(out[i], dir[i], rt->backend()), rt->backend()).item().real();
    EXPECT_NEAR(dot, out[8].item().real(), 1e-10 * (1 + std::abs(dot)));
  }
}

TEST(TracedScan, JvpOfXsAloneReachesTheCarry) {
  auto rt = cpu_runtime();
  Cell cell;
  auto h0 = placeholder(f64, {3});
  auto xs = placeholder(f64, {3, 4});
  auto dx = placeholder(f64, {3, 4});
  ScanResult s = scan(cell.fn(), {h0}, {xs});
  ScanResult u = unrolled(cell.fn(), {h0}, {xs}, 4);
  auto ts = jvp_many({s.carry[0], s.ys[0]}, {xs}, {dx});
  auto tu = jvp_many({u.carry[0], u.ys[0]}, {xs}, {dx});
  ASSERT_TRUE(ts[0] && ts[1]);
  std::vector<Tensor> in = cell_inputs(4);
  in.push_back(random({3, 4}, f64, 5));
  auto out = eval(*rt, compile({*ts[0], *ts[1], *tu[0], *tu[1]}, {h0, xs, cell.w, cell.a, dx}), in);
  EXPECT_TRUE(close(out[0], out[2], 1e-12));
  EXPECT_TRUE(close(out[1], out[3], 1e-12));
}

TEST(TracedScan, HvpThroughScanEqualsUnrolledInBothModes) {
  auto rt = cpu_runtime();
  Cell cell;
  auto h0 = placeholder(f64, {3});
  auto xs = placeholder(f64, {3, 4});
  auto v = placeholder(f64, {3, 3});
  auto ls = loss_of(scan(cell.fn(), {h0}, {xs}));
  auto lu = loss_of(unrolled(cell.fn(), {h0}, {xs}, 4));
  Program p = compile(
      {hvp(ls, cell.w, v), hvp(ls, cell.w, v, HvpMode::ReverseOverReverse), hvp(lu, cell.w, v)},
      {h0, xs, cell.w, cell.a, v});
  std::vector<Tensor> in = cell_inputs(4);
  in.push_back(random({3, 3}, f64, 11));
  auto out = eval(*rt, p, in);
  EXPECT_TRUE(close(out[0], out[2], 1e-11));
  EXPECT_TRUE(close(out[1], out[2], 1e-11));
}

TEST(TracedScan, GradientOfACapturedValue) {
  auto rt = cpu_runtime();
  auto x0 = placeholder(f64, {2});
  auto k = placeholder(f64, {2});
  auto xs = placeholder(f64, {4});
  auto exp_k = exp(k);  // an outside value computed before the scan
  auto step = [&](std::span<const TracedTensor> c, std::span<const TracedTensor> x) {
    TracedTensor next = c[0] * exp_k + x[0] * 0.1;
    return ScanStep{{next}, {sum(next)}};
  };
  ScanResult s = scan(step, {x0}, {xs});
  ScanResult u = unrolled(step, {x0}, {xs}, 4);
  auto& op = static_cast<const Op&>(*s.carry[0].op());
  EXPECT_EQ(op.input_count(), 3u);  // x0, xs, then the captured exp(k)
  auto ls = sum(s.ys[0] * s.ys[0]) + sum(s.carry[0]);
  auto lu = sum(u.ys[0] * u.ys[0]) + sum(u.carry[0]);
  const std::vector<Tensor> in = {vec({0.2, -0.4}), vec({-0.1, 0.05}), vec({1, 2, 3, 4})};
  auto out = eval(*rt, compile({grad(ls, k), grad(lu, k)}, {x0, k, xs}), in);
  EXPECT_TRUE(close(out[0], out[1], 1e-12));
  EXPECT_TRUE(close(out[0], fd_grad(*rt, compile({ls}, {x0, k, xs}), in, 1), 1e-7));
}

TEST(TracedScan, IntegerCarryIsNotDifferentiated) {
  auto rt = cpu_runtime();
  auto x0 = placeholder(f64, {2});
  auto i0 = placeholder(i64, {});
  auto xs = placeholder(f64, {2, 3});
  auto step = [](std::span<const TracedTensor> c, std::span<const TracedTensor> x) {
    TracedTensor i = c[1] + scalar_like(c[1], Scalar(std::int64_t{1}));
    TracedTensor next = sin(c[0]) * cast(i, f64) + x[0];
    return ScanStep{{next, i}, {}};
  };
  ScanResult s = scan(step, {x0, i0}, {xs});
  ScanResult u = unrolled(step, {x0, i0}, {xs}, 3);
  auto ls = sum(s.carry[0] * s.carry[0]), lu = sum(u.carry[0] * u.carry[0]);
  const std::vector<Tensor> in = {vec({0.2, -0.4}), Tensor::scalar(std::int64_t{2}),
                                  random({2, 3}, f64, 4)};
  auto out = eval(
      *rt,
      compile({s.carry[1], grad(ls, x0), grad(lu, x0), grad(ls, xs), grad(lu, xs)}, {x0, i0, xs}),
      in);
  EXPECT_EQ(out[0].item().real(), 5.0);
  EXPECT_TRUE(close(out[1], out[2], 1e-12));
  EXPECT_TRUE(close(out[3], out[4], 1e-12));
}

// Reverse mode with checkpoint_every = k keeps every k-th carry and
// recomputes the others: the same gradients, fewer values alive.
TEST(TracedScan, CheckpointedVjpEqualsPlainWithFewerLiveValues) {
  auto rt = cpu_runtime();
  constexpr std::int64_t n = 64;
  auto build = [](std::int64_t every, bool reverse) {
    Cell cell;
    auto h0 = placeholder(f64, {3});
    auto xs = placeholder(f64, {3, n_dim()});
    ScanOptions opt;
    opt.checkpoint_every = every;
    opt.reverse = reverse;
    auto l = loss_of(scan(cell.fn(), {h0}, {xs}, opt));
    auto g = grad_many(l, {h0, xs, cell.w, cell.a});
    return compile({*g[0], *g[1], *g[2], *g[3]}, {h0, xs, cell.w, cell.a});
  };
  for (bool reverse : {false, true}) {
    Program plain = build(0, reverse), ck = build(8, reverse), ck3 = build(3, reverse);
    EXPECT_EQ(ck.count_ops("scan_backward"), 1u);
    EXPECT_EQ(plain.count_ops("scan_backward"), 0u);
    const std::vector<Tensor> in = cell_inputs(n);
    RunStats sp, sc, s3;
    auto gp = run(*rt, prepare(*rt, plain, InputSignature::of(in), kNoFusion), in, &sp);
    auto gc = run(*rt, prepare(*rt, ck, InputSignature::of(in), kNoFusion), in, &sc);
    auto g3 = run(*rt, prepare(*rt, ck3, InputSignature::of(in), kNoFusion), in, &s3);
    for (std::size_t i = 0; i < 4; ++i) {
      EXPECT_TRUE(close(gc[i], gp[i], 1e-12)) << i;
      EXPECT_TRUE(close(g3[i], gp[i], 1e-12)) << i;
    }
    // The plain pass holds the n stored carries at once; the checkpointed one
    // n/k checkpoints and one segment of k recomputed carries (80, 30 and 39
    // values at the peak for k = 0, 8 and 3).
    EXPECT_GE(sp.peak_live_values, static_cast<std::size_t>(n));
    EXPECT_LE(sc.peak_live_values + 40, sp.peak_live_values)
        << sc.peak_live_values << " vs " << sp.peak_live_values;
    EXPECT_LT(s3.peak_live_values, sp.peak_live_values);
    // A length that is no multiple of k (10 = 3 + 3 + 3 + 1).
    const std::vector<Tensor> in10 = cell_inputs(10);
    auto a = eval(*rt, plain, in10), b = eval(*rt, ck3, in10);
    for (std::size_t i = 0; i < 4; ++i) EXPECT_TRUE(close(a[i], b[i], 1e-12)) << i;
  }
}

TEST(TracedScan, SecondOrderThroughACheckpointedScanIsRefused) {
  Cell cell;
  auto h0 = placeholder(f64, {3});
  auto xs = placeholder(f64, {3, 4});
  auto v = placeholder(f64, {3, 3});
  ScanOptions opt;
  opt.checkpoint_every = 2;
  auto l = loss_of(scan(cell.fn(), {h0}, {xs}, opt));
  EXPECT_TF_ERROR(hvp(l, cell.w, v), ErrorKind::UnsupportedAdRule);
  // Forward mode alone and first-order reverse mode are available.
  EXPECT_TRUE(jvp(l, cell.w, v).has_value());
}

// Several carries and scanned inputs of different dtypes and ranks; complex
// cotangents follow the library's convention (as the unrolled graph's).
TEST(TracedScan, ComplexCarriesAndSeveralXs) {
  auto rt = cpu_runtime();
  auto z0 = placeholder(c128, {2});
  auto r0 = placeholder(f64, {});
  auto zs = placeholder(c128, {2, 3});
  auto ms = placeholder(f64, {2, 2, 3});
  auto step = [](std::span<const TracedTensor> c, std::span<const TracedTensor> x) {
    TracedTensor z = matmul(x[1], c[0]) * x[0] + exp(c[0]) * 0.1;
    TracedTensor r = c[1] * 0.5 + real(sum(z * conj(z)));
    return ScanStep{{z, r}, {abs(z)}};
  };
  ScanResult s = scan(step, {z0, r0}, {zs, ms});
  ScanResult u = unrolled(step, {z0, r0}, {zs, ms}, 3);
  auto ls = sum(s.ys[0]) + s.carry[1] + real(sum(s.carry[0]));
  auto lu = sum(u.ys[0]) + u.carry[1] + real(sum(u.carry[0]));
  const Traced wrt = {z0, r0, zs, ms};
  auto gs = grad_many(ls, wrt), gu = grad_many(lu, wrt);
  Program p =
      compile({ls, lu, *gs[0], *gu[0], *gs[1], *gu[1], *gs[2], *gu[2], *gs[3], *gu[3]}, wrt);
  const std::vector<Tensor> in = {
      mul(random({2}, c128, 1), Tensor::scalar(0.3), rt->backend()), Tensor::scalar(0.2),
      mul(random({2, 3}, c128, 2), Tensor::scalar(0.5), rt->backend()),
      mul(random({2, 2, 3}, f64, 3), Tensor::scalar(0.5), rt->backend())};
  auto out = eval(*rt, p, in);
  for (std::size_t j = 0; j < out.size(); j += 2)
    EXPECT_TRUE(close(out[j], out[j + 1], 1e-12)) << j;
  EXPECT_TRUE(close(out[2], fd_grad(*rt, compile({ls}, wrt), in, 0), 1e-7));
}
