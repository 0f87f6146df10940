// index_select, take_along_axis and scatter_add against naive reference loops.

#include <limits>

#include "test_util.hpp"

using namespace tenferro;

namespace {

using Idx = std::vector<std::int64_t>;
const DType kDTypes[] = {f64, c128, i64};

CpuBackend& backend() {
  static CpuBackend b;
  return b;
}
// Tiny threshold so that the small test tensors take the parallel kernel paths.
CpuBackend& parallel_backend() {
  static CpuBackend b(CpuBackendOptions{.num_threads = 3, .parallel_threshold = 4});
  return b;
}
CpuBackend* const kBackends[] = {&backend(), &parallel_backend()};

// Distinct, exactly representable values (integral real parts) in `dtype`.
Tensor sample(const Shape& shape, DType dtype, int salt = 0) {
  const std::int64_t n = shape_numel(shape);
  std::vector<c128_t> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    v[static_cast<std::size_t>(i)] = {static_cast<double>(((i + salt) * 7) % 23) - 11.0,
                                      0.25 * static_cast<double>(i) + 1.0};
  }
  Tensor out = zeros(shape, dtype);
  Tensor::copy_into(Tensor::from_col_major(shape, v), out);
  return out;
}
std::vector<Tensor> layouts(const Tensor& t) {
  return {t, tftest::strided_copy(t)};
}

Tensor indices(const Shape& shape, const std::vector<std::int64_t>& v, DType dtype = i64) {
  Tensor out = zeros(shape, dtype);
  Tensor::copy_into(Tensor::from_col_major(shape, v), out);
  return out;
}

c128_t at(const Tensor& t, const Idx& idx) {
  return tftest::element<c128_t>(t, idx);
}
std::int64_t index_at(const Tensor& t, const Idx& idx, std::int64_t extent) {
  const auto v = tftest::element<std::int64_t>(t, idx);
  return v < 0 ? v + extent : v;
}

template <class Ref>
void expect_each(const Tensor& out, Ref ref) {
  for (std::int64_t i = 0; i < out.numel(); ++i) {
    const Idx idx = tftest::unravel(i, out.shape());
    ASSERT_EQ(at(out, idx), ref(idx)) << "linear index " << i;
  }
}

void expect_fresh(const Tensor& out, const Tensor& x, DType dtype) {
  EXPECT_TRUE(out.is_contiguous());
  EXPECT_EQ(out.offset(), 0);
  EXPECT_NE(out.storage(), x.storage());
  EXPECT_EQ(out.dtype(), dtype);
}

}  // namespace

TEST(GatherScatter, IndexSelectMatchesReference) {
  const Tensor idx64 = indices({5}, {3, -1, 0, 0, 2});
  const Tensor idx32 = tftest::strided_copy(indices({3}, {-3, 2, 1}, i32));
  for (CpuBackend* be : kBackends) {
    for (DType dt : kDTypes) {
      for (const Tensor& x : layouts(sample({4, 3}, dt))) {
        Tensor rows = index_select(x, 0, idx64, *be);
        EXPECT_EQ(rows.shape(), (Shape{5, 3}));
        expect_fresh(rows, x, dt);
        expect_each(rows, [&](const Idx& i) { return at(x, {index_at(idx64, {i[0]}, 4), i[1]}); });
        Tensor cols = index_select(x, -1, idx32, *be);
        EXPECT_EQ(cols.shape(), (Shape{4, 3}));
        expect_each(cols, [&](const Idx& i) { return at(x, {i[0], index_at(idx32, {i[1]}, 3)}); });
      }
    }
  }
  EXPECT_EQ(index_select(sample({4, 3}, f64), 0, indices({0}, {}), backend()).shape(),
            (Shape{0, 3}));
  EXPECT_EQ(index_select(zeros({4, 0}), 0, idx64, backend()).shape(), (Shape{5, 0}));
  // An empty axis admits only an empty index.
  EXPECT_EQ(index_select(zeros({0, 2}), 0, indices({0}, {}), backend()).shape(), (Shape{0, 2}));
}

TEST(GatherScatter, IndexSelectErrors) {
  Tensor x = sample({4, 3}, f64);
  EXPECT_TF_ERROR(index_select(x, 0, sample({2}, f64), backend()), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(index_select(x, 0, indices({1, 1}, {0}), backend()), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(index_select(x, 0, indices({2}, {0, 4}), backend()), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(index_select(x, 0, indices({1}, {-5}), backend()), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(index_select(x, 2, indices({1}, {0}), backend()), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(index_select(x, 0, Tensor(), backend()), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(index_select(zeros({0}), 0, indices({1}, {0}), backend()),
                  ErrorKind::AxisOutOfBounds);
  // The message names the index, the axis and the extent.
  try {
    index_select(x, 1, indices({1}, {7}), backend());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("index 7"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("axis 1"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("extent 3"), std::string::npos) << e.what();
  }
}

TEST(GatherScatter, TakeAlongAxisMatchesReference) {
  const Tensor along0 = indices({2, 4}, {2, -1, 0, 1, 1, 1, -3, 2});
  const Tensor along1 = tftest::strided_copy(indices({3, 2}, {3, 0, -4, 1, 2, 2}, i32));
  for (CpuBackend* be : kBackends) {
    for (DType dt : kDTypes) {
      for (const Tensor& x : layouts(sample({3, 4}, dt))) {
        Tensor a = take_along_axis(x, along0, 0, *be);
        EXPECT_EQ(a.shape(), (Shape{2, 4}));
        expect_fresh(a, x, dt);
        expect_each(a, [&](const Idx& i) { return at(x, {index_at(along0, i, 3), i[1]}); });
        Tensor b = take_along_axis(x, along1, -1, *be);
        EXPECT_EQ(b.shape(), (Shape{3, 2}));
        expect_each(b, [&](const Idx& i) { return at(x, {i[0], index_at(along1, i, 4)}); });
      }
    }
  }
  Tensor x3 = sample({2, 3, 2}, c128);
  Tensor idx3 = indices({2, 5, 2}, {0, 1, 2, 0, 1, 2, 2, 2, 1, 0, 0, 0, 1, 1, 2, 2, 0, 1, 2, 0});
  expect_each(take_along_axis(x3, idx3, 1, parallel_backend()), [&](const Idx& i) {
    return at(x3, {i[0], index_at(idx3, i, 3), i[2]});
  });
  EXPECT_EQ(take_along_axis(sample({3, 4}, f64), indices({0, 4}, {}), 0, backend()).shape(),
            (Shape{0, 4}));
}

TEST(GatherScatter, TakeAlongAxisErrors) {
  Tensor x = sample({3, 4}, f64);
  EXPECT_TF_ERROR(take_along_axis(x, indices({4}, {0, 0, 0, 0}), 0, backend()),
                  ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(take_along_axis(x, indices({2, 3}, {0, 0, 0, 0, 0, 0}), 0, backend()),
                  ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(take_along_axis(x, sample({1, 4}, f32), 0, backend()), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(take_along_axis(x, indices({1, 4}, {0, 3, 0, 0}), 0, backend()),
                  ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(take_along_axis(x, indices({1, 4}, {0, 0, 0, 0}), 2, backend()),
                  ErrorKind::AxisOutOfBounds);
}

TEST(GatherScatter, ScatterAddMatchesReference) {
  // Duplicate targets accumulate; index extent 2 <= 3 on the other axis (torch rule).
  const Tensor idx = indices({3, 2}, {1, -1, 1, 0, 3, 0});
  for (CpuBackend* be : kBackends) {
    for (DType dt : kDTypes) {
      for (const Tensor& x : layouts(sample({4, 3}, dt))) {
        for (const Tensor& src : layouts(sample({3, 2}, dt, 4))) {
          Tensor out = scatter_add(x, 0, idx, src, *be);
          expect_fresh(out, x, dt);
          EXPECT_NE(out.storage(), src.storage());
          expect_each(out, [&](const Idx& i) {
            c128_t want = at(x, i);
            for (std::int64_t r = 0; r < 3; ++r) {
              if (i[1] < 2 && index_at(idx, {r, i[1]}, 4) == i[0]) want += at(src, {r, i[1]});
            }
            return want;
          });
        }
      }
    }
  }
}

TEST(GatherScatter, ScatterAddAlongLastAxisAndPromotion) {
  Tensor x = sample({2, 5}, i64);
  Tensor src = sample({2, 3}, f64, 2);
  Tensor idx = tftest::strided_copy(indices({2, 3}, {4, 0, 4, 4, -1, 2}, i32));
  Tensor out = scatter_add(x, 1, idx, src, parallel_backend());
  EXPECT_EQ(out.dtype(), f64);
  expect_each(out, [&](const Idx& i) {
    c128_t want = at(x, i);
    for (std::int64_t c = 0; c < 3; ++c) {
      if (index_at(idx, {i[0], c}, 5) == i[1]) want += at(src, {i[0], c});
    }
    return want;
  });
  Tensor flags = cast(indices({3}, {0, 0, 5}), bool_, backend());
  Tensor on = cast(indices({2}, {1, 1}), bool_, backend());
  Tensor b = scatter_add(flags, 0, indices({2}, {0, 0}), on, backend());
  EXPECT_EQ(b.dtype(), bool_);
  expect_each(b, [&](const Idx& i) { return i[0] == 0 ? c128_t(1) : at(flags, i); });
  // Empty index: x comes back unchanged (and fresh).
  Tensor same = scatter_add(x, 0, indices({0, 5}, {}), sample({0, 5}, i64), backend());
  expect_fresh(same, x, i64);
  expect_each(same, [&](const Idx& i) { return at(x, i); });
}

TEST(GatherScatter, ScatterAddErrors) {
  Tensor x = sample({4, 3}, f64);
  Tensor idx = indices({2, 3}, {0, 1, 2, 3, 0, 1});
  Tensor src = sample({2, 3}, f64);
  EXPECT_TF_ERROR(scatter_add(x, 0, idx, sample({3, 2}, f64), backend()), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(
      scatter_add(x, 1, indices({5, 1}, {0, 0, 0, 0, 0}), sample({5, 1}, f64), backend()),
      ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(scatter_add(x, 0, indices({6}, {0, 0, 0, 0, 0, 0}), sample({6}, f64), backend()),
                  ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(scatter_add(x, 0, idx, sample({2}, f64), backend()), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(scatter_add(x, 0, sample({2, 3}, f64), src, backend()), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(scatter_add(x, 0, indices({2, 3}, {0, 1, 2, 3, 4, 1}), src, backend()),
                  ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(scatter_add(x, 2, idx, src, backend()), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(scatter_add(x, 0, idx, Tensor(), backend()), ErrorKind::InvalidArgument);
  // Nothing was written to the input.
  expect_each(x, [&](const Idx& i) { return at(sample({4, 3}, f64), i); });
}
