#include <sstream>

#include "test_util.hpp"

using namespace tenferro;

namespace {
Tensor iota(std::initializer_list<std::int64_t> shape, DType dt = f64) {
  Shape s(shape);
  return arange(0.0, static_cast<double>(shape_numel(s)), 1.0, dt).reshape(s);
}
}  // namespace

TEST(Tensor, FromColAndRowMajor) {
  auto a = Tensor::from_col_major({2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6});
  TypedTensor<double> ta(a);
  EXPECT_EQ(ta(0, 1), 3.0);
  EXPECT_EQ(ta(1, 2), 6.0);
  auto b = Tensor::from_row_major({2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6});
  TypedTensor<double> tb(b);
  EXPECT_EQ(tb(0, 1), 2.0);
  EXPECT_EQ(tb(1, 0), 4.0);
  EXPECT_TRUE(b.is_contiguous());
  EXPECT_EQ(b.to_vector<double>(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_TF_ERROR(Tensor::from_col_major({2, 2}, std::vector<double>{1, 2, 3}),
                  ErrorKind::ShapeMismatch);
}

TEST(Tensor, RankZeroAndZeroSize) {
  auto s = Tensor::scalar(2.5);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.item().real(), 2.5);
  auto one = zeros({1});
  EXPECT_EQ(one.rank(), 1);  // [1] is not a scalar
  auto e = zeros({3, 0, 2}, c128);
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.is_contiguous());
  EXPECT_EQ(e.permute({2, 0, 1}).shape(), (Shape{2, 3, 0}));
  EXPECT_EQ(e.reshape({0, 6}).shape(), (Shape{0, 6}));
  EXPECT_EQ(e.clone().numel(), 0);
  EXPECT_EQ(e.slice(0, 1, 2).shape(), (Shape{1, 0, 2}));
  EXPECT_TF_ERROR(zeros({2}).item(), ErrorKind::ShapeMismatch);
}

TEST(Tensor, SmallShapesStayInline) {
  Shape s{1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_TRUE(s.is_inline());
  s.push_back(9);
  EXPECT_FALSE(s.is_inline());
  EXPECT_EQ(s.size(), 9u);
  EXPECT_EQ(s[8], 9);
  Shape moved = std::move(s);
  EXPECT_EQ(moved[0], 1);
  EXPECT_EQ(moved.size(), 9u);
}

TEST(TensorViews, PermuteTransposeShareStorage) {
  auto a = iota({2, 3, 4});
  auto p = a.permute({2, 0, 1});
  EXPECT_EQ(p.storage(), a.storage());
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_FALSE(p.is_contiguous());
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < 3; ++j)
      for (std::int64_t k = 0; k < 4; ++k)
        EXPECT_EQ(tftest::element<double>(p, {k, i, j}), static_cast<double>(i + 2 * j + 6 * k));
  auto t = iota({2, 3}).transpose();
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(TypedTensor<double>(t.contiguous())(2, 1), 5.0);
  EXPECT_TF_ERROR(a.permute({0, 1}), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(a.permute({0, 0, 1}), ErrorKind::DuplicateAxis);
  EXPECT_TF_ERROR(a.permute({0, 1, 3}), ErrorKind::AxisOutOfBounds);
}

TEST(TensorViews, SliceWithStepsAndNegativeSteps) {
  auto v = arange(10, f64);
  EXPECT_EQ(v.slice(0, 2, 8, 3).to_vector<double>(), (std::vector<double>{2, 5}));
  EXPECT_EQ(v.slice(0, std::nullopt, std::nullopt, -1).to_vector<double>(),
            (std::vector<double>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(v.slice(0, 7, 2, -2).to_vector<double>(), (std::vector<double>{7, 5, 3}));
  EXPECT_EQ(v.slice(0, -3, std::nullopt).to_vector<double>(), (std::vector<double>{7, 8, 9}));
  EXPECT_EQ(v.slice(0, 20, 30).numel(), 0);
  EXPECT_EQ(v.slice(0, 3, 1).numel(), 0);
  EXPECT_EQ(v.slice(0, std::nullopt, -20, -1).numel(), 10);
  EXPECT_TF_ERROR(v.slice(0, 0, 1, 0), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(v.slice(1, 0, 1), ErrorKind::AxisOutOfBounds);
  auto m = iota({3, 4});
  auto s = m.slice(1, 1, 4, 2);  // columns 1 and 3
  EXPECT_EQ(s.shape(), (Shape{3, 2}));
  EXPECT_EQ(s.to_vector<double>(), (std::vector<double>{3, 4, 5, 9, 10, 11}));
  EXPECT_EQ(m.select(1, -1).to_vector<double>(), (std::vector<double>{9, 10, 11}));
  EXPECT_TF_ERROR(m.select(0, 3), ErrorKind::AxisOutOfBounds);
}

TEST(TensorViews, ReshapeViewOrExplicitError) {
  auto a = iota({2, 3, 4});
  auto r = a.reshape({6, -1});
  EXPECT_EQ(r.storage(), a.storage());
  EXPECT_EQ(r.shape(), (Shape{6, 4}));
  EXPECT_EQ(r.to_vector<double>(), a.to_vector<double>());
  // A column slice of a matrix keeps its columns contiguous: viewable.
  auto cols = iota({4, 6}).slice(1, 0, 3);
  EXPECT_EQ(cols.reshape({12}).to_vector<double>(), cols.contiguous().to_vector<double>());
  // A transpose is not viewable as flat: explicit error, or a named copy.
  auto t = iota({2, 3}).transpose();
  EXPECT_TF_ERROR(t.reshape({6}), ErrorKind::InvalidArgument);
  auto c = t.reshape_copy({6});
  EXPECT_EQ(c.to_vector<double>(), (std::vector<double>{0, 2, 4, 1, 3, 5}));
  EXPECT_TF_ERROR(a.reshape({5, 5}), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(a.reshape({-1, -1}), ErrorKind::InvalidArgument);
  // Extent-1 axes anywhere.
  auto u = a.reshape({1, 2, 1, 12, 1});
  EXPECT_EQ(u.to_vector<double>(), a.to_vector<double>());
  // Reversed axis: splitting it is still a view.
  auto rev = arange(6, f64).slice(0, std::nullopt, std::nullopt, -1);
  auto rv = rev.reshape({3, 2});
  EXPECT_EQ(rv.storage(), rev.storage());
  EXPECT_EQ(rv.to_vector<double>(), (std::vector<double>{5, 4, 3, 2, 1, 0}));
}

TEST(TensorViews, BroadcastDiagonalSqueeze) {
  auto v = Tensor::from_col_major({3}, std::vector<double>{1, 2, 3});
  auto b = v.broadcast_to(Shape{2, 3});
  EXPECT_EQ(b.strides()[0], 0);
  EXPECT_EQ(b.to_vector<double>(), (std::vector<double>{1, 1, 2, 2, 3, 3}));
  EXPECT_TF_ERROR(v.broadcast_to(Shape{4}), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(v.broadcast_to(Shape{}), ErrorKind::RankMismatch);

  auto m = iota({3, 3});
  EXPECT_EQ(m.diagonal().to_vector<double>(), (std::vector<double>{0, 4, 8}));
  EXPECT_EQ(m.diagonal(1).to_vector<double>(), (std::vector<double>{3, 7}));
  EXPECT_EQ(m.diagonal(-2).to_vector<double>(), (std::vector<double>{2}));
  EXPECT_EQ(m.diagonal(5).numel(), 0);
  auto batch = iota({2, 2, 3});  // batch last
  auto d = batch.diagonal();
  EXPECT_EQ(d.shape(), (Shape{2, 3}));
  EXPECT_EQ(tftest::element<double>(d, {1, 2}), 11.0);
  EXPECT_TF_ERROR(m.diagonal(0, 1, 1), ErrorKind::DuplicateAxis);

  auto s = zeros({1, 3, 1});
  EXPECT_EQ(s.squeeze().shape(), (Shape{3}));
  EXPECT_EQ(s.squeeze(-1).shape(), (Shape{1, 3}));
  EXPECT_TF_ERROR(s.squeeze(1), ErrorKind::InvalidArgument);
  EXPECT_EQ(v.unsqueeze(0).shape(), (Shape{1, 3}));
  EXPECT_EQ(v.unsqueeze(-1).shape(), (Shape{3, 1}));
  EXPECT_EQ(v.unsqueeze(1).to_vector<double>(), v.to_vector<double>());
  EXPECT_TF_ERROR(v.unsqueeze(3), ErrorKind::AxisOutOfBounds);
}

TEST(TensorViews, RealImagOfComplex) {
  auto re = Tensor::from_col_major({2}, std::vector<double>{1, 2});
  auto im = Tensor::from_col_major({2}, std::vector<double>{-3, 4});
  auto z = complex(re, im);
  EXPECT_EQ(z.dtype(), c128);
  EXPECT_EQ(z.real().dtype(), f64);
  EXPECT_EQ(z.real().storage(), z.storage());
  EXPECT_EQ(z.real().to_vector<double>(), (std::vector<double>{1, 2}));
  EXPECT_EQ(z.imag().to_vector<double>(), (std::vector<double>{-3, 4}));
  // Views of views: imag of a reversed complex tensor.
  auto zr = z.slice(0, std::nullopt, std::nullopt, -1);
  EXPECT_EQ(zr.imag().to_vector<double>(), (std::vector<double>{4, -3}));
  EXPECT_EQ(re.real().storage(), re.storage());
  EXPECT_TF_ERROR(re.imag(), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(complex(re, im.slice(0, 0, 1)), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(complex(re, zeros({2}, f32)), ErrorKind::DTypeMismatch);
  auto zf = complex(zeros({2}, f32), ones({2}, f32));
  EXPECT_EQ(zf.dtype(), c64);
}

TEST(TensorCopies, ContiguousCloneAndWrap) {
  auto a = iota({3, 4});
  EXPECT_EQ(a.contiguous().storage(), a.storage());  // already compact: no copy
  auto c = a.clone();
  EXPECT_NE(c.storage(), a.storage());
  EXPECT_EQ(c.to_vector<double>(), a.to_vector<double>());
  auto t = a.transpose().contiguous();
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(TypedTensor<double>(t)(3, 2), 11.0);

  std::vector<float> external{1, 2, 3, 4, 5, 6};
  const std::int64_t shape[2] = {2, 3};
  auto w = Tensor::wrap(external.data(), shape);
  EXPECT_EQ(w.data<float>(), external.data());  // no copy
  external[0] = 42;
  EXPECT_EQ(TypedTensor<float>(w)(0, 0), 42.0f);
  const std::int64_t row_strides[2] = {3, 1};
  auto wr = Tensor::wrap(external.data(), shape, row_strides);
  EXPECT_EQ(TypedTensor<float>(wr)(1, 0), 4.0f);
  EXPECT_TF_ERROR(Tensor::wrap(external.data(), f32, shape, {}, nullptr, {}, 8),
                  ErrorKind::InvalidArgument);
  EXPECT_EQ(w.span<float>().size(), 6u);
  EXPECT_TF_ERROR(wr.span<float>(), ErrorKind::InvalidArgument);
}

TEST(TensorAccess, DTypeAndOwnershipChecks) {
  auto a = zeros({2, 2});
  EXPECT_TF_ERROR(a.data<float>(), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(TypedTensor<float>(a), ErrorKind::DTypeMismatch);
  {
    TypedTensor<double> t(zeros({2, 2}));
    t.mut(1, 0) = 7;  // sole owner: allowed
    EXPECT_EQ(t(1, 0), 7.0);
    auto alias = t.tensor();
    EXPECT_TF_ERROR(t.mut(0, 0), ErrorKind::RuntimeState);  // shared: refused
    EXPECT_TF_ERROR(t(2, 0), ErrorKind::AxisOutOfBounds);
    EXPECT_TF_ERROR(t(0), ErrorKind::RankMismatch);
  }
  Tensor undefined;
  EXPECT_FALSE(undefined.defined());
  EXPECT_TF_ERROR(undefined.clone(), ErrorKind::InvalidArgument);
}

TEST(TensorFactories, Values) {
  EXPECT_EQ(ones({2}, i32).to_vector<std::int32_t>(), (std::vector<std::int32_t>{1, 1}));
  EXPECT_EQ(full({2}, 3.5).dtype(), f64);
  EXPECT_EQ(full({2}, c128_t(1, 2), c64).to_vector<c64_t>()[1], c64_t(1, 2));
  EXPECT_EQ(eye(2, 3).to_vector<double>(), (std::vector<double>{1, 0, 0, 1, 0, 0}));
  EXPECT_EQ(arange(0.0, 1.0, 0.25).to_vector<double>(), (std::vector<double>{0, 0.25, 0.5, 0.75}));
  EXPECT_EQ(arange(5.0, 0.0, -2.0).to_vector<double>(), (std::vector<double>{5, 3, 1}));
  EXPECT_EQ(arange(3).dtype(), i64);
  EXPECT_TF_ERROR(arange(0.0, 1.0, 0.0), ErrorKind::InvalidArgument);
  EXPECT_EQ(linspace(0, 1, 5).to_vector<double>(), (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(linspace(0, 1, 1).to_vector<double>(), (std::vector<double>{0}));
  EXPECT_EQ(linspace(0, 1, 0).numel(), 0);
}

TEST(TensorFactories, SeededRandomIsReproducible) {
  Generator g1(7), g2(7), g3(8);
  auto a = randn({100}, f64, g1);
  auto b = randn({100}, f64, g2);
  auto c = randn({100}, f64, g3);
  EXPECT_EQ(a.to_vector<double>(), b.to_vector<double>());
  EXPECT_NE(a.to_vector<double>(), c.to_vector<double>());
  Generator g(1);
  auto u = rand({10000}, f64, g).to_vector<double>();
  double mean = 0;
  for (double x : u) {
    EXPECT_GE(x, 0.0);
    EXPECT_LT(x, 1.0);
    mean += x / 10000;
  }
  EXPECT_NEAR(mean, 0.5, 0.02);
  auto z = randn({10000}, c128, g).to_vector<c128_t>();
  double power = 0;
  for (auto v : z) power += std::norm(v) / 10000;
  EXPECT_NEAR(power, 1.0, 0.05);
  EXPECT_TF_ERROR(randn({2}, i64, g), ErrorKind::DTypeMismatch);
}

TEST(TensorPrint, NumpyLike) {
  auto m = Tensor::from_row_major({2, 2}, std::vector<double>{1, 2, 3.5, 4});
  EXPECT_EQ(to_string(m), "tensor([[1., 2.],\n        [3.5, 4.]], dtype=f64, shape=[2, 2])");
  EXPECT_EQ(to_string(Tensor::scalar(std::int64_t{3})), "tensor(3, dtype=i64, shape=[])");
  auto z = full({1}, c128_t(1, -2));
  EXPECT_EQ(to_string(z), "tensor([1.-2.j], dtype=c128, shape=[1])");
  auto big = zeros({2000});
  EXPECT_NE(to_string(big).find("..."), std::string::npos);
  std::ostringstream os;
  os << full({2}, true);
  EXPECT_EQ(os.str(), "tensor([true, true], dtype=bool, shape=[2])");
}

TEST(TensorCompare, Allclose) {
  auto a = Tensor::from_col_major({2}, std::vector<double>{1.0, 2.0});
  auto b = Tensor::from_col_major({2}, std::vector<double>{1.0, 2.0 + 1e-9});
  EXPECT_TRUE(allclose(a, b));
  EXPECT_FALSE(allclose(a, b, 0.0, 0.0));
  EXPECT_TRUE(allclose(a, full({}, 1.5), 0.0, 0.6));  // broadcasting
  auto n = full({1}, std::nan(""));
  EXPECT_FALSE(allclose(n, n));
  EXPECT_TRUE(allclose(n, n, 1e-5, 1e-8, true));
  EXPECT_TF_ERROR(allclose(a, zeros({3})), ErrorKind::ShapeMismatch);
  EXPECT_DOUBLE_EQ(max_abs_diff(a, zeros({2})), 2.0);
}

TEST(DTypes, PromotionLattice) {
  EXPECT_EQ(promote_types(bool_, i32), i32);
  EXPECT_EQ(promote_types(i32, i64), i64);
  EXPECT_EQ(promote_types(i64, f32), f32);
  EXPECT_EQ(promote_types(f32, f64), f64);
  EXPECT_EQ(promote_types(f32, c64), c64);
  EXPECT_EQ(promote_types(f64, c64), c128);
  EXPECT_EQ(promote_types(f32, c128), c128);
  EXPECT_EQ(promote_types(bool_, bool_), bool_);
  for (DType a : kAllDTypes)
    for (DType b : kAllDTypes) EXPECT_EQ(promote_types(a, b), promote_types(b, a));
  EXPECT_TRUE(is_lossless_conversion(i32, f64));
  EXPECT_FALSE(is_lossless_conversion(f64, f32));
  EXPECT_FALSE(is_lossless_conversion(c128, f64));
  EXPECT_EQ(scalar_operand_dtype(f32, f64), f32);   // a Python float keeps f32
  EXPECT_EQ(scalar_operand_dtype(f32, c128), c64);  // a complex scalar: complex counterpart
  EXPECT_EQ(scalar_operand_dtype(i32, i64), i32);
  EXPECT_EQ(scalar_operand_dtype(i64, f64), f64);  // then promotion gives f64
  EXPECT_EQ(name(c128), "c128");
  EXPECT_EQ(itemsize(c64), 8u);
}

TEST(Errors, KindPhaseOpAndCauseChain) {
  Error inner(ErrorKind::Singular, "lu", "matrix is singular", ErrorPhase::Execute);
  Error outer(ErrorKind::InvalidArgument, "solve", "could not solve", ErrorPhase::Execute,
              inner.share());
  EXPECT_EQ(outer.category(), ErrorCategory::Validation);
  EXPECT_EQ(outer.cause()->kind(), ErrorKind::Singular);
  EXPECT_EQ(outer.cause()->category(), ErrorCategory::Numerical);
  EXPECT_EQ(outer.op(), "solve");
  EXPECT_EQ(outer.phase(), ErrorPhase::Execute);
  EXPECT_NE(std::string(outer.what()).find("caused by: [lu] matrix is singular"),
            std::string::npos);
}

TEST(TensorAccess, BoolToVector) {
  auto b = full({3}, true);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, true, true}));
}
