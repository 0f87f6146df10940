// var, std, logsumexp stability, argmax/argmin, summation accuracy and the
// parallel paths of the reductions.
#include <cmath>
#include <limits>

#include "backend/reduce_reference.hpp"
#include "test_util.hpp"

using namespace tenferro;

namespace {

using tftest::AxisList;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using tftest::group_values;
using tftest::values_as;

template <class V>
double reference_var(const std::vector<V>& g, double correction) {
  V m{};
  for (auto v : g) m += v;
  m /= static_cast<double>(g.size());
  double s = 0;
  for (auto v : g) s += std::norm(v - m);
  return s / std::max(static_cast<double>(g.size()) - correction, 0.0);
}

std::int64_t reference_arg(const std::vector<double>& g, bool is_max) {
  std::int64_t at = 0;
  for (std::size_t j = 0; j < g.size(); ++j) {
    if (std::isnan(g[j])) return static_cast<std::int64_t>(j);
    if (is_max ? g[j] > g[static_cast<std::size_t>(at)] : g[j] < g[static_cast<std::size_t>(at)])
      at = static_cast<std::int64_t>(j);
  }
  return at;
}

std::vector<Tensor> layouts_of(const Tensor& x) {
  return {x, tftest::strided_copy(x), x.permute({2, 0, 1}).contiguous().permute({1, 2, 0})};
}

const std::vector<AxisList> kAxisSets = {{}, {0}, {1}, {-1}, {0, 2}, {1, 2}, {0, 1, 2}};

}  // namespace

TEST(ReduceStats, VarStdMatchReference) {
  CpuBackend cpu({.num_threads = 1});
  Generator gen(11);
  for (DType dt : {f64, c128, f32}) {
    const Tensor base = randn({9, 4, 5}, dt, gen);
    const double tol = dt == f32 ? 1e-5 : 1e-12;
    for (const Tensor& x : layouts_of(base)) {
      for (const auto& axes : kAxisSets) {
        const auto groups = group_values<c128_t>(x, axes);
        for (double correction : {0.0, 1.0}) {
          for (bool keepdim : {false, true}) {
            const Tensor v = var(x, axes, cpu, correction, keepdim);
            const Tensor s = tenferro::std_dev(x, axes, cpu, correction, keepdim);
            EXPECT_EQ(v.dtype(), real_dtype(dt));
            EXPECT_EQ(s.dtype(), real_dtype(dt));
            EXPECT_EQ(v.rank(), keepdim ? 3 : 3 - static_cast<std::int64_t>(axes.size()));
            const auto got_v = values_as<double>(v);
            const auto got_s = values_as<double>(s);
            ASSERT_EQ(got_v.size(), groups.size());
            for (std::size_t i = 0; i < groups.size(); ++i) {
              const double want = reference_var(groups[i], correction);
              if (std::isnan(want)) {  // one element with correction 1
                EXPECT_TRUE(std::isnan(got_v[i]));
                continue;
              }
              EXPECT_NEAR(got_v[i], want, tol * (1 + want)) << name(dt) << " " << i;
              EXPECT_NEAR(got_s[i], std::sqrt(want), tol * (1 + want));
            }
          }
        }
      }
    }
  }
}

TEST(ReduceStats, VarSpecialCases) {
  CpuBackend cpu({.num_threads = 1});
  // Integers go to f64; constant input has zero variance.
  const Tensor i = Tensor::from_col_major({4}, std::vector<std::int32_t>{1, 2, 3, 4});
  const Tensor v = var(i, AxisList{0}, cpu);
  EXPECT_EQ(v.dtype(), f64);
  EXPECT_DOUBLE_EQ(v.item().real(), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(var(i, AxisList{0}, cpu, 0.0).item().real(), 1.25);
  EXPECT_DOUBLE_EQ(tenferro::std_dev(i, AxisList{0}, cpu, 0.0).item().real(), std::sqrt(1.25));
  EXPECT_EQ(var(full({5}, 3.25), AxisList{0}, cpu).item().real(), 0.0);
  // Complex: mean |x - mean|^2 with a real result.
  const Tensor z = Tensor::from_col_major({2}, std::vector<c128_t>{{1, 1}, {-1, -1}});
  EXPECT_EQ(var(z, AxisList{0}, cpu, 0.0).dtype(), f64);
  EXPECT_DOUBLE_EQ(var(z, AxisList{0}, cpu, 0.0).item().real(), 2.0);
  EXPECT_DOUBLE_EQ(var(z, AxisList{0}, cpu, 1.0).item().real(), 4.0);
  // Empty reductions and a correction at least N give NaN or inf.
  EXPECT_TRUE(std::isnan(var(zeros({0, 2}), AxisList{0}, cpu).to_vector<double>()[1]));
  EXPECT_EQ(var(Tensor::from_col_major({2}, std::vector<double>{1, 2}), AxisList{0}, cpu, 2.0)
                .item()
                .real(),
            kInf);
  EXPECT_TF_ERROR(var(i, AxisList{0}, cpu, kNaN), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(tenferro::std_dev(i, AxisList{1}, cpu), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(var(ones({2, 2}), AxisList{0, 0}, cpu), ErrorKind::DuplicateAxis);
  EXPECT_TF_ERROR(var(Tensor(), AxisList{0}, cpu), ErrorKind::InvalidArgument);
}

TEST(ReduceStats, LogSumExpIsStable) {
  CpuBackend cpu({.num_threads = 1});
  auto lse = [&](std::vector<double> v) {
    const auto n = static_cast<std::int64_t>(v.size());
    return logsumexp(Tensor::from_col_major({n}, v), cpu).item().real();
  };
  EXPECT_NEAR(lse({1000, 1000}), 1000 + std::log(2.0), 1e-12);
  EXPECT_NEAR(lse({-1000, -1000, -1000}), -1000 + std::log(3.0), 1e-12);
  EXPECT_NEAR(lse({1000, 0}), 1000, 1e-12);
  EXPECT_EQ(lse({-kInf, -kInf}), -kInf);
  EXPECT_EQ(lse({kInf, 1}), kInf);
  EXPECT_EQ(lse({-kInf, 2}), 2);
  EXPECT_TRUE(std::isnan(lse({kInf, kNaN})));
  // Per axis, f32, with one huge column.
  const Tensor x = Tensor::from_col_major({2, 2}, std::vector<float>{1000, 1000, 1, 2});
  const auto cols = logsumexp(x, AxisList{0}, cpu, true).to_vector<float>();
  EXPECT_NEAR(cols[0], 1000 + std::log(2.0), 1e-3);
  EXPECT_NEAR(cols[1], 2 + std::log1p(std::exp(-1.0)), 1e-5);
}

TEST(ReduceStats, ArgMaxArgMinMatchReference) {
  CpuBackend cpu({.num_threads = 1});
  Generator gen(12);
  // Small integers make many ties; the larger shape takes the per-output path.
  std::vector<double> v(16 * 5 * 6);
  for (auto& e : v) e = static_cast<double>(gen.next_u64() % 4);
  for (std::size_t k = 0; k < v.size(); k += 37) v[k] = kNaN;
  const Tensor base = Tensor::from_col_major({16, 5, 6}, v);
  for (DType dt : {f64, f32}) {
    Tensor typed = zeros(base.shape(), dt);
    Tensor::copy_into(base, typed);
    for (const Tensor& x : layouts_of(typed)) {
      for (std::int64_t axis : {0, 1, 2, -1}) {
        const auto groups = group_values<double>(x, {axis});
        for (bool is_max : {true, false}) {
          for (bool keepdim : {false, true}) {
            const Tensor got =
                is_max ? argmax(x, axis, cpu, keepdim) : argmin(x, axis, cpu, keepdim);
            EXPECT_EQ(got.dtype(), i64);
            EXPECT_EQ(got.rank(), keepdim ? 3 : 2);
            const auto idx = got.to_vector<std::int64_t>();
            for (std::size_t i = 0; i < groups.size(); ++i)
              EXPECT_EQ(idx[i], reference_arg(groups[i], is_max)) << axis << " " << i;
          }
        }
      }
    }
  }
}

TEST(ReduceStats, ArgMaxTiesIntegersAndErrors) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor t = Tensor::from_col_major({5}, std::vector<std::int64_t>{1, 3, 3, 0, 0});
  EXPECT_EQ(argmax(t, 0, cpu).item().to_int(), 1);
  EXPECT_EQ(argmin(t, -1, cpu).item().to_int(), 3);
  EXPECT_EQ(argmax(t, 0, cpu).rank(), 0);
  EXPECT_EQ(argmax(t, 0, cpu, true).shape(), (Shape{1}));
  // Ties are resolved by logical order, also along a reversed view.
  const Tensor r = t.slice(0, std::nullopt, std::nullopt, -1);  // 0 0 3 3 1
  EXPECT_EQ(argmax(r, 0, cpu).item().to_int(), 2);
  EXPECT_EQ(argmin(r, 0, cpu).item().to_int(), 0);
  const Tensor i = Tensor::from_col_major({2, 3}, std::vector<std::int32_t>{5, 1, 5, 9, -2, 9});
  EXPECT_EQ(argmax(i, 1, cpu).to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(argmin(i, 0, cpu).to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 0, 0}));
  // More kept elements than one accumulator chunk holds.
  Generator gen(14);
  const Tensor cols = rand({1100, 3}, f64, gen);
  const auto groups = group_values<double>(cols, {1});
  const auto am = argmax(cols, 1, cpu).to_vector<std::int64_t>();
  for (std::size_t k = 0; k < groups.size(); ++k) EXPECT_EQ(am[k], reference_arg(groups[k], true));
  // An extent-1 axis and an empty result are fine.
  EXPECT_EQ(argmax(ones({1, 3}), 0, cpu).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{0, 0, 0}));
  EXPECT_EQ(argmax(zeros({3, 0}), 0, cpu).shape(), (Shape{0}));

  EXPECT_TF_ERROR(argmax(zeros({0, 3}), 0, cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(argmin(zeros({3, 0}), 1, cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(argmax(ones({2}, c128), 0, cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(argmin(ones({2, 2}), 2, cpu), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(argmax(Tensor::scalar(1.0), 0, cpu), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(argmax(Tensor(), 0, cpu), ErrorKind::InvalidArgument);
}

TEST(ReduceStats, F32SummationIsAccurate) {
  CpuBackend cpu({.num_threads = 1});
  const std::int64_t n = std::int64_t{1} << 22;
  EXPECT_EQ(sum(ones({n}, f32), cpu).item().real(), static_cast<double>(n));
  // 0.1f summed one by one in f32 drifts far off; pairwise/blocked sums stay close.
  const Tensor tenths = full({n}, 0.1f);
  const double exact = static_cast<double>(n) * static_cast<double>(0.1f);
  EXPECT_NEAR(sum(tenths, cpu).item().real() / exact, 1.0, 1e-5);
  EXPECT_NEAR(mean(tenths, cpu).item().real(), static_cast<double>(0.1f), 1e-7);
  // Row accumulation (reducing the outer axis) blocks its partial sums too.
  const Tensor rows = full({4, n / 16}, 0.1f);
  for (float s : sum(rows, {1}, cpu).to_vector<float>())
    EXPECT_NEAR(s / (static_cast<double>(n / 16) * static_cast<double>(0.1f)), 1.0, 1e-5);
}

TEST(ReduceStats, ParallelMatchesSerial) {
  CpuBackend one({.num_threads = 1});
  CpuBackend two({.num_threads = 2});
  // Many small chunks: three threads and a low threshold.
  CpuBackend fine({.num_threads = 3, .parallel_threshold = 1000});
  Generator gen(13);
  const Tensor x = randn({512, 512}, f64, gen);  // 2^18 elements
  const Tensor flat = x.reshape({1 << 18});
  const Tensor tall = x.reshape({1 << 17, 2});
  const Tensor wide = x.reshape({2, 1 << 17});
  // The split never depends on the thread count, so one and two threads agree
  // exactly; another threshold splits differently and agrees within rounding.
  auto same = [&](const Tensor& a, const Tensor& b, const Tensor& c) {
    EXPECT_EQ(a.shape(), b.shape());
    EXPECT_EQ(max_abs_diff(a, b), 0.0);
    EXPECT_TRUE(allclose(a, c, 1e-12, 1e-12)) << max_abs_diff(a, c);
  };
  for (const Tensor& t : {x, x.transpose(), tftest::strided_copy(x)}) {
    for (const AxisList& axes : {AxisList{0}, AxisList{1}, AxisList{0, 1}}) {
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Mean, ReduceOp::LogSumExp})
        same(reduce(op, t, axes, one), reduce(op, t, axes, two), reduce(op, t, axes, fine));
      same(var(t, axes, one), var(t, axes, two), var(t, axes, fine));
    }
    for (std::int64_t axis : {0, 1}) {
      const auto a1 = argmax(t, axis, one).to_vector<std::int64_t>();
      EXPECT_EQ(a1, argmax(t, axis, two).to_vector<std::int64_t>());
      EXPECT_EQ(a1, argmax(t, axis, fine).to_vector<std::int64_t>());
      const auto i1 = argmin(t, axis, one).to_vector<std::int64_t>();
      EXPECT_EQ(i1, argmin(t, axis, two).to_vector<std::int64_t>());
      EXPECT_EQ(i1, argmin(t, axis, fine).to_vector<std::int64_t>());
    }
  }
  same(sum(flat, one), sum(flat, two), sum(flat, fine));
  same(sum(tall, {0}, one), sum(tall, {0}, two), sum(tall, {0}, fine));
  same(sum(wide, {1}, one), sum(wide, {1}, two), sum(wide, {1}, fine));
  same(min(wide, {0}, one), min(wide, {0}, two), min(wide, {0}, fine));
  // And against the reference for one parallel case.
  double ref = 0;
  for (double v : x.to_vector<double>()) ref += v;
  EXPECT_NEAR(sum(x, two).item().real(), ref, 1e-9);
}
