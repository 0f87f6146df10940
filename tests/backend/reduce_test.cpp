// sum, prod, mean, max, min, all, any, logsumexp against naive reference loops;
// dtype rules, empty reductions, and every error kind.
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

Shape expected_shape(const Tensor& x, const AxisList& axes, bool keepdim) {
  std::vector<bool> mask(static_cast<std::size_t>(x.rank()), false);
  for (auto a : axes) mask[static_cast<std::size_t>(a < 0 ? a + x.rank() : a)] = true;
  Shape s;
  for (std::size_t d = 0; d < mask.size(); ++d) {
    if (!mask[d])
      s.push_back(x.shape()[d]);
    else if (keepdim)
      s.push_back(1);
  }
  return s;
}

template <class V>
V reference(ReduceOp op, const std::vector<V>& g) {
  switch (op) {
    case ReduceOp::Sum: {
      V s{};
      for (auto v : g) s += v;
      return s;
    }
    case ReduceOp::Prod: {
      V p(1);
      for (auto v : g) p *= v;
      return p;
    }
    case ReduceOp::Mean: {
      V s{};
      for (auto v : g) s += v;
      return s / static_cast<double>(g.size());
    }
    case ReduceOp::All: {
      for (auto v : g)
        if (v == V{}) return V(0);
      return V(1);
    }
    case ReduceOp::Any: {
      for (auto v : g)
        if (v != V{}) return V(1);
      return V(0);
    }
    default:
      break;
  }
  if constexpr (std::is_same_v<V, double>) {
    double m = op == ReduceOp::Min ? kInf : -kInf;
    for (auto v : g) {
      if (std::isnan(v)) return v;
      m = op == ReduceOp::Min ? std::min(m, v) : std::max(m, v);
    }
    if (op != ReduceOp::LogSumExp || !std::isfinite(m)) return m;
    double s = 0;
    for (auto v : g) s += std::exp(v - m);
    return m + std::log(s);
  }
  ADD_FAILURE() << "no reference for " << name(op);
  return V{};
}

// Checks one reduction against the reference, value by value.
template <class V>
void expect_reduction(ReduceOp op, const Tensor& x, const AxisList& axes, bool keepdim,
                      const Tensor& got, double tol) {
  SCOPED_TRACE(::testing::Message() << name(op) << " axes " << shape_to_string(axes) << " keepdim "
                                    << keepdim << " shape " << shape_to_string(x.shape())
                                    << " strides " << shape_to_string(x.strides()));
  ASSERT_EQ(got.shape(), expected_shape(x, axes, keepdim));
  const auto groups = group_values<V>(x, axes);
  const auto values = values_as<V>(got);
  ASSERT_EQ(values.size(), groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const V want = reference(op, groups[i]);
    EXPECT_LE(std::abs(values[i] - want), tol * (1 + std::abs(want))) << "output " << i;
  }
}

// Normal values with about a third exact zeros (for all/any), seeded.
Tensor sample(std::initializer_list<std::int64_t> shape, DType dtype, std::uint64_t seed) {
  Generator gen(seed);
  Tensor re = randn(shape, f64, gen);
  auto v = re.to_vector<double>();
  for (auto& e : v)
    if (gen.uniform() < 0.3) e = 0.0;
  Tensor base = Tensor::from_col_major(re.shape(), v);
  if (is_complex(dtype)) base = complex(base, randn(shape, f64, gen));
  Tensor out = zeros(shape, dtype);
  Tensor::copy_into(base, out);
  return out;
}

const std::vector<AxisList> kAxisSets = {{},     {0},    {1},    {2},       {-1},
                                         {0, 2}, {2, 0}, {1, 2}, {0, 1, 2}, {-3, 1}};

std::vector<Tensor> layouts_of(const Tensor& x) {
  // Compact, negative strides, and a permuted view of a permuted copy.
  return {x, tftest::strided_copy(x), x.permute({2, 0, 1}).contiguous().permute({1, 2, 0})};
}

}  // namespace

TEST(Reduce, Names) {
  EXPECT_EQ(name(ReduceOp::Sum), "sum");
  EXPECT_EQ(name(ReduceOp::Prod), "prod");
  EXPECT_EQ(name(ReduceOp::Mean), "mean");
  EXPECT_EQ(name(ReduceOp::Max), "max");
  EXPECT_EQ(name(ReduceOp::Min), "min");
  EXPECT_EQ(name(ReduceOp::All), "all");
  EXPECT_EQ(name(ReduceOp::Any), "any");
  EXPECT_EQ(name(ReduceOp::LogSumExp), "logsumexp");
}

TEST(Reduce, EveryOpMatchesReferenceF64) {
  CpuBackend cpu({.num_threads = 1});
  const ReduceOp ops[] = {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Mean, ReduceOp::Max,
                          ReduceOp::Min, ReduceOp::All,  ReduceOp::Any,  ReduceOp::LogSumExp};
  // [3,4,5] reduces short axes row by row; [16,5,6] also takes the per-output path.
  for (const Tensor& base : {sample({3, 4, 5}, f64, 1), sample({16, 5, 6}, f64, 2)}) {
    for (const Tensor& x : layouts_of(base)) {
      for (const auto& axes : kAxisSets) {
        for (bool keepdim : {false, true}) {
          for (ReduceOp op : ops) {
            const Tensor got = reduce(op, x, axes, cpu, keepdim);
            EXPECT_EQ(got.dtype(), (op == ReduceOp::All || op == ReduceOp::Any) ? bool_ : f64);
            expect_reduction<double>(op, x, axes, keepdim, got, 1e-12);
          }
        }
      }
    }
  }
}

TEST(Reduce, ComplexSumProdMeanMatchReference) {
  CpuBackend cpu({.num_threads = 1});
  for (const Tensor& x : layouts_of(sample({3, 4, 5}, c128, 3))) {
    for (const auto& axes : kAxisSets) {
      for (ReduceOp op :
           {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Mean, ReduceOp::All, ReduceOp::Any}) {
        const Tensor got = reduce(op, x, axes, cpu, false);
        const bool logical = op == ReduceOp::All || op == ReduceOp::Any;
        EXPECT_EQ(got.dtype(), logical ? bool_ : c128);
        expect_reduction<c128_t>(op, x, axes, false, got, 1e-12);
      }
    }
  }
  const Tensor x = sample({4, 3}, c64, 4);
  const Tensor s = sum(x, {0}, cpu);
  EXPECT_EQ(s.dtype(), c64);
  expect_reduction<c128_t>(ReduceOp::Sum, x, {0}, false, s, 1e-5);
}

TEST(Reduce, F32AndIntegersMatchReference) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor xf = sample({5, 6, 7}, f32, 5);
  for (const Tensor& x : layouts_of(xf)) {
    for (const auto& axes : kAxisSets) {
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::LogSumExp}) {
        const Tensor got = reduce(op, x, axes, cpu, true);
        EXPECT_EQ(got.dtype(), f32);
        expect_reduction<double>(op, x, axes, true, got, 1e-5);
      }
    }
  }
  // Integers: exact, with the i64 (sum/prod) and f64 (mean) result dtypes.
  Generator gen(6);
  std::vector<std::int64_t> v(60);
  for (auto& e : v) e = static_cast<std::int64_t>(gen.next_u64() % 5) - 2;
  const Tensor xi = Tensor::from_col_major({3, 4, 5}, v);
  for (const Tensor& x : layouts_of(xi)) {
    for (const auto& axes : kAxisSets) {
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min,
                          ReduceOp::Mean, ReduceOp::All, ReduceOp::Any}) {
        const Tensor got = reduce(op, x, axes, cpu, false);
        expect_reduction<double>(op, x, axes, false, got, 0.0 + 1e-15);
      }
    }
  }
}

TEST(Reduce, DTypeRules) {
  CpuBackend cpu({.num_threads = 1});
  Tensor b = zeros({4}, bool_);
  Tensor::copy_into(Tensor::from_col_major({4}, std::vector<double>{1, 0, 1, 1}), b);
  const Tensor i = Tensor::from_col_major({3}, std::vector<std::int32_t>{2, 3, 4});
  EXPECT_EQ(sum(b, cpu).dtype(), i64);
  EXPECT_EQ(sum(b, cpu).item().to_int(), 3);
  EXPECT_EQ(sum(i, cpu).dtype(), i64);
  EXPECT_EQ(sum(i, cpu).item().to_int(), 9);
  EXPECT_EQ(prod(i, cpu).dtype(), i64);
  EXPECT_EQ(prod(i, cpu).item().to_int(), 24);
  EXPECT_EQ(prod(b, cpu).item().to_int(), 0);
  EXPECT_EQ(mean(i, cpu).dtype(), f64);
  EXPECT_DOUBLE_EQ(mean(i, cpu).item().real(), 3.0);
  EXPECT_DOUBLE_EQ(mean(b, cpu).item().real(), 0.75);
  EXPECT_EQ(logsumexp(i, cpu).dtype(), f64);
  EXPECT_EQ(max(i, cpu).dtype(), i32);
  EXPECT_EQ(max(i, cpu).item().to_int(), 4);
  EXPECT_EQ(min(b, cpu).dtype(), bool_);
  EXPECT_EQ(min(b, cpu).item().to<bool>(), false);
  EXPECT_EQ(all(i, cpu).dtype(), bool_);
  EXPECT_EQ(all(i, cpu).item().to<bool>(), true);
  EXPECT_EQ(any(zeros({3}, c128), cpu).item().to<bool>(), false);
  // NaN is truthy.
  EXPECT_EQ(all(full({2}, kNaN), cpu).item().to<bool>(), true);
  const Tensor f = ones({2, 2}, f32);
  EXPECT_EQ(sum(f, cpu).dtype(), f32);
  EXPECT_EQ(mean(f, cpu).dtype(), f32);
  EXPECT_EQ(sum(ones({2}, c64), cpu).dtype(), c64);
}

TEST(Reduce, RankZeroAndEmptyAxisList) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor s = Tensor::scalar(2.5);
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min,
                      ReduceOp::LogSumExp}) {
    const Tensor whole = reduce(op, s, AxisList{}, cpu);
    EXPECT_EQ(whole.rank(), 0);
    EXPECT_DOUBLE_EQ(whole.item().real(), 2.5) << name(op);
  }
  EXPECT_EQ(sum(s, cpu).rank(), 0);
  EXPECT_DOUBLE_EQ(sum(s, cpu).item().real(), 2.5);
  EXPECT_EQ(any(s, cpu).item().to<bool>(), true);
  EXPECT_TF_ERROR(sum(s, {0}, cpu), ErrorKind::AxisOutOfBounds);

  // An empty list reduces nothing but applies the dtype rule.
  const Tensor i = Tensor::from_col_major({2, 2}, std::vector<std::int32_t>{1, -2, 3, 0});
  const Tensor same = sum(i, std::span<const std::int64_t>{}, cpu, true);
  EXPECT_EQ(same.dtype(), i64);
  EXPECT_EQ(same.shape(), i.shape());
  EXPECT_EQ(same.to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, -2, 3, 0}));
  const Tensor truth = all(i, std::span<const std::int64_t>{}, cpu);
  EXPECT_EQ(truth.dtype(), bool_);
  EXPECT_EQ(values_as<std::int64_t>(truth), (std::vector<std::int64_t>{1, 1, 1, 0}));
}

TEST(Reduce, ZeroSizeUsesEachIdentity) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor x = zeros({0, 3});
  const Tensor s = sum(x, {0}, cpu);
  EXPECT_EQ(s.shape(), (Shape{3}));
  EXPECT_EQ(s.to_vector<double>(), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(prod(x, {0}, cpu).to_vector<double>(), (std::vector<double>{1, 1, 1}));
  for (double v : mean(x, {0}, cpu).to_vector<double>()) EXPECT_TRUE(std::isnan(v));
  EXPECT_EQ(values_as<std::int64_t>(all(x, AxisList{0}, cpu)),
            (std::vector<std::int64_t>{1, 1, 1}));
  EXPECT_EQ(values_as<std::int64_t>(any(x, AxisList{0}, cpu)),
            (std::vector<std::int64_t>{0, 0, 0}));
  for (double v : logsumexp(x, AxisList{0}, cpu).to_vector<double>()) EXPECT_EQ(v, -kInf);
  EXPECT_EQ(sum(zeros({0}, i32), cpu).item().to_int(), 0);
  EXPECT_EQ(prod(zeros({0}, c128), cpu).item().to_complex(), c128_t(1, 0));
  EXPECT_EQ(all(zeros({0}, bool_), cpu).item().to<bool>(), true);
  EXPECT_EQ(any(zeros({0}, bool_), cpu).item().to<bool>(), false);
  EXPECT_EQ(logsumexp(zeros({0}), cpu).item().real(), -kInf);
  // Reducing the non-empty axis: an empty result, valid for every op.
  EXPECT_EQ(max(x, {1}, cpu).shape(), (Shape{0}));
  EXPECT_EQ(sum(x, {1}, cpu, true).shape(), (Shape{0, 1}));
  // max/min have no identity.
  EXPECT_TF_ERROR(max(x, {0}, cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(min(x, cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(max(zeros({3, 0}, i64), {1}, cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(reduce(ReduceOp::Min, x, AxisList{0, 1}, cpu), ErrorKind::InvalidArgument);
}

// The single-pass float kernel of contiguous max/min: lengths around its
// 4-vector blocks, extremes at the first, a middle and the last position,
// infinities, and a NaN anywhere (the result is that NaN, sign and payload).
template <class T>
void check_contiguous_extremes(CpuBackend& cpu) {
  const T inf = std::numeric_limits<T>::infinity();
  std::int64_t checked = 0;
  for (std::int64_t n : {1, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 1000, 4099}) {
    for (std::int64_t at : {std::int64_t{0}, n / 2, n - 1}) {
      std::vector<T> v(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i)
        v[static_cast<std::size_t>(i)] = T(((i * 37) % 101) - 50);
      v[static_cast<std::size_t>(at)] = T(500);
      const Tensor hi = Tensor::from_col_major({n}, v);
      EXPECT_EQ(max(hi, cpu).item().real(), 500.0) << n << " " << at;
      v[static_cast<std::size_t>(at)] = T(-500);
      const Tensor lo = Tensor::from_col_major({n}, v);
      EXPECT_EQ(min(lo, cpu).item().real(), -500.0) << n << " " << at;
      v[static_cast<std::size_t>(at)] = -std::numeric_limits<T>::quiet_NaN();
      const Tensor nan = Tensor::from_col_major({n}, v);
      const T got_max = max(nan, cpu).template item<T>(),
              got_min = min(nan, cpu).template item<T>();
      EXPECT_TRUE(std::isnan(got_max) && std::signbit(got_max)) << n << " " << at;
      EXPECT_TRUE(std::isnan(got_min) && std::signbit(got_min)) << n << " " << at;
      ++checked;
    }
    const Tensor infs =
        Tensor::from_col_major({n}, std::vector<T>(static_cast<std::size_t>(n), -inf));
    EXPECT_EQ(max(infs, cpu).item().real(), -static_cast<double>(inf));
    const Tensor pinfs =
        Tensor::from_col_major({n}, std::vector<T>(static_cast<std::size_t>(n), inf));
    EXPECT_EQ(min(pinfs, cpu).item().real(), static_cast<double>(inf));
  }
  EXPECT_EQ(checked, 13 * 3);
}

TEST(Reduce, ContiguousFloatExtremesInOnePass) {
  CpuBackend cpu({.num_threads = 1});
  check_contiguous_extremes<float>(cpu);
  check_contiguous_extremes<double>(cpu);
}

TEST(Reduce, MaxMinPropagateNaN) {
  CpuBackend cpu({.num_threads = 1});
  // Long contiguous runs (the pairwise path) and short strided rows.
  for (std::int64_t at : {0, 7, 300, 999}) {
    std::vector<double> v(1000, 1.0);
    v[static_cast<std::size_t>(at)] = kNaN;
    const Tensor x = Tensor::from_col_major({1000}, v);
    EXPECT_TRUE(std::isnan(max(x, cpu).item().real())) << at;
    EXPECT_TRUE(std::isnan(min(x, cpu).item().real())) << at;
    const Tensor m = x.reshape({4, 250});
    const auto cols = max(m, {1}, cpu).to_vector<double>();
    for (std::int64_t r = 0; r < 4; ++r)
      EXPECT_EQ(std::isnan(cols[static_cast<std::size_t>(r)]), r == at % 4) << at;
    const Tensor lse = logsumexp(x, cpu);
    EXPECT_TRUE(std::isnan(lse.item().real()));
  }
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> f{1.f, std::nanf(""), -inf, 3.f};
  const Tensor xf = Tensor::from_col_major({2, 2}, f);
  const auto mf = min(xf, {0}, cpu).to_vector<float>();
  EXPECT_TRUE(std::isnan(mf[0]));
  EXPECT_EQ(mf[1], -kInf);
}

TEST(Reduce, LargeCompactAndColumnSums) {
  CpuBackend cpu({.num_threads = 1});
  Generator gen(7);
  const Tensor x = rand({150, 70}, f64, gen);  // > 2 row blocks each way
  // Both axes of a column-major matrix, transposed and sliced views, all axes.
  for (const Tensor& v : {x, x.transpose(), x.slice(0, 1, std::nullopt, 3),
                          x.slice(1, std::nullopt, std::nullopt, -1)}) {
    for (const auto& axes : std::vector<AxisList>{{0}, {1}, {0, 1}}) {
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::LogSumExp}) {
        expect_reduction<double>(op, v, axes, false, reduce(op, v, axes, cpu), 1e-12);
      }
    }
  }
  // More kept elements than one accumulator chunk holds.
  const Tensor longcols = rand({1100, 3}, f64, gen);
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::LogSumExp})
    expect_reduction<double>(op, longcols, {1}, true, reduce(op, longcols, AxisList{1}, cpu, true),
                             1e-12);
  // Broadcast (stride-0) inputs.
  const Tensor row = x.slice(0, 0, 1).broadcast_to(Shape{5, 70});
  for (const auto& axes : std::vector<AxisList>{{0}, {1}, {0, 1}})
    expect_reduction<double>(ReduceOp::Sum, row, axes, false, sum(row, axes, cpu), 1e-12);
}

TEST(Reduce, RowSumsOverManyRowsStayAccurate) {
  // Reducing the strided axis accumulates whole rows, four at a time, into
  // blocked levels (64 rows each, folded like a base-64 counter): an odd row
  // count crosses every level boundary with a partial group of rows.
  CpuBackend cpu({.num_threads = 1});
  Generator gen(11);
  const std::int64_t rows = 3 * 4096 + 64 * 5 + 7;
  const Tensor x = rand({5, rows}, f64, gen);
  const auto got = sum(x, {1}, cpu).to_vector<double>();
  const auto v = x.to_vector<double>();
  for (std::int64_t i = 0; i < 5; ++i) {
    long double want = 0;
    for (std::int64_t j = 0; j < rows; ++j) want += v[static_cast<std::size_t>(i + 5 * j)];
    EXPECT_NEAR(got[static_cast<std::size_t>(i)], static_cast<double>(want),
                1e-14 * static_cast<double>(want))
        << i;
  }
  // The same sums along the contiguous axis (the pairwise path) agree.
  const auto viaT = sum(x.transpose().contiguous(), {0}, cpu).to_vector<double>();
  for (std::size_t i = 0; i < 5; ++i) EXPECT_NEAR(got[i], viaT[i], 1e-14 * viaT[i]);
}

TEST(Reduce, Errors) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor x = ones({2, 3, 4});
  EXPECT_TF_ERROR(sum(Tensor(), cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(max(Tensor(), {0}, cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(sum(x, {3}, cpu), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(mean(x, {-4}, cpu), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(sum(x, {0, -3}, cpu), ErrorKind::DuplicateAxis);
  EXPECT_TF_ERROR(prod(x, {1, 1}, cpu), ErrorKind::DuplicateAxis);
  EXPECT_TF_ERROR(max(ones({2}, c128), cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(min(ones({2}, c64), {0}, cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(logsumexp(ones({2}, c128), cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(reduce(static_cast<ReduceOp>(99), x, AxisList{0}, cpu),
                  ErrorKind::InvalidArgument);

  // A backend that reads host memory but has no reduce kernel: Unsupported;
  // host tensors on one whose memory is elsewhere: ContextMismatch.
  struct OtherBackend final : Backend {
    explicit OtherBackend(Placement p) : at(p) {}
    Placement at;
    std::string_view kind() const override { return "cuda"; }
    Placement placement() const override { return at; }
    using Backend::empty;
    Tensor empty(std::span<const std::int64_t> shape, DType dtype) override {
      return tenferro::empty(shape, dtype);
    }
  };
  OtherBackend host_memory(Placement{}), device_memory(Placement{"cuda", 0});
  EXPECT_TF_ERROR(sum(x, host_memory), ErrorKind::Unsupported);
  EXPECT_TF_ERROR(max(x, {0}, host_memory), ErrorKind::Unsupported);
  EXPECT_TF_ERROR(sum(x, device_memory), ErrorKind::ContextMismatch);
  EXPECT_TF_ERROR(max(x, {0}, device_memory), ErrorKind::ContextMismatch);
}

// Short runs (under 32 values) take a one-lane path and longer ones the
// 32-lane pairwise fold; both start from the identity, so a sum of negative
// zeros is +0 at every length, a product of ones is exactly 1, and mixed
// values equal a plain left-to-right sum from +0 where that is exact.
TEST(Reduce, ShortAndLongRunsAgreeOnSignedZerosAndExactValues) {
  CpuBackend cpu({.num_threads = 1});
  for (std::int64_t n : {1, 2, 5, 31, 32, 33, 100, 1025}) {
    const Tensor z = full({n}, Scalar(-0.0), f64);
    const double s = sum(z, cpu).item<double>();
    EXPECT_EQ(s, 0.0) << n;
    EXPECT_FALSE(std::signbit(s)) << n;
    EXPECT_EQ(prod(full({n}, Scalar(1.0), f64), cpu).item<double>(), 1.0) << n;
    std::vector<double> v(static_cast<std::size_t>(n));
    double want = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      v[static_cast<std::size_t>(i)] = static_cast<double>((i * 7) % 11) - 5.0;  // small integers
      want += v[static_cast<std::size_t>(i)];
    }
    EXPECT_EQ(sum(Tensor::from_col_major({n}, v), cpu).item<double>(), want) << n;
  }
}

// The pairwise sum of a contiguous f32/f64 run, written out: halves rounded up
// to 32 values, leaves of at most 1024 folded by 32 lanes (the leaf is built
// per instruction set in reduce_kernels.cpp). Every build and thread count
// below the parallel threshold gives exactly these bits.
template <class T>
T pairwise_reference(const T* p, std::int64_t n) {
  if (n > 1024) {
    const std::int64_t half = (n / 2 + 31) / 32 * 32;
    return pairwise_reference(p, half) + pairwise_reference(p + half, n - half);
  }
  T lane[32] = {};
  if (n < 32) {
    for (std::int64_t i = 0; i < n; ++i) lane[0] += p[i];
    return lane[0] + T(0);
  }
  std::int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (std::int64_t j = 0; j < 32; ++j) lane[j] += p[i + j];
  for (; i < n; ++i) lane[0] += p[i];
  for (std::int64_t w = 16; w > 0; w /= 2)
    for (std::int64_t j = 0; j < w; ++j) lane[j] += lane[j + w];
  return lane[0];
}

TEST(Reduce, ContiguousFloatSumsAreThePairwiseFoldBitForBit) {
  CpuBackend cpu({.num_threads = 1});
  Generator gen(5);
  for (std::int64_t n : {31, 32, 33, 95, 1024, 1025, 4099, 100003}) {
    const Tensor x = sub(rand({n}, f64, gen), Tensor::scalar(0.5), cpu);  // mixed signs
    const auto v = x.to_vector<double>();
    EXPECT_EQ(sum(x, cpu).item<double>(), pairwise_reference(v.data(), n)) << n;
    const Tensor xf = sub(rand({n}, f32, gen), full({}, Scalar(0.5), f32), cpu);
    const auto vf = xf.to_vector<float>();
    EXPECT_EQ(sum(xf, cpu).item<float>(), pairwise_reference(vf.data(), n)) << n;
  }
}

// Sums along a contiguous axis with many outputs (a column-major matrix over
// axis 0) take a loop of pairwise sums per run of outputs: each output is
// still the pairwise fold of its column, bit for bit, at 1 and 2 threads,
// for columns of every leaf shape, kept axes of any stride, and the view of
// every other column.
TEST(Reduce, AxisZeroSumsAreEachColumnsPairwiseFold) {
  Generator gen(9);
  for (int threads : {1, 2}) {
    CpuBackend cpu({.num_threads = threads});
    for (std::int64_t n : {1, 31, 33, 1024, 1025, 2048, 4099}) {
      for (std::int64_t cols : {1, 7, 300}) {
        const Tensor x = sub(rand({n, cols, 2}, f64, gen), Tensor::scalar(0.5), cpu);
        const Tensor xf = sub(rand({n, cols, 2}, f32, gen), full({}, Scalar(0.5), f32), cpu);
        const Tensor every_other = x.slice(1, 0, std::nullopt, 2);  // kept stride 2n
        const auto v = x.to_vector<double>();
        const auto vf = xf.to_vector<float>();
        const auto s = sum(x, {0}, cpu).to_vector<double>();
        const auto sf = sum(xf, {0}, cpu).to_vector<float>();
        const auto se = sum(every_other, {0}, cpu).to_vector<double>();
        ASSERT_EQ(s.size(), static_cast<std::size_t>(cols * 2));
        ASSERT_EQ(se.size(), static_cast<std::size_t>((cols + 1) / 2 * 2));
        for (std::int64_t c = 0; c < cols * 2; ++c) {
          const auto at = static_cast<std::size_t>(c * n);
          EXPECT_EQ(s[static_cast<std::size_t>(c)], pairwise_reference(v.data() + at, n))
              << threads << "T n " << n << " column " << c;
          EXPECT_EQ(sf[static_cast<std::size_t>(c)], pairwise_reference(vf.data() + at, n))
              << threads << "T n " << n << " column " << c;
        }
        for (std::int64_t k = 0; k < (cols + 1) / 2 * 2; ++k) {
          // Output k of the view: column 2 * (k mod ceil(cols/2)) of plane k div ceil(cols/2).
          const std::int64_t half = (cols + 1) / 2, j = 2 * (k % half), plane = k / half;
          const auto at = static_cast<std::size_t>((plane * cols + j) * n);
          EXPECT_EQ(se[static_cast<std::size_t>(k)], pairwise_reference(v.data() + at, n))
              << threads << "T n " << n << " view output " << k;
        }
      }
    }
  }
}
