// Direct cumsum/cumprod, argsort/sort/topk and the layout helpers (flip, kron,
// trace, roll) against naive loops: every dtype that applies, every axis,
// reverse/descending, strided and negative-stride inputs, zero-size axes,
// rank 0, ties (stability), NaN ordering and the error kinds.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "tenferro/ad/ops.hpp"
#include "tenferro/backend/scan.hpp"
#include "test_util.hpp"

using namespace tenferro;

namespace {

CpuBackend& cpu() {
  static CpuBackend backend(CpuBackendOptions{.num_threads = 2});
  return backend;
}

// Values with ties and (for floating dtypes) NaN: small integers, as dtype.
Tensor tie_values(const Shape& shape, DType dtype, Generator& gen, bool with_nan) {
  Tensor r = round(mul(randn(shape, DType::F64, gen), full({}, 2.0), cpu()), cpu());
  if (with_nan && r.numel() > 3) {
    Tensor c = r.clone();
    c.mutable_data<double>()[1] = std::nan("");
    c.mutable_data<double>()[r.numel() - 2] = std::nan("");
    r = c;
  }
  return cast(r, dtype, cpu());
}

Tensor random_values(const Shape& shape, DType dtype, Generator& gen) {
  if (is_inexact(dtype)) return randn(shape, dtype, gen);
  return tie_values(shape, dtype, gen, false);
}

std::vector<c128_t> as_c128(const Tensor& t) {
  return cast(t, DType::C128, cpu()).to_vector<c128_t>();
}

std::int64_t offset_of(const std::vector<std::int64_t>& idx, const Shape& shape) {
  std::int64_t off = 0, stride = 1;
  for (std::size_t d = 0; d < idx.size(); ++d) {
    off += idx[d] * stride;
    stride *= shape[d];
  }
  return off;
}

std::vector<c128_t> naive_cumulate(const Tensor& x, std::int64_t axis, bool product, bool reverse) {
  const std::vector<c128_t> v = as_c128(x);
  std::vector<c128_t> out(v.size());
  const auto a = static_cast<std::size_t>(axis);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    std::vector<std::int64_t> idx = tftest::unravel(i, x.shape());
    const std::int64_t k = idx[a];
    c128_t acc = product ? 1.0 : 0.0;
    for (std::int64_t j = 0; j < x.shape()[a]; ++j) {
      if (reverse ? j < k : j > k) continue;
      idx[a] = j;
      const c128_t e = v[static_cast<std::size_t>(offset_of(idx, x.shape()))];
      acc = product ? acc * e : acc + e;
    }
    out[static_cast<std::size_t>(i)] = acc;
  }
  return out;
}

void expect_close(const std::vector<c128_t>& got, const std::vector<c128_t>& want, double rtol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_LE(std::abs(got[i] - want[i]), rtol * (1 + std::abs(want[i])))
        << what << " element " << i << ": got " << got[i] << " want " << want[i];
  }
}

// Reference: the stable order of one lane, NaN largest.
std::vector<std::int64_t> stable_order(const std::vector<double>& lane, bool descending) {
  std::vector<std::int64_t> order(lane.size());
  std::iota(order.begin(), order.end(), 0);
  auto key_less = [](double a, double b) { return std::isnan(b) ? !std::isnan(a) : a < b; };
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t i, std::int64_t j) {
    const double a = lane[static_cast<std::size_t>(i)], b = lane[static_cast<std::size_t>(j)];
    return descending ? key_less(b, a) : key_less(a, b);
  });
  return order;
}

// Checks indices (and values) of a (partial) sort of x along axis.
void expect_sorted(const Tensor& x, std::int64_t axis, bool descending, const Tensor& values,
                   const Tensor& indices, std::int64_t k, const std::string& what) {
  const std::vector<double> xv = cast(x, DType::F64, cpu()).to_vector<double>();
  const std::vector<std::int64_t> iv = indices.to_vector<std::int64_t>();
  const std::vector<double> vv = cast(values, DType::F64, cpu()).to_vector<double>();
  ASSERT_EQ(indices.dtype(), DType::I64) << what;
  ASSERT_EQ(values.dtype(), x.dtype()) << what;
  const auto a = static_cast<std::size_t>(axis);
  Shape lanes_shape(x.shape());
  lanes_shape[a] = 1;
  Shape out_shape(x.shape());
  out_shape[a] = k;
  ASSERT_EQ(indices.shape(), out_shape) << what;
  for (std::int64_t l = 0; l < shape_numel(lanes_shape); ++l) {
    std::vector<std::int64_t> idx = tftest::unravel(l, lanes_shape);
    std::vector<double> lane;
    for (std::int64_t j = 0; j < x.shape()[a]; ++j) {
      idx[a] = j;
      lane.push_back(xv[static_cast<std::size_t>(offset_of(idx, x.shape()))]);
    }
    const std::vector<std::int64_t> want = stable_order(lane, descending);
    for (std::int64_t j = 0; j < k; ++j) {
      idx[a] = j;
      const auto o = static_cast<std::size_t>(offset_of(idx, out_shape));
      EXPECT_EQ(iv[o], want[static_cast<std::size_t>(j)]) << what << " lane " << l << " pos " << j;
      const double wv = lane[static_cast<std::size_t>(want[static_cast<std::size_t>(j)])];
      EXPECT_TRUE(vv[o] == wv || (std::isnan(vv[o]) && std::isnan(wv))) << what;
    }
  }
}

}  // namespace

TEST(Scan, ContiguousLanesInGroupsAndAlone) {
  // Axis 0 of [9, 7]: seven contiguous lanes, scanned four at a time and the
  // remaining three one by one; every lane in order.
  Generator gen(3);
  const Tensor x = random_values({9, 7}, DType::F64, gen);
  for (bool reverse : {false, true}) {
    for (bool product : {false, true}) {
      const Tensor y = product ? cumprod(x, 0, cpu(), reverse) : cumsum(x, 0, cpu(), reverse);
      expect_close(as_c128(y), naive_cumulate(x, 0, product, reverse), 1e-13,
                   product ? "cumprod" : "cumsum");
    }
  }
}

TEST(Scan, CumsumCumprodMatchNaiveLoops) {
  Generator gen(7);
  int checked = 0;
  for (DType dt : {DType::F64, DType::C128, DType::F32, DType::I32, DType::I64, DType::Bool}) {
    const Tensor x = random_values({3, 4, 2}, dt, gen);
    for (const Tensor& in : {x, tftest::strided_copy(x)}) {
      for (std::int64_t axis : {0, 1, 2, -1}) {
        for (bool reverse : {false, true}) {
          for (bool product : {false, true}) {
            const Tensor y =
                product ? cumprod(in, axis, cpu(), reverse) : cumsum(in, axis, cpu(), reverse);
            const std::string what = std::string(name(dt)) + " axis " + std::to_string(axis) +
                                     (product ? " cumprod" : " cumsum");
            EXPECT_EQ(y.dtype(), is_inexact(dt) ? dt : DType::I64) << what;
            EXPECT_EQ(y.shape(), x.shape()) << what;
            const std::int64_t a = axis < 0 ? axis + 3 : axis;
            expect_close(as_c128(y), naive_cumulate(x, a, product, reverse),
                         dt == DType::F32 ? 1e-5 : 1e-13, what);
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 6 * 2 * 4 * 2 * 2);
  EXPECT_EQ(cumulative_result_dtype(DType::I32), DType::I64);
  EXPECT_EQ(cumulative_result_dtype(DType::C64), DType::C64);
}

// A compact input of the result's dtype is scanned straight into the output
// (one pass); a strided one is copied first and scanned in place. Both add in
// the same order, so the same bits, over every axis, both directions, and the
// one-lane-per-task and 512-wide-block paths.
TEST(Scan, OnePassScanMatchesCopyThenScanBitForBit) {
  Generator gen(11);
  int checked = 0;
  for (DType dt : {DType::F64, DType::F32, DType::C128, DType::I64}) {
    for (Shape s : {Shape{37, 9, 3}, Shape{600, 5}, Shape{1, 4}, Shape{4, 1}}) {
      const Tensor x = random_values(s, dt, gen);
      const Tensor strided = tftest::strided_copy(x);
      ASSERT_FALSE(strided.is_contiguous());
      for (std::int64_t axis = 0; axis < x.rank(); ++axis) {
        for (bool reverse : {false, true}) {
          for (bool product : {false, true}) {
            const auto run = [&](const Tensor& in) {
              return product ? cumprod(in, axis, cpu(), reverse) : cumsum(in, axis, cpu(), reverse);
            };
            const Tensor a = run(x), b = run(strided);
            ASSERT_EQ(a.numel(), b.numel());
            EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(),
                                  static_cast<std::size_t>(a.numel()) * itemsize(a.dtype())),
                      0)
                << name(dt) << " axis " << axis << (reverse ? " reverse" : "")
                << (product ? " cumprod" : " cumsum");
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 4 * (3 + 2 + 2 + 2) * 4);
}

TEST(Scan, ZeroSizeRankZeroAndErrors) {
  const Tensor empty = zeros({0, 3}, DType::F64);
  EXPECT_EQ(cumsum(empty, 0, cpu()).shape(), (Shape{0, 3}));
  EXPECT_EQ(cumprod(empty, 1, cpu()).numel(), 0);
  const Tensor s = Tensor::scalar(2.5);
  EXPECT_EQ(cumsum(s, 0, cpu()).item<double>(), 2.5);
  EXPECT_EQ(cumprod(s, -1, cpu()).item<double>(), 2.5);
  EXPECT_EQ(cumsum(Tensor::scalar(true), 0, cpu()).dtype(), DType::I64);
  EXPECT_TF_ERROR(cumsum(s, 1, cpu()), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(cumsum(empty, 2, cpu()), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(cumprod(empty, -3, cpu()), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(cumsum(Tensor(), 0, cpu()), ErrorKind::InvalidArgument);
  // Integer overflow wraps like PyTorch's int64 arithmetic.
  const Tensor big =
      Tensor::from_col_major<std::int64_t>({2}, std::vector<std::int64_t>{INT64_MAX, 1});
  EXPECT_EQ(cumsum(big, 0, cpu()).to_vector<std::int64_t>()[1], INT64_MIN);
}

TEST(Sort, StableWithTiesAndNanEveryAxis) {
  Generator gen(11);
  int checked = 0;
  for (DType dt : {DType::F64, DType::F32, DType::I32, DType::I64, DType::Bool}) {
    const Tensor x = tie_values({5, 4, 3}, dt, gen, is_inexact(dt));
    for (const Tensor& in : {x, tftest::strided_copy(x)}) {
      for (std::int64_t axis : {0, 1, 2}) {
        for (bool descending : {false, true}) {
          const std::string what = std::string(name(dt)) + " axis " + std::to_string(axis) +
                                   (descending ? " desc" : " asc");
          const auto [v, i] = sort(in, axis, cpu(), descending);
          expect_sorted(x, axis, descending, v, i, x.shape()[static_cast<std::size_t>(axis)], what);
          EXPECT_EQ(argsort(in, axis, cpu(), descending).to_vector<std::int64_t>(),
                    i.to_vector<std::int64_t>());
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 5 * 2 * 3 * 2);
  // NaN is largest; -0.0 and 0.0 tie and keep their order.
  const double nan = std::nan("");
  const Tensor y = Tensor::from_col_major<double>({5}, std::vector<double>{nan, 1, -0.0, 0.0, -2});
  EXPECT_EQ(argsort(y, 0, cpu()).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{4, 2, 3, 1, 0}));
  EXPECT_EQ(argsort(y, 0, cpu(), true).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
}

TEST(Sort, LongLanesWithTiesNanAndSignedZeros) {
  // Lanes of 300 take the radix path (short lanes a comparison sort).
  Generator gen(13);
  int checked = 0;
  for (DType dt : {DType::F64, DType::F32, DType::I32, DType::I64, DType::Bool}) {
    Tensor x = tie_values({300, 3}, dt, gen, is_inexact(dt));
    if (is_inexact(dt)) {
      Tensor c = cast(x, DType::F64, cpu()).clone();
      double* d = c.mutable_data<double>();
      d[5] = -0.0;
      d[7] = 0.0;
      d[9] = -0.0;
      d[11] = std::numeric_limits<double>::infinity();
      d[13] = -std::numeric_limits<double>::infinity();
      d[310] = std::nan("");
      x = cast(c, dt, cpu());
    }
    for (bool descending : {false, true}) {
      const auto [v, i] = sort(tftest::strided_copy(x), 0, cpu(), descending);
      expect_sorted(x, 0, descending, v, i, 300, std::string(name(dt)) + " long");
      const auto [tv, ti] = topk(x, 40, 0, cpu(), descending);
      expect_sorted(x, 0, descending, tv, ti, 40, std::string(name(dt)) + " long topk");
      checked += 2;
    }
  }
  EXPECT_EQ(checked, 5 * 2 * 2);
}

namespace {

// A backend with CPU kernels for everything sort needs but sort_into: sort
// and topk take Backend's default (argsort, then a gather of the values).
class GatherSortBackend final : public Backend {
 public:
  std::string_view kind() const override { return "cpu"; }
  Placement placement() const override { return Placement{}; }
  Tensor empty(std::span<const std::int64_t> shape, DType dtype) override {
    return cpu().empty(shape, dtype);
  }
  void copy(const Tensor& src, const Tensor& dst) override { cpu().copy(src, dst); }
  void fill(const Tensor& dst, Scalar value) override { cpu().fill(dst, value); }
  void argsort(const Tensor& x, std::int64_t axis, bool descending, const Tensor& out) override {
    cpu().argsort(x, axis, descending, out);
  }
  void gather(const Tensor& x, const Tensor& index, std::int64_t axis, const Tensor& out) override {
    cpu().gather(x, index, axis, out);
  }
};

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw_data(), b.raw_data(),
                     static_cast<std::size_t>(a.numel()) * itemsize(a.dtype())) == 0;
}

// A lane of 2^17 doubles: 60% in [1, 1 + 2^-20) (keys that agree in their
// top bytes, digits the radix passes skip), the rest normal values, ties,
// signed zeros, infinities and NaNs with distinct payloads.
Tensor long_lane(std::int64_t n, Generator& gen) {
  std::vector<double> v = randn({n}, DType::F64, gen).to_vector<double>();
  for (std::int64_t i = 0; i < n; ++i) {
    double& x = v[static_cast<std::size_t>(i)];
    const auto r = static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ULL;
    if (r % 10 < 6) {
      x = 1.0 + std::ldexp(std::fabs(x) - std::floor(std::fabs(x)), -20);
    } else if (r % 10 == 6) {
      x = std::round(x * 4.0);  // ties, among them -0.0 and 0.0
    }
  }
  v[3] = -0.0;
  v[4] = 0.0;
  v[5] = std::numeric_limits<double>::infinity();
  v[6] = -std::numeric_limits<double>::infinity();
  v[7] = std::nan("1");
  v[8] = -std::nan("2");
  v[static_cast<std::size_t>(n) - 1] = std::nan("3");
  return Tensor::from_col_major<double>({n}, v);
}

}  // namespace

// The CPU sort reads the values back from its keys; they must be the input's
// bits at the indices (signed zeros, NaN payloads), as a gather gives them.
TEST(Sort, ValuesFromTheSortAreTheGatheredBits) {
  GatherSortBackend gather;
  Generator gen(17);
  int checked = 0;
  const Tensor lane = long_lane(std::int64_t{1} << 17, gen);
  for (DType dt : {DType::F64, DType::F32, DType::I32, DType::I64, DType::Bool}) {
    const Tensor big = dt == DType::I64 ? cast(mul(lane, full({}, 1e15), cpu()), dt, cpu())
                                        : cast(lane, dt, cpu());
    const Tensor small = tie_values({70, 3, 2}, dt, gen, is_inexact(dt));
    for (const Tensor& x : {big, small}) {
      for (bool descending : {false, true}) {
        const std::string what = std::string(name(dt)) + (descending ? " desc" : " asc") + " n " +
                                 std::to_string(x.shape()[0]);
        const auto [v, i] = sort(x, 0, cpu(), descending);
        const auto [gv, gi] = sort(x, 0, gather, descending);
        EXPECT_TRUE(same_bits(i, gi)) << what;
        EXPECT_TRUE(same_bits(v, gv)) << what;
        const auto [tv, ti] = topk(x, 40, 0, cpu(), descending);
        const auto [gtv, gti] = topk(x, 40, 0, gather, descending);
        EXPECT_TRUE(same_bits(ti, gti) && same_bits(tv, gtv)) << what << " topk";
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 5 * 2 * 2);
  // The long lane in order (stable, NaN largest) against std::stable_sort.
  for (bool descending : {false, true}) {
    const auto [v, i] = sort(lane, 0, cpu(), descending);
    expect_sorted(lane, 0, descending, v, i, lane.numel(), descending ? "long desc" : "long asc");
  }
  // Every -0.0 comes out as -0.0 (its key is 0.0's), every NaN with its payload.
  const auto negative_zeros = [](const std::vector<double>& xs) {
    return std::count_if(xs.begin(), xs.end(), [](double x) { return x == 0 && std::signbit(x); });
  };
  const std::vector<double> in = lane.to_vector<double>();
  const std::vector<double> out = sort(lane, 0, cpu()).first.to_vector<double>();
  EXPECT_GE(negative_zeros(in), 2);
  EXPECT_EQ(negative_zeros(out), negative_zeros(in));
  std::uint64_t last_nan = 0;
  std::memcpy(&last_nan, &out.back(), sizeof last_nan);
  const double want = std::nan("3");
  std::uint64_t want_bits = 0;
  std::memcpy(&want_bits, &want, sizeof want_bits);
  EXPECT_EQ(last_nan, want_bits);  // the last NaN in input order sorts last
}

TEST(Sort, TopkMatchesSortPrefix) {
  Generator gen(5);
  int checked = 0;
  const Tensor x = tie_values({6, 3, 2}, DType::F64, gen, true);
  for (const Tensor& in : {x, tftest::strided_copy(x)}) {
    for (std::int64_t axis : {0, 1, -1}) {
      const std::int64_t a = axis < 0 ? axis + 3 : axis;
      const std::int64_t n = x.shape()[static_cast<std::size_t>(a)];
      for (std::int64_t k : {std::int64_t{0}, std::int64_t{1}, n - 1, n}) {
        for (bool largest : {true, false}) {
          const auto [v, i] = topk(in, k, axis, cpu(), largest);
          expect_sorted(x, a, largest, v, i, k, "topk k " + std::to_string(k));
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 3 * 4 * 2);
}

TEST(Sort, ZeroSizeRankZeroAndErrors) {
  const Tensor empty = zeros({0, 3}, DType::F64);
  EXPECT_EQ(argsort(empty, 0, cpu()).shape(), (Shape{0, 3}));
  EXPECT_EQ(sort(empty, 1, cpu()).first.shape(), (Shape{0, 3}));
  EXPECT_EQ(topk(empty, 0, 0, cpu()).second.shape(), (Shape{0, 3}));
  const Tensor s = Tensor::scalar(4.0);
  EXPECT_EQ(sort(s, 0, cpu()).first.item<double>(), 4.0);
  EXPECT_EQ(sort(s, -1, cpu()).second.item<std::int64_t>(), 0);
  EXPECT_EQ(topk(s, 1, 0, cpu()).first.item<double>(), 4.0);
  const Tensor m = zeros({4, 3}, DType::F64);
  EXPECT_TF_ERROR(topk(m, 5, 0, cpu()), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(topk(m, -1, 0, cpu()), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(topk(s, 0, 0, cpu()), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(argsort(m, 2, cpu()), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(sort(s, 1, cpu()), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(sort(zeros({3}, DType::C128), 0, cpu()), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(argsort(Tensor(), 0, cpu()), ErrorKind::InvalidArgument);
}

TEST(LayoutHelpers, KronMatchesNaiveLoop) {
  Generator gen(3);
  int checked = 0;
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{2, 3}, {4, 2}}, {{3}, {2, 2}}, {{2, 2, 2}, {1, 3}}, {{0, 2}, {3, 1}}, {{}, {2}}};
  for (DType dt : {DType::F64, DType::C128, DType::I64}) {
    for (const auto& [sa, sb] : shapes) {
      const Tensor a = random_values(sa, dt, gen), b = random_values(sb, dt, gen);
      const Tensor k = kron(tftest::strided_copy(a), b, cpu());
      const std::size_t r = std::max(sa.size(), sb.size());
      Shape want_shape;
      auto ext = [](const Shape& s, std::size_t d) { return d < s.size() ? s[d] : 1; };
      for (std::size_t d = 0; d < r; ++d) want_shape.push_back(ext(sa, d) * ext(sb, d));
      ASSERT_EQ(k.shape(), want_shape);
      const std::vector<c128_t> av = as_c128(a), bv = as_c128(b), kv = as_c128(k);
      for (std::int64_t i = 0; i < k.numel(); ++i) {
        const auto idx = tftest::unravel(i, want_shape);
        std::vector<std::int64_t> ia, ib;
        for (std::size_t d = 0; d < r; ++d) {
          if (d < sa.size()) ia.push_back(idx[d] / ext(sb, d));
          if (d < sb.size()) ib.push_back(idx[d] % ext(sb, d));
        }
        const c128_t want = av[static_cast<std::size_t>(offset_of(ia, sa))] *
                            bv[static_cast<std::size_t>(offset_of(ib, sb))];
        EXPECT_LE(std::abs(kv[static_cast<std::size_t>(i)] - want), 1e-14 * (1 + std::abs(want)));
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 3 * 5);
}

TEST(LayoutHelpers, TraceRollFlip) {
  // Column-major [[1, 3], [2, 4]] plus a batch of two.
  const Tensor m =
      Tensor::from_col_major<double>({2, 2, 2}, std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(trace(m, cpu()).to_vector<double>(), (std::vector<double>{5, 13}));
  EXPECT_EQ(trace(m, cpu(), 1).to_vector<double>(), (std::vector<double>{3, 7}));
  EXPECT_EQ(trace(m, cpu(), 0, 0, 2).to_vector<double>(), (std::vector<double>{1 + 6, 3 + 8}));
  const Tensor mi = cast(m, DType::I32, cpu());
  EXPECT_EQ(trace(mi, cpu()).dtype(), DType::I64);
  EXPECT_TF_ERROR(trace(zeros({3}, DType::F64), cpu()), ErrorKind::RankMismatch);

  Generator gen(9);
  const Tensor x = randn({5, 3}, DType::F64, gen);
  const std::vector<double> xv = x.to_vector<double>();
  int checked = 0;
  for (std::int64_t shift : {-7, -1, 0, 2, 5, 11}) {
    for (std::int64_t axis : {0, 1, -1}) {
      const std::int64_t a = axis < 0 ? axis + 2 : axis;
      const Tensor y = roll(tftest::strided_copy(x), {&shift, 1}, {&axis, 1}, cpu());
      const std::vector<double> yv = y.to_vector<double>();
      for (std::int64_t i = 0; i < x.numel(); ++i) {
        auto idx = tftest::unravel(i, x.shape());
        const std::int64_t n = x.shape()[static_cast<std::size_t>(a)];
        idx[static_cast<std::size_t>(a)] = ((idx[static_cast<std::size_t>(a)] + shift) % n + n) % n;
        EXPECT_EQ(yv[static_cast<std::size_t>(offset_of(idx, x.shape()))],
                  xv[static_cast<std::size_t>(i)]);
      }
      ++checked;
    }
    // Flattened: the column-major order rolls as one vector.
    const std::vector<double> fv = roll(x, shift, cpu()).to_vector<double>();
    for (std::int64_t i = 0; i < 15; ++i)
      EXPECT_EQ(fv[static_cast<std::size_t>(((i + shift) % 15 + 15) % 15)],
                xv[static_cast<std::size_t>(i)]);
  }
  EXPECT_EQ(checked, 18);
  const std::int64_t two_shifts[2] = {1, 2}, same_axis[2] = {0, 0};
  const std::int64_t three[1] = {3};
  EXPECT_EQ(roll(x, two_shifts, same_axis, cpu()).to_vector<double>(),
            roll(x, three, {same_axis, 1}, cpu()).to_vector<double>());
  EXPECT_EQ(roll(zeros({0, 2}, DType::F64), 3, cpu()).shape(), (Shape{0, 2}));
  EXPECT_TF_ERROR(roll(x, two_shifts, {same_axis, 1}, cpu()), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(roll(x, {two_shifts, 1}, std::span<const std::int64_t>(two_shifts + 1, 1), cpu()),
                  ErrorKind::AxisOutOfBounds);
  const std::int64_t ax0[1] = {0};
  EXPECT_EQ(flip(x, ax0, cpu()).to_vector<double>(), reverse(x, ax0, cpu()).to_vector<double>());
  EXPECT_EQ(flip(x, ax0, cpu()).to_vector<double>()[0], xv[4]);
}
