// Capture hand-over: eager code recorded by a CaptureScope becomes a traced
// program that runs for new inputs and can be transformed.

#include "ad/traced_fixtures.hpp"
#include "tenferro/ad/eager_ops.hpp"

using namespace ttest;

TEST(TracedCapture, FromCaptureCompilesEagerCode) {
  auto ert = EagerRuntime::make_cpu();
  EagerTensor x = ert->tensor(random({4}, f64, 1));
  EagerTensor w = ert->tensor(random({4}, f64, 2));  // untracked: becomes a constant
  EagerTensor y;
  Program p;
  {
    CaptureScope capture;
    y = sum(exp(x) * w) + 1.0;
    const EagerTensor ins[1] = {x};
    const EagerTensor outs[1] = {y};
    p = from_capture(capture, ins, outs);
  }
  EXPECT_EQ(p.input_count(), 1u);
  EXPECT_GE(p.constants().size(), 1u);
  EXPECT_TRUE(allclose(run_compiled(*ert->runtime(), p, {x.value()})[0], y.value(), 1e-12));
  Tensor x2 = random({4}, f64, 7);
  auto& cpu = ert->backend();
  Tensor ref = add(sum(mul(exp(x2, cpu), w.value(), cpu), cpu), Tensor::scalar(1.0), cpu);
  EXPECT_TRUE(allclose(run_compiled(*ert->runtime(), p, {x2})[0], ref, 1e-12));
}

TEST(TracedCapture, CapturedProgramsDifferentiateAndRejectBadArguments) {
  auto ert = EagerRuntime::make_cpu();
  EagerTensor x = ert->tensor(random({3}, f64, 1));
  Program p;
  {
    CaptureScope capture;
    EagerTensor y = sum(sin(x) * x);
    const EagerTensor ins[1] = {x};
    const EagerTensor outs[1] = {y};
    p = from_capture(capture, ins, outs);
    const EagerTensor twice[2] = {x, x};
    EXPECT_TF_ERROR(from_capture(capture, twice, outs), ErrorKind::InvalidArgument);
    const EagerTensor undefined[1] = {EagerTensor()};
    EXPECT_TF_ERROR(from_capture(capture, undefined, outs), ErrorKind::InvalidArgument);
  }
  auto& rt = *ert->runtime();
  auto g = eval(rt, grad(p), {x.value()})[0];
  EXPECT_TRUE(close(g, fd_grad(rt, p, {x.value()}, 0)));
}
