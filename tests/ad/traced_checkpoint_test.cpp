// checkpoint(): values, gradients and HVPs equal the unmarked program, and
// reverse mode keeps fewer values alive because marked regions recompute
// their intermediates instead of storing them.

#include "ad/traced_fixtures.hpp"

using namespace ttest;

namespace {

// One segment: several non-fused ops (matmul) with elementwise ops between.
TracedTensor segment(const TracedTensor& h, const Tensor& w) {
  TracedTensor y = h;
  for (int i = 0; i < 4; ++i) y = sin(matmul(constant(w), y)) * 0.9;
  return y;
}

struct Net {
  TracedTensor x = placeholder(f64, {4, n_dim()});
  TracedTensor v = placeholder(f64, {4, n_dim()});
  TracedTensor loss;
  Net(const Tensor& w, bool marked) {
    TracedTensor h = x;
    for (int s = 0; s < 8; ++s) {
      if (marked) {
        h = checkpoint([&](const TracedTensor& in) { return segment(in, w); }, h);
      } else {
        h = segment(h, w);
      }
    }
    loss = sum(h * h);
  }
};

const PrepareOptions kNoFusion{false, 2048};

}  // namespace

TEST(TracedCheckpoint, SameValuesGradientsAndHvps) {
  auto rt = cpu_runtime();
  const Tensor w = random({4, 4}, f64, 3);
  Net plain(w, false), marked(w, true);
  Program pp = compile({plain.loss, grad(plain.loss, plain.x), hvp(plain.loss, plain.x, plain.v),
                        hvp(plain.loss, plain.x, plain.v, HvpMode::ReverseOverReverse)},
                       {plain.x, plain.v});
  Program pm =
      compile({marked.loss, grad(marked.loss, marked.x), hvp(marked.loss, marked.x, marked.v),
               hvp(marked.loss, marked.x, marked.v, HvpMode::ReverseOverReverse)},
              {marked.x, marked.v});
  EXPECT_GE(pm.count_ops("checkpoint"), 8u);
  const std::vector<Tensor> in = {random({4, 5}, f64, 1), random({4, 5}, f64, 2)};
  auto a = eval(*rt, pp, in), b = eval(*rt, pm, in);
  ASSERT_EQ(a.size(), 4u);
  for (std::size_t j = 0; j < 4; ++j) EXPECT_TRUE(close(a[j], b[j], 1e-12)) << j;
  EXPECT_TRUE(close(b[2], b[3], 1e-10));
  // Finite differences of the marked program's value.
  Program loss_only = compile({marked.loss}, {marked.x});
  EXPECT_TRUE(close(b[1], fd_grad(*rt, loss_only, {in[0]}, 0), 1e-5));
}

TEST(TracedCheckpoint, ReverseModeKeepsFewerValuesAlive) {
  auto rt = cpu_runtime();
  const Tensor w = random({4, 4}, f64, 3);
  Net plain(w, false), marked(w, true);
  Program pp = compile({grad(plain.loss, plain.x)}, {plain.x});
  Program pm = compile({grad(marked.loss, marked.x)}, {marked.x});
  const Tensor x = random({4, 6}, f64, 1);
  const Tensor in[1] = {x};
  RunStats sp, sm;
  auto gp = run(*rt, prepare(*rt, pp, InputSignature::of(in), kNoFusion), in, &sp);
  auto gm = run(*rt, prepare(*rt, pm, InputSignature::of(in), kNoFusion), in, &sm);
  EXPECT_TRUE(close(gp[0], gm[0], 1e-12));
  // Unmarked: every segment's intermediates wait for the backward pass.
  EXPECT_LT(sm.peak_live_values, sp.peak_live_values)
      << sm.peak_live_values << " vs " << sp.peak_live_values;
  // At least 30% fewer (25 vs 36 here; the plain graph also loses its
  // multiplications by the seed one to compile's algebraic simplification).
  EXPECT_LE(sm.peak_live_values * 10, sp.peak_live_values * 7);
}

TEST(TracedCheckpoint, CapturedValuesBecomeRegionInputsAndMultipleOutputs) {
  auto rt = cpu_runtime();
  auto x = placeholder(f64, {3});
  auto y = placeholder(f64, {3});
  auto c = constant(Tensor::from_col_major<double>({3}, {1, 2, 3}));
  const TracedTensor ins[1] = {x};
  auto outs = checkpoint(
      [&](std::span<const TracedTensor> p) {
        // Captures y and a constant from outside the region.
        return std::vector<TracedTensor>{exp(p[0]) * y + c, sin(p[0]), y};
      },
      ins);
  ASSERT_EQ(outs.size(), 3u);
  // The region body holds no constant data.
  auto& region = static_cast<const Op&>(*outs[0].op());
  EXPECT_EQ(region.name(), "checkpoint");
  EXPECT_EQ(region.input_count(), 3u);  // x, then y and the constant
  auto loss = sum(outs[0] * outs[1]) + sum(outs[2]);
  Program p = compile({loss, grad(loss, x), grad(loss, y)}, {x, y});
  const std::vector<Tensor> in = {random({3}, f64, 1), random({3}, f64, 2)};
  auto out = eval(*rt, p, in);
  Program lp = compile({loss}, {x, y});
  EXPECT_TRUE(close(out[1], fd_grad(*rt, lp, in, 0)));
  EXPECT_TRUE(close(out[2], fd_grad(*rt, lp, in, 1)));
  // jvp through a region.
  auto t = jvp(loss, x, ones_like(x));
  ASSERT_TRUE(t.has_value());
  auto jv = eval(*rt, compile({*t}, {x, y}), in)[0];
  EXPECT_NEAR(jv.item().real(), sum(out[1], rt->backend()).item().real(), 1e-10);
  EXPECT_TF_ERROR(checkpoint(TracedFn(), ins), ErrorKind::InvalidArgument);
}

// Release analysis of ops with bodies: a value the outer program reads last at
// the region is moved into it, and the body frees it at its own last use
// there, so fewer values are alive while the body runs than when the outer
// program still holds the value (here: it is also a program output).
TEST(TracedCheckpoint, InputsReadLastAtTheRegionAreReleasedInsideIt) {
  auto rt = cpu_runtime();
  auto x = placeholder(f64, {64});
  auto body = [](const TracedTensor& a) { return cos(sin(exp(a) * 2.0) * 3.0); };
  auto a = exp(x);
  auto moved = checkpoint(body, a);
  Program released = compile({moved}, {x});
  Program kept = compile({moved, a}, {x});
  const Tensor in[1] = {random({64}, f64, 1)};
  RunStats sr, sk;
  auto r = run(*rt, prepare(*rt, released, InputSignature::of(in), kNoFusion), in, &sr);
  auto k = run(*rt, prepare(*rt, kept, InputSignature::of(in), kNoFusion), in, &sk);
  EXPECT_TRUE(close(r[0], k[0], 0.0));
  EXPECT_EQ(sr.peak_live_values + 1, sk.peak_live_values)
      << sr.peak_live_values << " vs " << sk.peak_live_values;
  // The moved value is the outer program's own; the caller's inputs are never
  // cleared (the same input tensor runs again with the same result).
  auto again = run(*rt, prepare(*rt, released, InputSignature::of(in), kNoFusion), in);
  EXPECT_TRUE(close(again[0], r[0], 0.0));
  EXPECT_EQ(in[0].numel(), 64);
}
