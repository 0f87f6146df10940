// dot_general and matmul against naive loops.

#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "../../src/cpu/gemm.hpp"
#include "test_util.hpp"

using namespace tenferro;

namespace {

// Random values for inexact dtypes, a small integer pattern for integers.
Tensor make(std::initializer_list<std::int64_t> shape, DType dtype, std::uint64_t seed) {
  const std::span<const std::int64_t> s(shape.begin(), shape.size());
  if (is_inexact(dtype)) {
    Generator gen(seed);
    return randn(s, dtype, gen);
  }
  const std::int64_t n = shape_numel(s);
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    v[static_cast<std::size_t>(i)] = static_cast<std::int64_t>((i * 7 + seed * 3) % 11) - 5;
  }
  Tensor t = Tensor::from_col_major(Shape(s), v);
  Tensor out = zeros(s, dtype);
  Tensor::copy_into(t, out);
  return out;
}

Axes normalized(const Axes& axes, std::int64_t rank) {
  Axes out;
  for (auto a : axes) out.push_back(a < 0 ? a + rank : a);
  return out;
}

bool has(const Axes& axes, std::int64_t a) {
  return std::find(axes.begin(), axes.end(), a) != axes.end();
}

template <class T>
Tensor as(const Tensor& t) {
  Tensor out = zeros(t.shape(), dtype_of_v<T>);
  Tensor::copy_into(t, out);
  return out;
}

// Plain loops over the output and the contracted index space, in dtype T.
template <class T>
Tensor naive_dot(const Tensor& lhs, const Tensor& rhs, const DotDims& d) {
  const Axes lc = normalized(d.lhs_contracting, lhs.rank());
  const Axes rc = normalized(d.rhs_contracting, rhs.rank());
  const Axes lb = normalized(d.lhs_batch, lhs.rank());
  const Axes rb = normalized(d.rhs_batch, rhs.rank());
  Axes lf, rf;
  for (std::int64_t a = 0; a < lhs.rank(); ++a)
    if (!has(lc, a) && !has(lb, a)) lf.push_back(a);
  for (std::int64_t a = 0; a < rhs.rank(); ++a)
    if (!has(rc, a) && !has(rb, a)) rf.push_back(a);
  Shape out_shape, cshape;
  for (auto a : lf) out_shape.push_back(lhs.shape()[a]);
  for (auto a : rf) out_shape.push_back(rhs.shape()[a]);
  for (auto a : lb) out_shape.push_back(lhs.shape()[a]);
  for (auto a : lc) cshape.push_back(lhs.shape()[a]);
  const Tensor lt = as<T>(lhs), rt = as<T>(rhs);
  const auto lv = lt.to_vector<T>(), rv = rt.to_vector<T>();
  const Strides ls = col_major_strides(lhs.shape()), rs = col_major_strides(rhs.shape());
  std::vector<T> out(static_cast<std::size_t>(shape_numel(out_shape)));
  std::vector<std::int64_t> li(lhs.rank()), ri(rhs.rank());
  for (std::size_t o = 0; o < out.size(); ++o) {
    const auto idx = tftest::unravel(static_cast<std::int64_t>(o), out_shape);
    std::size_t p = 0;
    for (auto a : lf) li[a] = idx[p++];
    for (auto a : rf) ri[a] = idx[p++];
    for (std::size_t q = 0; q < lb.size(); ++q) li[lb[q]] = ri[rb[q]] = idx[p++];
    T acc{};
    for (std::int64_t c = 0; c < shape_numel(cshape); ++c) {
      const auto cidx = tftest::unravel(c, cshape);
      for (std::size_t q = 0; q < lc.size(); ++q) li[lc[q]] = ri[rc[q]] = cidx[q];
      std::int64_t lo = 0, ro = 0;
      for (std::size_t a = 0; a < li.size(); ++a) lo += li[a] * ls[a];
      for (std::size_t a = 0; a < ri.size(); ++a) ro += ri[a] * rs[a];
      acc += lv[lo] * rv[ro];
    }
    out[o] = acc;
  }
  return Tensor::from_col_major(out_shape, out);
}

Tensor reference(const Tensor& lhs, const Tensor& rhs, const DotDims& d, DType dt) {
  switch (dt) {
    case DType::F32:
      return naive_dot<float>(lhs, rhs, d);
    case DType::F64:
      return naive_dot<double>(lhs, rhs, d);
    case DType::C64:
      return naive_dot<c64_t>(lhs, rhs, d);
    case DType::C128:
      return naive_dot<c128_t>(lhs, rhs, d);
    case DType::I32:
      return naive_dot<std::int32_t>(lhs, rhs, d);
    default:
      return naive_dot<std::int64_t>(lhs, rhs, d);
  }
}

void expect_matches(const Tensor& got, const Tensor& lhs, const Tensor& rhs, const DotDims& d) {
  const DType dt = promote_types(lhs.dtype(), rhs.dtype());
  ASSERT_EQ(got.dtype(), dt);
  Tensor want = reference(lhs, rhs, d, dt);
  ASSERT_EQ(got.shape(), want.shape());
  const double tol = (dt == f32 || dt == c64) ? 1e-4 : is_inexact(dt) ? 1e-11 : 0.0;
  EXPECT_LE(max_abs_diff(got, want), tol) << got << "\nwant " << want;
}

}  // namespace

DotDims dims(Axes lc, Axes rc, Axes lb = {}, Axes rb = {}) {
  return DotDims{lc, rc, lb, rb};
}

constexpr DType kTestTypes[] = {DType::F64, DType::C128, DType::F32,
                                DType::I64, DType::C64,  DType::I32};

TEST(DotGeneral, MatrixProductKnownValues) {
  CpuBackend cpu({.num_threads = 1});
  auto a = Tensor::from_row_major({2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6});
  auto b = Tensor::from_row_major({3, 2}, std::vector<double>{7, 8, 9, 10, 11, 12});
  Tensor c = dot_general(a, b, dims({1}, {0}), cpu);
  TypedTensor<double> tc(c);
  EXPECT_EQ(c.shape(), (Shape{2, 2}));
  EXPECT_DOUBLE_EQ(tc(0, 0), 58.0);
  EXPECT_DOUBLE_EQ(tc(0, 1), 64.0);
  EXPECT_DOUBLE_EQ(tc(1, 0), 139.0);
  EXPECT_DOUBLE_EQ(tc(1, 1), 154.0);
}

TEST(DotGeneral, LayoutsMatchNaiveForEveryTestDType) {
  CpuBackend cpu({.num_threads = 2});
  for (DType dt : kTestTypes) {
    SCOPED_TRACE(std::string(name(dt)));
    const Tensor a = make({3, 4}, dt, 1), b = make({4, 5}, dt, 2);
    expect_matches(dot_general(a, b, dims({1}, {0}), cpu), a, b, dims({1}, {0}));
    // Transposed views of both operands fold into the GEMM flags.
    const Tensor at = make({4, 3}, dt, 3).transpose(), bt = make({5, 4}, dt, 4).transpose();
    expect_matches(dot_general(at, bt, dims({1}, {0}), cpu), at, bt, dims({1}, {0}));
    expect_matches(dot_general(at, b, dims({1}, {0}), cpu), at, b, dims({1}, {0}));
    // Contract the first axes: lhs^T rhs.
    const Tensor c = make({4, 6}, dt, 5);
    expect_matches(dot_general(b, c, dims({0}, {0}), cpu), b, c, dims({0}, {0}));
    // Negative-stride operands are copied once, with the same values.
    const Tensor as = tftest::strided_copy(a), bs = tftest::strided_copy(b);
    expect_matches(dot_general(as, bs, dims({1}, {0}), cpu), as, bs, dims({1}, {0}));
    // Permuted rank-3 operand, contracting over two axes (in a permuted order).
    const Tensor p = make({2, 3, 4}, dt, 6).permute({2, 0, 1});  // [4, 2, 3]
    const Tensor q = make({3, 5, 2}, dt, 7);
    expect_matches(dot_general(p, q, dims({1, 2}, {2, 0}), cpu), p, q, dims({1, 2}, {2, 0}));
    expect_matches(dot_general(q, p, dims({0}, {2}), cpu), q, p, dims({0}, {2}));
    // Outer product: no contracting axes (K = 1).
    const Tensor u = make({3}, dt, 8), v = make({2, 2}, dt, 9);
    expect_matches(dot_general(u, v, dims({}, {}), cpu), u, v, dims({}, {}));
    // Full contraction to a scalar.
    expect_matches(dot_general(a, a, dims({0, 1}, {0, 1}), cpu), a, a, dims({0, 1}, {0, 1}));
  }
}

// Rank-2 products over one axis pair take a short path: the same GEMM as the
// general one (here reached through a batch axis of extent 1), bit for bit,
// for either contracting axis of either operand, also given as negative axes,
// and for operands whose strides BLAS cannot read (copied on the general path).
TEST(DotGeneral, RankTwoProductsMatchTheGeneralPathBitForBit) {
  CpuBackend cpu({.num_threads = 1});
  for (DType dt : kTestTypes) {
    SCOPED_TRACE(std::string(name(dt)));
    int checked = 0;
    for (std::int64_t lc : {0, 1, -1, -2}) {
      for (std::int64_t rc : {0, 1, -2}) {
        const std::int64_t l = lc < 0 ? lc + 2 : lc, r = rc < 0 ? rc + 2 : rc;
        const Tensor a = make({l == 1 ? 3 : 4, l == 1 ? 4 : 3}, dt, 11);  // K = 4 on axis l
        const Tensor b = make({r == 0 ? 4 : 5, r == 0 ? 5 : 4}, dt, 12);  // K = 4 on axis r
        for (const bool strided : {false, true}) {
          const Tensor x = strided ? tftest::strided_copy(a) : a;
          const Tensor y = strided ? tftest::strided_copy(b) : b;
          const Tensor got = dot_general(x, y, dims({lc}, {rc}), cpu);
          const Tensor batched =
              dot_general(x.unsqueeze(2), y.unsqueeze(2), dims({l}, {r}, {2}, {2}), cpu);
          ASSERT_EQ(got.shape(), (Shape{3, 5}));
          EXPECT_EQ(max_abs_diff(got, batched.squeeze(2)), 0.0) << "lc " << lc << ", rc " << rc;
          expect_matches(got, x, y, dims({lc}, {rc}));
          ++checked;
        }
      }
    }
    EXPECT_EQ(checked, 24);
  }
}

TEST(DotGeneral, BatchAxesAnywhere) {
  CpuBackend cpu({.num_threads = 2});
  for (DType dt : kTestTypes) {
    SCOPED_TRACE(std::string(name(dt)));
    // lhs batch first, rhs batch in the middle; the result puts batch last.
    const Tensor l = make({2, 3, 4}, dt, 11), r = make({4, 2, 5}, dt, 12);
    const DotDims d1 = dims({2}, {0}, {0}, {1});
    Tensor g = dot_general(l, r, d1, cpu);
    EXPECT_EQ(g.shape(), (Shape{3, 5, 2}));
    expect_matches(g, l, r, d1);
    // Two batch axes paired in swapped order, negative axis numbers.
    const Tensor l2 = make({3, 2, 4, 3}, dt, 13), r2 = make({3, 4, 2, 5}, dt, 14);
    const DotDims d2 = dims({-2}, {1}, {0, 1}, {0, -2});
    expect_matches(dot_general(l2, r2, d2, cpu), l2, r2, d2);
    // Batch axes with a transposed, negative-stride view.
    const Tensor l3 = tftest::strided_copy(make({4, 3, 2}, dt, 15)).transpose(0, 1);  // [3, 4, 2]
    const Tensor r3 = make({5, 4, 2}, dt, 16);
    const DotDims d3 = dims({1}, {1}, {2}, {2});
    expect_matches(dot_general(l3, r3, d3, cpu), l3, r3, d3);
    // Broadcast (stride-0) free and batch axes.
    const Tensor l4 = make({3, 1, 4}, dt, 17).broadcast_to(std::vector<std::int64_t>{3, 6, 4});
    const Tensor r4 = make({3, 2, 1}, dt, 18).broadcast_to(std::vector<std::int64_t>{3, 2, 6});
    const DotDims d4 = dims({0}, {0}, {1}, {2});
    expect_matches(dot_general(l4, r4, d4, cpu), l4, r4, d4);
  }
}

TEST(DotGeneral, ManySmallBatchesAndLargeMatricesAcrossThreads) {
  CpuBackend one({.num_threads = 1});
  CpuBackend two({.num_threads = 2, .parallel_threshold = 64});
  const Tensor a = make({5, 7, 40}, f64, 21), b = make({7, 3, 40}, f64, 22);
  const DotDims d = dims({1}, {0}, {2}, {2});
  Tensor r1 = dot_general(a, b, d, one), r2 = dot_general(a, b, d, two);
  expect_matches(r2, a, b, d);
  EXPECT_EQ(max_abs_diff(r1, r2), 0.0);
  // Integer batches go parallel over (batch, column) jobs.
  const Tensor ia = make({5, 7, 40}, i64, 23), ib = make({7, 3, 40}, i64, 24);
  expect_matches(dot_general(ia, ib, d, two), ia, ib, d);
  // A larger transposed product runs on BLAS threads.
  const Tensor big_a = make({70, 65}, f64, 25).transpose(), big_b = make({70, 66}, f64, 26);
  expect_matches(dot_general(big_a, big_b, dims({1}, {0}), two), big_a, big_b, dims({1}, {0}));
}

// Real GEMMs with every side up to 16 take the register kernel instead of
// BLAS: every m (each its own compiled width), n and k across that bound,
// both transposes, batched and broadcast, f32 and f64, one and two threads.
TEST(DotGeneral, SmallRealProductsAcrossTheKernelBound) {
  CpuBackend one({.num_threads = 1}), two({.num_threads = 2});
  std::int64_t checked = 0;
  for (DType dt : {f64, f32}) {
    SCOPED_TRACE(std::string(name(dt)));
    for (std::int64_t m = 1; m <= 17; ++m) {
      const std::int64_t n = 1 + (m * 5) % 17, k = 1 + (m * 11) % 17;
      const Tensor a = make({m, k, 3}, dt, static_cast<std::uint64_t>(m)),
                   b = make({k, n, 3}, dt, static_cast<std::uint64_t>(m + 100));
      const DotDims batched = dims({1}, {0}, {2}, {2});
      expect_matches(dot_general(a, b, batched, one), a, b, batched);
      expect_matches(dot_general(a, b, batched, two), a, b, batched);
      // op(A) = A^T (strided rows) and op(B) = B^T.
      const Tensor at = make({k, m}, dt, 7), bt = make({n, k}, dt, 8);
      expect_matches(dot_general(at, bt, dims({0}, {1}), one), at, bt, dims({0}, {1}));
      // One operand broadcast over a batch of 40 (batch stride 0).
      const Tensor wide = make({k, n}, dt, 9).unsqueeze(2).broadcast_to(Shape{k, n, 40});
      const Tensor many = make({m, k, 40}, dt, 10);
      expect_matches(dot_general(many, wide, batched, two), many, wide, batched);
      checked += 4;
    }
  }
  EXPECT_EQ(checked, 2 * 17 * 4);
}

// Each form of the small register kernel this processor runs (32-byte
// vectors two columns at a time; 64-byte vectors eight at a time with
// AVX-512) against a long-double product, for every m and n up to 16: every
// register layout of a column and every tail of column groups.
template <class T>
std::int64_t check_small_gemm_form(cpu::SmallGemmForm form, DType dt) {
  std::int64_t checked = 0;
  std::uint64_t state = 12345;
  auto next = [&state] {  // deterministic values in [-1, 1)
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<T>(static_cast<double>(state >> 11) * 0x1p-52 - 1.0);
  };
  for (std::int64_t m = 1; m <= 16; ++m) {
    for (std::int64_t n = 1; n <= 16; ++n) {
      const std::int64_t k = 1 + (m * 7 + n * 3) % 16;
      std::vector<T> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
      for (T& x : a) x = next();
      for (T& x : b) x = next();
      std::vector<T> c(static_cast<std::size_t>(m * n), T(99));
      cpu::small_gemm_with(form, dt, m, n, k, a.data(), b.data(), c.data());
      for (std::int64_t j = 0; j < n; ++j) {
        for (std::int64_t i = 0; i < m; ++i) {
          long double ref = 0, mag = 0;
          for (std::int64_t p = 0; p < k; ++p) {
            const long double t = static_cast<long double>(a[static_cast<std::size_t>(i + p * m)]) *
                                  b[static_cast<std::size_t>(p + j * k)];
            ref += t;
            mag += std::fabs(t);
          }
          const long double bound =
              2.0L * static_cast<long double>(k) * mag * std::numeric_limits<T>::epsilon();
          const long double got = c[static_cast<std::size_t>(i + j * m)];
          if (std::fabs(got - ref) > bound) {
            ADD_FAILURE() << name(dt) << " m " << m << " n " << n << " k " << k << " at (" << i
                          << ", " << j << "): " << static_cast<double>(got) << " vs "
                          << static_cast<double>(ref);
            return checked;
          }
        }
      }
      ++checked;
    }
  }
  return checked;
}

TEST(SmallGemmKernel, EachFormAgainstLongDoubleForEveryShape) {
  using cpu::SmallGemmForm;
  ASSERT_TRUE(cpu::small_gemm_form_available(SmallGemmForm::Vec32));
  std::int64_t checked = 0, forms = 0;
  for (SmallGemmForm form : {SmallGemmForm::Vec32, SmallGemmForm::Vec64}) {
    if (!cpu::small_gemm_form_available(form)) continue;
    ++forms;
    checked += check_small_gemm_form<double>(form, f64);
    checked += check_small_gemm_form<float>(form, f32);
  }
  EXPECT_EQ(checked, forms * 2 * 16 * 16);
}

TEST(SmallGemmKernel, RejectsSidesAndDTypesItDoesNotTake) {
  std::vector<double> a(17 * 17, 1.0), b(17 * 17, 1.0), c(17 * 17);
  const auto form = cpu::SmallGemmForm::Vec32;
  EXPECT_TF_ERROR(cpu::small_gemm_with(form, f64, 17, 2, 2, a.data(), b.data(), c.data()),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(cpu::small_gemm_with(form, f64, 2, 0, 2, a.data(), b.data(), c.data()),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(cpu::small_gemm_with(form, c128, 2, 2, 2, a.data(), b.data(), c.data()),
                  ErrorKind::InvalidArgument);
  if (!cpu::small_gemm_form_available(cpu::SmallGemmForm::Vec64)) {
    EXPECT_TF_ERROR(
        cpu::small_gemm_with(cpu::SmallGemmForm::Vec64, f64, 2, 2, 2, a.data(), b.data(), c.data()),
        ErrorKind::Unsupported);
  }
}

TEST(DotGeneral, PromotesDTypes) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor a = make({3, 4}, f32, 31), b = make({4, 2}, f64, 32);
  Tensor c = dot_general(a, b, dims({1}, {0}), cpu);
  EXPECT_EQ(c.dtype(), f64);
  expect_matches(c, a, b, dims({1}, {0}));
  const Tensor i = make({3, 4}, i32, 33), z = make({4, 2}, c128, 34);
  Tensor w = dot_general(i, z, dims({1}, {0}), cpu);
  EXPECT_EQ(w.dtype(), c128);
  expect_matches(w, i, z, dims({1}, {0}));
  const Tensor j = make({3, 4}, i32, 35), k = make({4, 2}, i64, 36);
  expect_matches(dot_general(j, k, dims({1}, {0}), cpu), j, k, dims({1}, {0}));
}

TEST(DotGeneral, ComplexProductsAreNotConjugated) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor a = Tensor::from_col_major({1, 2}, std::vector<c128_t>{{0, 1}, {1, 1}});
  const Tensor b = Tensor::from_col_major({2, 1}, std::vector<c128_t>{{0, 1}, {2, 0}});
  Tensor c = dot_general(a, b, dims({1}, {0}), cpu);  // i*i + (1+i)*2 = 1 + 2i
  EXPECT_EQ(c.to_vector<c128_t>(), (std::vector<c128_t>{{1, 2}}));
  Tensor ct = dot_general(a.transpose(), b, dims({0}, {0}), cpu);
  EXPECT_EQ(ct.to_vector<c128_t>(), (std::vector<c128_t>{{1, 2}}));
}

TEST(DotGeneral, ZeroSizedExtents) {
  CpuBackend cpu({.num_threads = 1});
  for (DType dt : kTestTypes) {
    SCOPED_TRACE(std::string(name(dt)));
    // K == 0: every entry is an empty sum.
    Tensor z = dot_general(zeros({3, 0}, dt), zeros({0, 4}, dt), dims({1}, {0}), cpu);
    EXPECT_EQ(z.shape(), (Shape{3, 4}));
    EXPECT_EQ(max_abs_diff(z, zeros({3, 4}, dt)), 0.0);
    // M == 0 and an empty batch: empty results.
    Tensor m = dot_general(zeros({0, 5}, dt), make({5, 2}, dt, 1), dims({1}, {0}), cpu);
    EXPECT_EQ(m.shape(), (Shape{0, 2}));
    Tensor e =
        dot_general(zeros({2, 3, 0}, dt), zeros({3, 4, 0}, dt), dims({1}, {0}, {2}, {2}), cpu);
    EXPECT_EQ(e.shape(), (Shape{2, 4, 0}));
    EXPECT_EQ(e.numel(), 0);
  }
}

TEST(DotGeneral, ErrorKinds) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor a = make({3, 4}, f64, 1), b = make({4, 5}, f64, 2);
  EXPECT_TF_ERROR(dot_general(Tensor(), b, dims({1}, {0}), cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(dot_general(a, zeros({4, 5}, bool_), dims({1}, {0}), cpu),
                  ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(dot_general(a, b, dims({2}, {0}), cpu), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(dot_general(a, b, dims({-3}, {0}), cpu), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(dot_general(a, b, dims({1, 1}, {0, 1}), cpu), ErrorKind::DuplicateAxis);
  EXPECT_TF_ERROR(dot_general(a, b, dims({1, -1}, {0, 1}), cpu), ErrorKind::DuplicateAxis);
  EXPECT_TF_ERROR(dot_general(a, b, dims({1}, {0, 1}), cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(dot_general(a, b, dims({1}, {0}, {0}, {}), cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(dot_general(a, b, dims({1}, {0}, {1}, {1}), cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(dot_general(a, b, dims({0}, {0}), cpu), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(dot_general(a, b, dims({1}, {0}, {0}, {1}), cpu), ErrorKind::ShapeMismatch);
  try {
    dot_general(a, b, dims({0}, {0}), cpu);
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("lhs axis 0 has extent 3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("rhs axis 0 has extent 4"), std::string::npos) << msg;
  }
}

// ---- matmul -------------------------------------------------------------------

Tensor naive_matmul_f64(const Tensor& a, const Tensor& b, const Shape& batch) {
  // Broadcast both to [.., .., batch...] and contract with the reference.
  Shape sa{a.shape()[0], a.shape()[1]}, sb{b.shape()[0], b.shape()[1]};
  Tensor va = a, vb = b;
  while (va.rank() < 2 + static_cast<std::int64_t>(batch.size())) va = va.unsqueeze(2);
  while (vb.rank() < 2 + static_cast<std::int64_t>(batch.size())) vb = vb.unsqueeze(2);
  for (auto e : batch) {
    sa.push_back(e);
    sb.push_back(e);
  }
  DotDims d = dims({1}, {0});
  for (std::size_t i = 0; i < batch.size(); ++i) {
    d.lhs_batch.push_back(static_cast<std::int64_t>(2 + i));
    d.rhs_batch.push_back(static_cast<std::int64_t>(2 + i));
  }
  return reference(va.broadcast_to(sa).contiguous(), vb.broadcast_to(sb).contiguous(), d,
                   promote_types(a.dtype(), b.dtype()));
}

TEST(Matmul, TransposeFoldsAndMatchesNaive) {
  CpuBackend cpu({.num_threads = 2});
  for (DType dt : kTestTypes) {
    SCOPED_TRACE(std::string(name(dt)));
    const Tensor a = make({5, 3}, dt, 41), b = make({5, 4}, dt, 42);
    Tensor c = matmul(a.transpose(), b, cpu);
    EXPECT_EQ(c.shape(), (Shape{3, 4}));
    EXPECT_LE(max_abs_diff(c, naive_matmul_f64(a.transpose(), b, {})), is_inexact(dt) ? 1e-4 : 0.0);
    Tensor d = matmul(b.transpose(), a, cpu);
    EXPECT_LE(max_abs_diff(d, naive_matmul_f64(b.transpose(), a, {})), is_inexact(dt) ? 1e-4 : 0.0);
  }
}

TEST(Matmul, BatchBroadcastingRightAligned) {
  CpuBackend cpu({.num_threads = 2});
  for (DType dt : kTestTypes) {
    SCOPED_TRACE(std::string(name(dt)));
    const double tol = is_inexact(dt) ? 1e-4 : 0.0;
    // [2,3,4] x [3,5,2,4]: a's batch [4] aligns with the last batch axis.
    const Tensor a = make({2, 3, 4}, dt, 51), b = make({3, 5, 2, 4}, dt, 52);
    Tensor c = matmul(a, b, cpu);
    EXPECT_EQ(c.shape(), (Shape{2, 5, 2, 4}));
    EXPECT_LE(max_abs_diff(c, naive_matmul_f64(a, b, {2, 4})), tol);
    // Extent-1 batch axes broadcast; a plain matrix broadcasts over every batch.
    const Tensor a1 = make({2, 3, 1, 4}, dt, 53), b1 = make({3, 2, 3, 1}, dt, 54);
    Tensor c1 = matmul(a1, b1, cpu);
    EXPECT_EQ(c1.shape(), (Shape{2, 2, 3, 4}));
    EXPECT_LE(max_abs_diff(c1, naive_matmul_f64(a1, b1, {3, 4})), tol);
    const Tensor m = make({2, 3}, dt, 55);
    Tensor c2 = matmul(m, b, cpu);
    EXPECT_EQ(c2.shape(), (Shape{2, 5, 2, 4}));
    EXPECT_LE(max_abs_diff(c2, naive_matmul_f64(m, b, {2, 4})), tol);
  }
  EXPECT_TF_ERROR(matmul(zeros({2, 3, 4}), zeros({3, 2, 5}), cpu), ErrorKind::ShapeMismatch);
}

TEST(Matmul, VectorOperands) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor v = Tensor::from_col_major({3}, std::vector<double>{1, 2, 3});
  const Tensor m = Tensor::from_row_major({3, 2}, std::vector<double>{1, 2, 3, 4, 5, 6});
  Tensor vm = matmul(v, m, cpu);  // row vector times matrix
  EXPECT_EQ(vm.shape(), (Shape{2}));
  EXPECT_EQ(vm.to_vector<double>(), (std::vector<double>{22, 28}));
  Tensor mv = matmul(m.transpose(), v, cpu);  // matrix times column vector
  EXPECT_EQ(mv.shape(), (Shape{2}));
  EXPECT_EQ(mv.to_vector<double>(), (std::vector<double>{22, 28}));
  Tensor vv = matmul(v, v, cpu);
  EXPECT_EQ(vv.rank(), 0);
  EXPECT_EQ(vv.item().real(), 14.0);
  // A vector against a batch of matrices.
  const Tensor mb = make({3, 2, 4}, c128, 61);
  const Tensor vc = make({3}, c128, 62);
  Tensor vb = matmul(vc, mb, cpu);
  EXPECT_EQ(vb.shape(), (Shape{2, 4}));
  Tensor want = naive_matmul_f64(vc.unsqueeze(0), mb, {4}).squeeze(0);
  EXPECT_LE(max_abs_diff(vb, want), 1e-12);
  // K == 0 vectors give zero.
  Tensor e = matmul(zeros({0}), zeros({0}), cpu);
  EXPECT_EQ(e.rank(), 0);
  EXPECT_EQ(e.item().real(), 0.0);
}

TEST(Matmul, ErrorKinds) {
  CpuBackend cpu({.num_threads = 1});
  EXPECT_TF_ERROR(matmul(Tensor::scalar(2.0), zeros({2, 2}), cpu), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(matmul(zeros({2, 2}), Tensor::scalar(2.0), cpu), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(matmul(zeros({2, 3}), zeros({2, 3}), cpu), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(matmul(zeros({3}), zeros({2}), cpu), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(matmul(zeros({2, 2}, bool_), zeros({2, 2}), cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(matmul(Tensor(), zeros({2, 2}), cpu), ErrorKind::InvalidArgument);
}

// Every backend allocation goes through the pool, so its counters show how
// many buffers an op took: 1 means the output only (operands were folded).
std::uint64_t allocations(const CpuBackend& cpu) {
  const BufferPoolStats s = cpu.pool_stats();
  return s.hits + s.misses;
}

TEST(Matmul, TransposedAndBroadcastOperandsAreNotCopied) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor a = make({6, 4}, f64, 71), b = make({5, 6}, f64, 72);
  std::uint64_t before = allocations(cpu);
  Tensor c = matmul(a.transpose(), b.transpose(), cpu);
  EXPECT_EQ(allocations(cpu) - before, 1u);
  EXPECT_LE(max_abs_diff(c, naive_matmul_f64(a.transpose(), b.transpose(), {})), 1e-12);
  // Batch broadcasting uses stride-0 views, not expanded copies.
  const Tensor m = make({4, 6}, f64, 73), bb = make({6, 3, 5, 1}, f64, 74);
  const Tensor aa = make({4, 6, 2}, f64, 75);
  before = allocations(cpu);
  Tensor r = matmul(aa, bb, cpu);
  EXPECT_EQ(allocations(cpu) - before, 1u);
  EXPECT_LE(max_abs_diff(r, naive_matmul_f64(aa, bb, {5, 2})), 1e-12);
  before = allocations(cpu);
  Tensor r2 = matmul(m, bb, cpu);
  EXPECT_EQ(allocations(cpu) - before, 1u);
  EXPECT_LE(max_abs_diff(r2, naive_matmul_f64(m, bb, {5, 1})), 1e-12);
  // A negative-stride operand is copied once.
  before = allocations(cpu);
  Tensor s = matmul(tftest::strided_copy(a.transpose().contiguous()), b.transpose(), cpu);
  EXPECT_EQ(allocations(cpu) - before, 2u);
  EXPECT_LE(max_abs_diff(s, c), 1e-12);
  // Two contracting pairs listed against memory order: the plan reorders the
  // pairs so both operands still fold.
  const Tensor p = make({3, 5, 4}, f64, 76), q = make({3, 5, 2}, f64, 77);
  const DotDims d = dims({1, 0}, {1, 0});
  before = allocations(cpu);
  Tensor pq = dot_general(p, q, d, cpu);
  EXPECT_EQ(allocations(cpu) - before, 1u);
  expect_matches(pq, p, q, d);
}
