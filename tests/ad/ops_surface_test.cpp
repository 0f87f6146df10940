// One operation surface for both AD tiers (tenferro/ad/ops.hpp): the same
// generic code runs eagerly and as a traced program with equal values; the
// argument forms (braces, spans, vectors, arrays, symbolic shapes) are
// accepted alike; errors are typed in both tiers.

#include <vector>

#include "ad/traced_fixtures.hpp"
#include "tenferro/ad/composite.hpp"
#include "tenferro/ad/eager_ops.hpp"

using namespace ttest;

namespace {

// Written once, instantiated for EagerTensor and TracedTensor.
template <AdTensor T>
T model(const T& x, const T& w) {
  const T a = reshape(x, {2, -1});            // [2, 6]
  const T b = transpose(reshape(x, {3, 4}));  // [4, 3]
  const std::vector<std::int64_t> axes{0};
  const T s = sum(a * a, axes, true);                                // vector axes, keepdim
  const T m = matmul(reshape(w, {2, 3, 2}), reshape(b, {3, 4, 1}));  // [2, 4, 2]
  const T parts[2] = {sum(s), sum(m)};                               // array form
  const T st = stack(parts, 0);
  const T r = relu(st - 1.0) + softplus(st) + amax(m, {0, 1});
  return sum(r) + logsumexp(concatenate({a, a}, 1));  // braces form
}

}  // namespace

TEST(OpsSurface, OneGenericFunctionAgreesAcrossTiers) {
  auto rt = cpu_runtime();
  auto ert = EagerRuntime::make(rt);
  const Tensor x = random({12}, f64, 1), w = random({12}, f64, 2);

  const EagerTensor ex = ert->tensor(x), ew = ert->tensor(w);
  const Tensor eager_out = model(ex, ew).value();

  const TracedTensor tx = placeholder(f64, {12}, "x"), tw = placeholder(f64, {12}, "w");
  const Program p = compile({model(tx, tw)}, {tx, tw});
  const auto traced_out = eval(*rt, p, {x, w});
  ASSERT_EQ(traced_out.size(), 1u);
  EXPECT_EQ(eager_out.shape(), traced_out[0].shape());
  EXPECT_TRUE(close(eager_out, traced_out[0], 1e-12));
}

TEST(OpsSurface, MatmulBroadcastsBatchAxesInBothTiers) {
  auto rt = cpu_runtime();
  auto ert = EagerRuntime::make(rt);
  const Tensor a = random({2, 3, 4}, f64, 3), b = random({3, 5, 1}, f64, 4);
  const Tensor eager_out = matmul(ert->tensor(a), ert->tensor(b)).value();
  EXPECT_EQ(eager_out.shape(), (Shape{2, 5, 4}));

  const TracedTensor ta = placeholder(f64, {2, 3, 4}), tb = placeholder(f64, {3, 5, 1});
  const TracedTensor tc = matmul(ta, tb);
  EXPECT_EQ(tc.shape(), (SymShape{2, 5, 4}));
  const auto traced_out = eval(*rt, compile({tc}, {ta, tb}), {a, b});
  EXPECT_TRUE(close(eager_out, traced_out[0], 1e-12));

  // Symbolic batch extents: equal ones and a constant 1 broadcast; others are typed errors.
  const TracedTensor sa = placeholder(f64, {2, 3, n_dim()}), sb = placeholder(f64, {3, 5, 1});
  EXPECT_EQ(matmul(sa, sb).shape(), (SymShape{2, 5, n_dim()}));
  EXPECT_TF_ERROR(matmul(sa, placeholder(f64, {3, 5, m_dim()})), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(matmul(ert->tensor(a), ert->tensor(random({3, 5, 3}, f64, 5))),
                  ErrorKind::ShapeMismatch);
  // Vectors act as row / column vectors.
  const Tensor v = random({3}, f64, 6);
  EXPECT_EQ(matmul(ert->tensor(v), ert->tensor(random({3, 4}, f64, 7))).shape(), (Shape{4}));
  EXPECT_EQ(matmul(placeholder(f64, {3}), placeholder(f64, {3})).rank(), 0);
}

TEST(OpsSurface, ShapeArgumentsAndMinusOne) {
  auto rt = cpu_runtime();
  auto ert = EagerRuntime::make(rt);
  const EagerTensor x = ert->tensor(random({2, 3, 4}, f64, 8));
  const Shape shape{6, 4};
  const std::vector<std::int64_t> vec{4, 6};
  const std::int64_t arr[2] = {3, 8};
  EXPECT_EQ(reshape(x, shape).shape(), (Shape{6, 4}));
  EXPECT_EQ(reshape(x, vec).shape(), (Shape{4, 6}));
  EXPECT_EQ(reshape(x, arr).shape(), (Shape{3, 8}));
  EXPECT_EQ(reshape(x, {-1, 2}).shape(), (Shape{12, 2}));
  EXPECT_EQ(broadcast_to(ert->tensor(random({4}, f64, 9)), {2, 4}).shape(), (Shape{2, 4}));

  // Traced: -1 resolves against constant sizes; with a symbolic size it is a typed error.
  EXPECT_EQ(reshape(placeholder(f64, {2, 3, 4}), {4, -1}).shape(), (SymShape{4, 6}));
  EXPECT_TF_ERROR(reshape(placeholder(f64, {n_dim(), 4}), {-1}), ErrorKind::InvalidArgument);
  EXPECT_EQ(reshape(placeholder(f64, {n_dim(), 4}), {4, n_dim()}).shape(), (SymShape{4, n_dim()}));

  // Errors are the same kinds in both tiers.
  EXPECT_TF_ERROR(reshape(x, {-1, -1}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(reshape(placeholder(f64, {2, 3}), {-1, -1}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(reshape(x, {5, -1}), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(reshape(placeholder(f64, {2, 3}), {4, -1}), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(reshape(x, {-3, 8}), ErrorKind::InvalidArgument);
  // Eager tensors have constant extents only.
  EXPECT_TF_ERROR(reshape(x, {n_dim(), 4}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(broadcast_to(x, {n_dim(), 2, 3, 4}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(broadcast_in_dim(x, {n_dim(), 2, 3, 4}, {1, 2, 3}), ErrorKind::InvalidArgument);
  // Empty lists are typed errors in both tiers.
  EXPECT_TF_ERROR(concatenate(std::vector<EagerTensor>{}, 0), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(stack(std::vector<TracedTensor>{}, 0), ErrorKind::InvalidArgument);
}

TEST(OpsSurface, SliceAndPadDefaultsAgree) {
  auto rt = cpu_runtime();
  auto ert = EagerRuntime::make(rt);
  const Tensor v = random({5, 4}, f64, 10);
  const EagerTensor ev = ert->tensor(v);
  const Tensor es = slice(ev, {1, 0}, {4, 4}).value();  // stride defaults to 1
  EXPECT_EQ(es.shape(), (Shape{3, 4}));
  const Tensor ep = pad(ev, {1, 0}, {0, 2}, Scalar(0.0)).value();  // no interior padding
  EXPECT_EQ(ep.shape(), (Shape{6, 6}));

  const TracedTensor tv = placeholder(f64, {5, 4});
  const auto out = eval(
      *rt, compile({slice(tv, {1, 0}, {4, 4}), pad(tv, {1, 0}, {0, 2}, Scalar(0.0))}, {tv}), {v});
  EXPECT_TRUE(close(es, out[0], 0.0));
  EXPECT_TRUE(close(ep, out[1], 0.0));
}
