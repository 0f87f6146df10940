// The tropical / boolean GEMM kernel (src/einsum/semiring_gemm.hpp) against
// naive triple loops that read the operands through their own addressing:
// every semiring and dtype, transposes, padded leading dimensions, negative
// and zero batch strides, odd sizes, depths past a depth block and widths
// past a column block, k == 0, infinities, NaN, the i64 zero, ties (argbest =
// smallest k), every instruction set of this CPU, one and two threads with
// identical bits, the counting semiring and the typed errors.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "einsum/semiring_gemm.hpp"
#include "test_util.hpp"

using namespace tenferro;
using einsum_detail::counting_gemm;
using einsum_detail::semiring_gemm;

namespace {

// Bool data is stored as bytes: T = std::uint8_t stands for DType::Bool.
template <class T>
constexpr bool kIsBool = std::is_same_v<T, std::uint8_t>;

template <class T>
constexpr T zero_of(Semiring s) {
  if constexpr (kIsBool<T>) {
    return 0;
  } else if constexpr (std::is_floating_point_v<T>) {
    return s == Semiring::MaxPlus ? -std::numeric_limits<T>::infinity()
                                  : std::numeric_limits<T>::infinity();
  } else {
    return s == Semiring::MaxPlus ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
  }
}

// How an operand lies in memory: transposed or not, padding of the leading
// dimension, and per batch axis +1 (forward), -1 (reversed) or 0 (broadcast).
struct Layout {
  bool trans = false;
  std::int64_t pad = 0;
  std::vector<int> batch_dirs;
};

// An operand op(X) of `rows` x `cols` per batch matrix, stored as `layout`
// says in `storage`; at() reads it through the same addressing the kernel's
// descriptor states, independently of the kernel.
template <class T>
struct Operand {
  std::vector<T> storage;
  std::int64_t base = 0;
  GemmOperand op;
  Shape batch_shape;
  std::int64_t rows = 0, cols = 0;

  std::int64_t offset(std::int64_t b, std::int64_t i, std::int64_t p) const {
    std::int64_t off = base;
    for (std::size_t d = 0; d < batch_shape.size(); ++d) {
      off += (b % batch_shape[d]) * op.batch_strides[d];
      b /= batch_shape[d];
    }
    return off + (op.trans ? p + i * op.ld : i + p * op.ld);
  }
  T at(std::int64_t b, std::int64_t i, std::int64_t p) const {
    return storage[static_cast<std::size_t>(offset(b, i, p))];
  }
  void set_data() { op.data = storage.data() + base; }
};

template <class T, class Gen>
Operand<T> make_operand(std::int64_t rows, std::int64_t cols, const Shape& batch_shape,
                        const Layout& layout, Gen gen) {
  Operand<T> x;
  x.rows = rows;
  x.cols = cols;
  x.batch_shape = batch_shape;
  x.op.trans = layout.trans;
  x.op.ld = (layout.trans ? cols : rows) + layout.pad;
  const std::int64_t footprint = std::max<std::int64_t>(1, x.op.ld * (layout.trans ? rows : cols));
  std::int64_t span = footprint;
  for (std::size_t d = 0; d < batch_shape.size(); ++d) {
    const int dir = d < layout.batch_dirs.size() ? layout.batch_dirs[d] : 1;
    x.op.batch_strides.push_back(dir * span);
    if (dir < 0) x.base += span * (batch_shape[d] - 1);
    if (dir != 0) span *= batch_shape[d];
  }
  x.storage.resize(static_cast<std::size_t>(span));
  for (T& v : x.storage) v = gen();
  x.set_data();
  return x;
}

std::int64_t batch_count(const Shape& s) {
  std::int64_t c = 1;
  for (auto e : s) c *= e;
  return c;
}

// The naive semiring product with the kernel's documented semantics.
template <class T>
void reference(Semiring s, const Operand<T>& a, const Operand<T>& b, std::int64_t m, std::int64_t n,
               std::int64_t k, const Shape& batch_shape, std::vector<T>& c,
               std::vector<std::int64_t>& best) {
  const std::int64_t count = batch_count(batch_shape);
  c.assign(static_cast<std::size_t>(m * n * count), T{});
  best.assign(c.size(), 0);
  for (std::int64_t bi = 0; bi < count; ++bi) {
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t i = 0; i < m; ++i) {
        T acc = zero_of<T>(s);
        std::int64_t arg = 0;
        for (std::int64_t p = 0; p < k; ++p) {
          const T x = a.at(bi, i, p), y = b.at(bi, p, j);
          if constexpr (kIsBool<T>) {
            acc = (acc != 0 || (x != 0 && y != 0)) ? 1 : 0;
          } else {
            T t;
            if constexpr (std::is_integral_v<T>) {
              const T z = zero_of<T>(s);
              t = (x == z || y == z) ? z : x + y;
            } else {
              t = x + y;
            }
            if (s == Semiring::MaxPlus ? t > acc : t < acc) {
              acc = t;
              arg = p;
            }
          }
        }
        const auto q = static_cast<std::size_t>(i + j * m + bi * m * n);
        c[q] = acc;
        best[q] = arg;
      }
    }
  }
}

template <class T>
DType dtype_for() {
  if constexpr (kIsBool<T>) {
    return DType::Bool;
  } else {
    return dtype_of_v<T>;
  }
}

// Small integers (many ties) with the zero and, for floats, the other
// infinity and NaN sprinkled in.
template <class T>
auto generator(Semiring s, std::mt19937& rng, bool specials) {
  return [s, &rng, specials]() -> T {
    const int r = static_cast<int>(rng() % 64);
    if constexpr (kIsBool<T>) {
      return r % 3 != 0 ? 0 : (r % 2 ? 1 : 7);  // any non-zero byte is true
    } else {
      if (specials && r == 0) return zero_of<T>(s);
      if constexpr (std::is_floating_point_v<T>) {
        if (specials && r == 1) return -zero_of<T>(s);
        if (specials && r == 2) return std::numeric_limits<T>::quiet_NaN();
        return static_cast<T>(r % 9) - T(4) + (r % 2 ? T(0.5) : T(0));
      } else {
        return static_cast<T>(r % 9) - 4 + (r % 5) * (T{1} << 40);
      }
    }
  };
}

template <class T>
bool same_bits(const std::vector<T>& x, const std::vector<T>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0;
}

struct Case {
  std::int64_t m, n, k;
  Layout la, lb;
  Shape batch_shape;
};

std::string describe(const Case& c) {
  std::string s = "m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
                  " k=" + std::to_string(c.k) + " trans=" + std::to_string(c.la.trans) +
                  std::to_string(c.lb.trans) + " batch=";
  for (auto e : c.batch_shape) s += std::to_string(e) + ",";
  return s;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> v = {
      {1, 1, 1, {}, {}, {}},
      {7, 5, 3, {false, 2, {}}, {true, 1, {}}, {}},
      {33, 17, 9, {true, 0, {}}, {false, 3, {}}, {}},
      {1, 257, 13, {false, 0, {}}, {true, 0, {}}, {}},
      {257, 7, 300, {true, 5, {}}, {true, 0, {}}, {}},
      {40, 29, 600, {false, 1, {}}, {false, 0, {}}, {}},
      {17, 13, 33, {false, 1, {1, -1}}, {true, 0, {0, 1}}, {2, 3}},
      {9, 31, 5, {true, 0, {-1}}, {false, 2, {-1}}, {4}},
      {64, 12, 1, {false, 0, {0}}, {false, 0, {1}}, {3}},
      // Past a column block (1020-2048 columns, by dtype and mode).
      {3, 2100, 5, {false, 0, {}}, {true, 1, {}}, {}},
  };
  return v;
}

template <class T>
void check_semiring(Semiring s, CpuBackend* threads, bool with_argbest) {
  std::mt19937 rng(1234);
  for (const Case& c : cases()) {
    SCOPED_TRACE(describe(c) + " " + name(s) + " " + std::string(name(dtype_for<T>())));
    const auto gen = generator<T>(s, rng, true);
    const auto a = make_operand<T>(c.m, c.k, c.batch_shape, c.la, gen);
    const auto b = make_operand<T>(c.k, c.n, c.batch_shape, c.lb, gen);
    std::vector<T> want;
    std::vector<std::int64_t> want_best;
    reference(s, a, b, c.m, c.n, c.k, c.batch_shape, want, want_best);
    std::vector<T> got(want.size(), T(9));
    std::vector<std::int64_t> best(want.size(), -7);
    if constexpr (kIsBool<T>) {
      semiring_gemm(s, DType::Bool, c.m, c.n, c.k, a.op, b.op, got.data(), c.batch_shape, nullptr,
                    threads);
      EXPECT_EQ(got, want);  // written as 0 / 1
    } else {
      semiring_gemm(s, dtype_for<T>(), c.m, c.n, c.k, a.op, b.op, got.data(), c.batch_shape,
                    with_argbest ? best.data() : nullptr, threads);
      EXPECT_TRUE(same_bits(got, want));
      for (std::size_t q = 0; q < got.size(); ++q) {
        if (std::memcmp(&got[q], &want[q], sizeof(T)) != 0) {
          ADD_FAILURE() << "first difference at " << q << ": got " << got[q] << " want " << want[q];
          break;
        }
      }
      if (with_argbest) {
        EXPECT_EQ(best, want_best);
      }
    }
  }
}

// Every vector width this CPU runs (AVX-512, AVX2, the baseline): the same
// bits as the naive loops.
class SemiringGemmIsa : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { einsum_detail::set_semiring_isa_for_tests(GetParam()); }
  void TearDown() override { einsum_detail::set_semiring_isa_for_tests(0); }
};

}  // namespace

TEST_P(SemiringGemmIsa, MaxPlusAndMinPlusMatchNaiveLoops) {
  for (Semiring s : {Semiring::MaxPlus, Semiring::MinPlus}) {
    for (bool argbest : {false, true}) {
      check_semiring<double>(s, nullptr, argbest);
      check_semiring<float>(s, nullptr, argbest);
      check_semiring<std::int64_t>(s, nullptr, argbest);
    }
  }
}

TEST_P(SemiringGemmIsa, OrAndMatchesNaiveLoops) {
  check_semiring<std::uint8_t>(Semiring::OrAnd, nullptr, false);
}

TEST_P(SemiringGemmIsa, CountingMatchesNaiveLoops) {
  std::mt19937 rng(99);
  for (const Case& c : cases()) {
    SCOPED_TRACE(describe(c));
    auto vgen = [&rng]() -> double {
      const int r = static_cast<int>(rng() % 16);
      return r == 0 ? -std::numeric_limits<double>::infinity() : double(r % 3);
    };
    auto cgen = [&rng]() -> double { return double(1 + rng() % 3); };
    const auto av = make_operand<double>(c.m, c.k, c.batch_shape, c.la, vgen);
    const auto bv = make_operand<double>(c.k, c.n, c.batch_shape, c.lb, vgen);
    const auto ac = make_operand<double>(c.m, c.k, c.batch_shape, c.la, cgen);
    const auto bc = make_operand<double>(c.k, c.n, c.batch_shape, c.lb, cgen);
    const std::int64_t count = batch_count(c.batch_shape);
    const auto size = static_cast<std::size_t>(c.m * c.n * count);
    std::vector<double> want_v(size), want_c(size);
    for (std::int64_t bi = 0; bi < count; ++bi) {
      for (std::int64_t j = 0; j < c.n; ++j) {
        for (std::int64_t i = 0; i < c.m; ++i) {
          double v = -std::numeric_limits<double>::infinity(), n = 0;
          for (std::int64_t p = 0; p < c.k; ++p) {
            const double t = av.at(bi, i, p) + bv.at(bi, p, j);
            const double tc = ac.at(bi, i, p) * bc.at(bi, p, j);
            if (t > v) {
              v = t;
              n = tc;
            } else if (t == v) {
              n += tc;
            }
          }
          const auto q = static_cast<std::size_t>(i + j * c.m + bi * c.m * c.n);
          want_v[q] = v;
          want_c[q] = n;
        }
      }
    }
    // f64, f32 and i64 values (the same small integers; -inf as INT64_MIN).
    std::vector<double> got_v(size), got_c(size, -1);
    counting_gemm(DType::F64, c.m, c.n, c.k, av.op, ac.op, bv.op, bc.op, got_v.data(), got_c.data(),
                  c.batch_shape, nullptr);
    EXPECT_EQ(got_v, want_v);
    EXPECT_EQ(got_c, want_c);

    Operand<float> af{std::vector<float>(av.storage.begin(), av.storage.end()),
                      av.base,
                      av.op,
                      av.batch_shape,
                      av.rows,
                      av.cols};
    Operand<float> bf{std::vector<float>(bv.storage.begin(), bv.storage.end()),
                      bv.base,
                      bv.op,
                      bv.batch_shape,
                      bv.rows,
                      bv.cols};
    af.set_data();
    bf.set_data();
    std::vector<float> got_f(size);
    std::fill(got_c.begin(), got_c.end(), -1);
    counting_gemm(DType::F32, c.m, c.n, c.k, af.op, ac.op, bf.op, bc.op, got_f.data(), got_c.data(),
                  c.batch_shape, nullptr);
    EXPECT_EQ(std::vector<double>(got_f.begin(), got_f.end()), want_v);
    EXPECT_EQ(got_c, want_c);

    const auto to_i64 = [](double x) {
      return std::isinf(x) ? std::numeric_limits<std::int64_t>::min()
                           : static_cast<std::int64_t>(x);
    };
    Operand<std::int64_t> ai{{}, av.base, av.op, av.batch_shape, av.rows, av.cols};
    Operand<std::int64_t> bi{{}, bv.base, bv.op, bv.batch_shape, bv.rows, bv.cols};
    for (double x : av.storage) ai.storage.push_back(to_i64(x));
    for (double x : bv.storage) bi.storage.push_back(to_i64(x));
    ai.set_data();
    bi.set_data();
    std::vector<std::int64_t> got_i(size);
    std::fill(got_c.begin(), got_c.end(), -1);
    counting_gemm(DType::I64, c.m, c.n, c.k, ai.op, ac.op, bi.op, bc.op, got_i.data(), got_c.data(),
                  c.batch_shape, nullptr);
    for (std::size_t q = 0; q < size; ++q) ASSERT_EQ(got_i[q], to_i64(want_v[q])) << "at " << q;
    EXPECT_EQ(got_c, want_c);
  }
}

INSTANTIATE_TEST_SUITE_P(VectorBits, SemiringGemmIsa, ::testing::Values(512, 256, 128),
                         [](const auto& info) { return "max" + std::to_string(info.param); });

TEST(SemiringGemm, TwoThreadsGiveTheSameBitsAsOne) {
  CpuBackend one(CpuBackendOptions{.num_threads = 1});
  CpuBackend two(CpuBackendOptions{.num_threads = 2});
  std::mt19937 rng(7);
  // Large enough to split: one matrix over columns, and a batch.
  for (const Shape& batch : {Shape{}, Shape{3}}) {
    const std::int64_t m = 150, n = 131, k = 140;
    const auto gen = generator<double>(Semiring::MaxPlus, rng, true);
    const auto a = make_operand<double>(m, k, batch, {false, 0, {1}}, gen);
    const auto b = make_operand<double>(k, n, batch, {true, 0, {-1}}, gen);
    const auto size = static_cast<std::size_t>(m * n * batch_count(batch));
    std::vector<double> c1(size), c2(size), want;
    std::vector<std::int64_t> i1(size), i2(size), want_best;
    semiring_gemm(Semiring::MaxPlus, DType::F64, m, n, k, a.op, b.op, c1.data(), batch, i1.data(),
                  &one);
    semiring_gemm(Semiring::MaxPlus, DType::F64, m, n, k, a.op, b.op, c2.data(), batch, i2.data(),
                  &two);
    reference(Semiring::MaxPlus, a, b, m, n, k, batch, want, want_best);
    EXPECT_TRUE(same_bits(c1, c2));
    EXPECT_TRUE(same_bits(c1, want));
    EXPECT_EQ(i1, i2);
    EXPECT_EQ(i1, want_best);

    const auto cgen = [&rng]() -> double { return double(1 + rng() % 5); };
    const auto ac = make_operand<double>(m, k, batch, {false, 0, {1}}, cgen);
    const auto bc = make_operand<double>(k, n, batch, {true, 0, {-1}}, cgen);
    std::vector<double> n1(size), n2(size);
    counting_gemm(DType::F64, m, n, k, a.op, ac.op, b.op, bc.op, c1.data(), n1.data(), batch, &one);
    counting_gemm(DType::F64, m, n, k, a.op, ac.op, b.op, bc.op, c2.data(), n2.data(), batch, &two);
    EXPECT_TRUE(same_bits(c1, c2));
    EXPECT_TRUE(same_bits(n1, n2));
  }
  // Every semiring and dtype through the two-thread backend.
  check_semiring<float>(Semiring::MinPlus, &two, true);
  check_semiring<std::int64_t>(Semiring::MaxPlus, &two, true);
  check_semiring<std::uint8_t>(Semiring::OrAnd, &two, false);
}

TEST(SemiringGemm, EmptyDepthGivesTheZero) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> c(6, nan);
  std::vector<std::int64_t> best(6, -1);
  const GemmOperand a{c.data(), false, 2, {}}, b{c.data(), false, 1, {}};
  semiring_gemm(Semiring::MaxPlus, DType::F64, 2, 3, 0, a, b, c.data(), {}, best.data(), nullptr);
  EXPECT_EQ(c, std::vector<double>(6, -std::numeric_limits<double>::infinity()));
  EXPECT_EQ(best, std::vector<std::int64_t>(6, 0));
  std::vector<std::int64_t> ci(6, 5);
  semiring_gemm(Semiring::MinPlus, DType::I64, 2, 3, 0, a, b, ci.data(), {}, nullptr, nullptr);
  EXPECT_EQ(ci, std::vector<std::int64_t>(6, std::numeric_limits<std::int64_t>::max()));
  std::vector<std::uint8_t> cb(6, 1);
  semiring_gemm(Semiring::OrAnd, DType::Bool, 2, 3, 0, a, b, cb.data(), {}, nullptr, nullptr);
  EXPECT_EQ(cb, std::vector<std::uint8_t>(6, 0));
  std::vector<double> counts(6, 4);
  counting_gemm(DType::F64, 2, 3, 0, a, a, b, b, c.data(), counts.data(), {}, nullptr);
  EXPECT_EQ(counts, std::vector<double>(6, 0.0));
  EXPECT_EQ(c, std::vector<double>(6, -std::numeric_limits<double>::infinity()));
}

TEST(SemiringGemm, InfinitiesNanAndTies) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // One row of A (1 x 5) times B (5 x 4), column by column:
  //   col 0: terms -inf, NaN, 3, 3, 1 -> 3 at k = 2 (tie with k = 3; NaN skipped)
  //   col 1: every term -inf (one is -inf + inf, NaN) -> -inf, argbest 0
  //   col 2: +inf wins at k = 4
  //   col 3: NaN terms only -> -inf, argbest 0
  const std::vector<double> a = {-inf, nan, 1, 2, 0};
  const std::vector<double> b = {1,   0, 2,    1,    1,     // column 0
                                 inf, 0, -inf, -inf, -inf,  // column 1
                                 0,   0, 0,    0,    inf,   // column 2
                                 nan, 1, nan,  nan,  nan};  // column 3
  std::vector<double> c(4);
  std::vector<std::int64_t> best(4, -1);
  semiring_gemm(Semiring::MaxPlus, DType::F64, 1, 4, 5, {a.data(), false, 1, {}},
                {b.data(), false, 5, {}}, c.data(), {}, best.data(), nullptr);
  EXPECT_EQ(c, (std::vector<double>{3, -inf, inf, -inf}));
  EXPECT_EQ(best, (std::vector<std::int64_t>{2, 0, 4, 0}));
  // Min-plus: the zero is +inf; ties keep the first k.
  semiring_gemm(Semiring::MinPlus, DType::F64, 1, 4, 5, {a.data(), false, 1, {}},
                {b.data(), false, 5, {}}, c.data(), {}, best.data(), nullptr);
  EXPECT_EQ(c, (std::vector<double>{-inf, -inf, -inf, inf}));
  EXPECT_EQ(best, (std::vector<std::int64_t>{0, 2, 0, 0}));
}

TEST(SemiringGemm, I64ZeroNeverWraps) {
  const std::int64_t lo = std::numeric_limits<std::int64_t>::min();
  const std::int64_t hi = std::numeric_limits<std::int64_t>::max();
  // max-plus: lo + (-1) would wrap to hi; it is the zero and loses.
  const std::vector<std::int64_t> a = {lo, 5, lo};
  const std::vector<std::int64_t> b = {-1, -7, 3,    // column 0: max(lo, -2, lo) = -2
                                       -1, lo, -9};  // column 1: every term the zero
  std::vector<std::int64_t> c(2);
  std::vector<std::int64_t> best(2, -1);
  semiring_gemm(Semiring::MaxPlus, DType::I64, 1, 2, 3, {a.data(), false, 1, {}},
                {b.data(), false, 3, {}}, c.data(), {}, best.data(), nullptr);
  EXPECT_EQ(c, (std::vector<std::int64_t>{-2, lo}));
  EXPECT_EQ(best, (std::vector<std::int64_t>{1, 0}));
  // min-plus: hi + 1 would wrap to lo; it is the zero and loses.
  const std::vector<std::int64_t> a2 = {hi, 5};
  const std::vector<std::int64_t> b2 = {1, 7, 1, hi};
  semiring_gemm(Semiring::MinPlus, DType::I64, 1, 2, 2, {a2.data(), false, 1, {}},
                {b2.data(), false, 2, {}}, c.data(), {}, best.data(), nullptr);
  EXPECT_EQ(c, (std::vector<std::int64_t>{12, hi}));
  EXPECT_EQ(best, (std::vector<std::int64_t>{1, 0}));
}

TEST(SemiringGemm, CountingKnownCounts) {
  // All-equal values: every k maximises, count = sum of count products.
  const std::int64_t m = 19, n = 23, k = 300;
  const std::vector<double> av(m * k, 0.5), bv(k * n, 0.25), ones(m * k, 1.0), twos(k * n, 2.0);
  std::vector<double> cv(m * n), cc(m * n);
  counting_gemm(DType::F64, m, n, k, {av.data(), false, m, {}}, {ones.data(), false, m, {}},
                {bv.data(), false, k, {}}, {twos.data(), false, k, {}}, cv.data(), cc.data(), {},
                nullptr);
  EXPECT_EQ(cv, std::vector<double>(m * n, 0.75));
  EXPECT_EQ(cc, std::vector<double>(m * n, 2.0 * k));
  // One strict maximiser at k = 7 in every element: count = its product.
  std::vector<double> av2 = av;
  for (std::int64_t i = 0; i < m; ++i) av2[i + 7 * m] = 1.5;
  std::vector<float> af(av2.begin(), av2.end()), bf(bv.begin(), bv.end()), cf(m * n);
  counting_gemm(DType::F32, m, n, k, {af.data(), false, m, {}}, {ones.data(), false, m, {}},
                {bf.data(), false, k, {}}, {twos.data(), false, k, {}}, cf.data(), cc.data(), {},
                nullptr);
  EXPECT_EQ(cf, std::vector<float>(m * n, 1.75f));
  EXPECT_EQ(cc, std::vector<double>(m * n, 2.0));
}

TEST(SemiringGemm, TypedErrorsSayWhatToDo) {
  std::vector<double> x(4);
  const GemmOperand a{x.data(), false, 2, {}};
  const auto message = [](auto f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_TF_ERROR(
      semiring_gemm(Semiring::Standard, DType::F64, 2, 2, 2, a, a, x.data(), {}, nullptr, nullptr),
      ErrorKind::Unsupported);
  for (DType dt : {DType::Bool, DType::I32, DType::C64, DType::C128}) {
    EXPECT_TF_ERROR(
        semiring_gemm(Semiring::MaxPlus, dt, 2, 2, 2, a, a, x.data(), {}, nullptr, nullptr),
        ErrorKind::DTypeMismatch);
  }
  EXPECT_NE(message([&] {
              semiring_gemm(Semiring::MinPlus, DType::I32, 2, 2, 2, a, a, x.data(), {}, nullptr,
                            nullptr);
            }).find("tenferro::cast"),
            std::string::npos);
  EXPECT_TF_ERROR(
      semiring_gemm(Semiring::OrAnd, DType::F64, 2, 2, 2, a, a, x.data(), {}, nullptr, nullptr),
      ErrorKind::DTypeMismatch);
  std::int64_t best[4];
  EXPECT_TF_ERROR(
      semiring_gemm(Semiring::OrAnd, DType::Bool, 2, 2, 2, a, a, x.data(), {}, best, nullptr),
      ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(semiring_gemm(Semiring::MaxPlus, DType::F64, 2, 2, 2, a, a, x.data(), Shape{3},
                                nullptr, nullptr),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(
      semiring_gemm(Semiring::MaxPlus, DType::F64, -1, 2, 2, a, a, x.data(), {}, nullptr, nullptr),
      ErrorKind::InvalidArgument);
  double counts[4];
  EXPECT_TF_ERROR(counting_gemm(DType::Bool, 2, 2, 2, a, a, a, a, x.data(), counts, {}, nullptr),
                  ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(counting_gemm(DType::C128, 2, 2, 2, a, a, a, a, x.data(), counts, {}, nullptr),
                  ErrorKind::DTypeMismatch);
}

TEST(SemiringGemm, NamesOfSemirings) {
  EXPECT_STREQ(name(Semiring::Standard), "standard");
  EXPECT_STREQ(name(Semiring::MaxPlus), "max_plus");
  EXPECT_STREQ(name(Semiring::MinPlus), "min_plus");
  EXPECT_STREQ(name(Semiring::OrAnd), "or_and");
}
