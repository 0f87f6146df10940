// Structural direct ops against naive reference loops, for several dtypes and
// layouts (compact and negative-stride views), zero-size and rank 0.

#include <cmath>
#include <limits>
#include <optional>

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
// The compact tensor and a view with negative strides holding the same values.
std::vector<Tensor> layouts(const Tensor& t) {
  return {t, tftest::strided_copy(t)};
}

c128_t at(const Tensor& t, const Idx& idx) {
  return tftest::element<c128_t>(t, idx);
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

// An f64 tensor whose storage claims to live on a GPU (numel <= 64).
Tensor on_device(const Shape& shape) {
  static double data[64];
  return Tensor::wrap(data, f64, shape, {}, nullptr, Placement{"cuda", 0});
}

}  // namespace

TEST(Structural, PermuteMatchesReference) {
  for (DType dt : kDTypes) {
    for (const Tensor& x : layouts(sample({2, 3, 4}, dt))) {
      const std::int64_t perm[] = {2, 0, 1};
      Tensor out = permute(x, perm, backend());
      EXPECT_EQ(out.shape(), (Shape{4, 2, 3}));
      expect_fresh(out, x, dt);
      expect_each(out, [&](const Idx& i) { return at(x, {i[1], i[2], i[0]}); });
    }
  }
  Tensor s = sample({}, c128);
  Tensor out = permute(s, {}, backend());
  EXPECT_EQ(out.rank(), 0);
  EXPECT_EQ(at(out, {}), at(s, {}));
  const std::int64_t swap[] = {1, 0};
  EXPECT_EQ(permute(zeros({0, 3}), swap, backend()).shape(), (Shape{3, 0}));
}

TEST(Structural, PermuteErrors) {
  Tensor x = sample({2, 3}, f64);
  const std::int64_t short_perm[] = {0}, dup[] = {1, 1}, far[] = {0, 2};
  EXPECT_TF_ERROR(permute(x, short_perm, backend()), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(permute(x, dup, backend()), ErrorKind::DuplicateAxis);
  EXPECT_TF_ERROR(permute(x, far, backend()), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(permute(Tensor(), short_perm, backend()), ErrorKind::InvalidArgument);
  const std::int64_t id[] = {0, 1};
  EXPECT_TF_ERROR(permute(on_device(x.shape()), id, backend()), ErrorKind::ContextMismatch);
}

TEST(Structural, ReshapeAndCopyKeepColumnMajorOrder) {
  for (DType dt : kDTypes) {
    for (const Tensor& x : layouts(sample({2, 3, 4}, dt))) {
      const std::int64_t shape[] = {4, -1};
      Tensor out = reshape(x, shape, backend());
      EXPECT_EQ(out.shape(), (Shape{4, 6}));
      expect_fresh(out, x, dt);
      expect_each(out,
                  [&](const Idx& i) { return at(x, tftest::unravel(i[0] + 4 * i[1], x.shape())); });
      Tensor c = copy(x, backend());
      expect_fresh(c, x, dt);
      expect_each(c, [&](const Idx& i) { return at(x, i); });
    }
  }
  const std::int64_t one[] = {1}, none[] = {0, 5};
  Tensor s = reshape(sample({}, f64), one, backend());
  EXPECT_EQ(s.shape(), (Shape{1}));
  EXPECT_EQ(reshape(s, {}, backend()).rank(), 0);
  EXPECT_EQ(reshape(zeros({0, 3}), none, backend()).shape(), (Shape{0, 5}));
  // A compact input still gives a fresh tensor.
  Tensor x = sample({6}, f64);
  const std::int64_t two_three[] = {2, 3};
  expect_fresh(reshape(x, two_three, backend()), x, f64);
}

TEST(Structural, ReshapeErrors) {
  Tensor x = sample({2, 3}, f64);
  const std::int64_t two_infer[] = {-1, -1}, wrong[] = {4, 2}, negative[] = {-2, -3},
                     cannot_infer[] = {4, -1};
  EXPECT_TF_ERROR(reshape(x, two_infer, backend()), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(reshape(x, wrong, backend()), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(reshape(x, negative, backend()), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(reshape(x, cannot_infer, backend()), ErrorKind::ShapeMismatch);
  const std::int64_t zero_infer[] = {0, -1};
  EXPECT_TF_ERROR(reshape(zeros({0, 3}), zero_infer, backend()), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(copy(Tensor(), backend()), ErrorKind::InvalidArgument);
}

TEST(Structural, BroadcastInDim) {
  for (DType dt : kDTypes) {
    for (const Tensor& x : layouts(sample({3, 1}, dt))) {
      const std::int64_t shape[] = {2, 3, 4}, dims[] = {1, 2};
      Tensor out = broadcast_in_dim(x, shape, dims, backend());
      EXPECT_EQ(out.shape(), (Shape{2, 3, 4}));
      expect_fresh(out, x, dt);
      expect_each(out, [&](const Idx& i) { return at(x, {i[1], 0}); });
    }
  }
  Tensor s = sample({}, c128);
  const std::int64_t square[] = {2, 2};
  Tensor out = broadcast_in_dim(s, square, {}, backend());
  expect_each(out, [&](const Idx&) { return at(s, {}); });
  const std::int64_t empty_shape[] = {0, 3}, d1[] = {1};
  EXPECT_EQ(broadcast_in_dim(sample({3}, f64), empty_shape, d1, backend()).shape(), (Shape{0, 3}));
}

TEST(Structural, BroadcastInDimErrors) {
  Tensor x = sample({3, 1}, f64);
  const std::int64_t shape[] = {2, 3, 4}, unordered[] = {2, 1}, one[] = {1}, far[] = {1, 3},
                     mismatch[] = {0, 2};
  EXPECT_TF_ERROR(broadcast_in_dim(x, shape, unordered, backend()), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(broadcast_in_dim(x, shape, one, backend()), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(broadcast_in_dim(x, shape, far, backend()), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(broadcast_in_dim(x, shape, mismatch, backend()), ErrorKind::ShapeMismatch);
  const std::int64_t negative[] = {-3, 3, 4}, dims[] = {1, 2};
  EXPECT_TF_ERROR(broadcast_in_dim(x, negative, dims, backend()), ErrorKind::InvalidArgument);
}

TEST(Structural, SliceWithStrides) {
  for (DType dt : kDTypes) {
    for (const Tensor& x : layouts(sample({5, 6}, dt))) {
      const std::int64_t start[] = {1, 0}, limit[] = {5, 6}, stride[] = {2, 3};
      Tensor out = slice(x, start, limit, stride, backend());
      EXPECT_EQ(out.shape(), (Shape{2, 2}));
      expect_fresh(out, x, dt);
      expect_each(out, [&](const Idx& i) { return at(x, {1 + 2 * i[0], 3 * i[1]}); });
      const std::int64_t s2[] = {4, 2}, l2[] = {5, 2}, st2[] = {1, 1};
      EXPECT_EQ(slice(x, s2, l2, st2, backend()).shape(), (Shape{1, 0}));
    }
  }
  EXPECT_EQ(slice(sample({}, f64), {}, {}, {}, backend()).rank(), 0);
}

TEST(Structural, SliceErrors) {
  Tensor x = sample({5, 6}, f64);
  const std::int64_t start[] = {0, 0}, limit[] = {5, 6}, ones[] = {1, 1}, zero_step[] = {1, 0},
                     too_far[] = {6, 6}, negative[] = {-1, 0}, backwards[] = {3, 0},
                     limit_back[] = {2, 6}, one[] = {1};
  EXPECT_TF_ERROR(slice(x, start, limit, zero_step, backend()), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(slice(x, start, too_far, ones, backend()), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(slice(x, negative, limit, ones, backend()), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(slice(x, backwards, limit_back, ones, backend()), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(slice(x, one, limit, ones, backend()), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(slice(x, start, limit, one, backend()), ErrorKind::RankMismatch);
}

TEST(Structural, PadLowHighInteriorAndCrop) {
  const Scalar values[] = {Scalar(7.5), Scalar(c128_t(1, 2)), Scalar(std::int64_t{-3})};
  for (std::size_t v = 0; v < 3; ++v) {
    const DType dt = kDTypes[v];
    Tensor fill_value = full({}, values[v], dt);
    for (const Tensor& x : layouts(sample({3, 4}, dt))) {
      const std::int64_t low[] = {1, -1}, high[] = {2, 0}, interior[] = {1, 2};
      Tensor out = pad(x, low, high, values[v], backend(), interior);
      // axis 0: 1 + 2 + 3 + 2 * 1; axis 1: -1 + 0 + 4 + 3 * 2.
      EXPECT_EQ(out.shape(), (Shape{8, 9}));
      expect_fresh(out, x, dt);
      expect_each(out, [&](const Idx& i) {
        Idx src(2);
        for (std::size_t d = 0; d < 2; ++d) {
          const std::int64_t t = i[d] - low[d], step = interior[d] + 1;
          if (t < 0 || t % step != 0 || t / step >= x.shape()[d]) return at(fill_value, {});
          src[d] = t / step;
        }
        return at(x, src);
      });
      // Cropping on both sides without interior padding.
      const std::int64_t crop_low[] = {-1, 0}, crop_high[] = {0, -2};
      Tensor cropped = pad(x, crop_low, crop_high, values[v], backend());
      EXPECT_EQ(cropped.shape(), (Shape{2, 2}));
      expect_each(cropped, [&](const Idx& i) { return at(x, {i[0] + 1, i[1]}); });
    }
  }
  const std::int64_t low[] = {1, 0}, high[] = {1, 0};
  Tensor z = pad(zeros({0, 2}), low, high, Scalar(2.0), backend());
  EXPECT_EQ(z.shape(), (Shape{2, 2}));
  expect_each(z, [](const Idx&) { return c128_t(2.0); });
  Tensor s = sample({}, f64);
  EXPECT_EQ(at(pad(s, {}, {}, Scalar(0.0), backend()), {}), at(s, {}));
}

TEST(Structural, PadErrors) {
  Tensor x = sample({3, 4}, f64);
  const std::int64_t zeros2[] = {0, 0}, one[] = {0}, neg_interior[] = {-1, 0}, too_much[] = {-4, 0};
  EXPECT_TF_ERROR(pad(x, one, zeros2, Scalar(0.0), backend()), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(pad(x, zeros2, one, Scalar(0.0), backend()), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(pad(x, zeros2, zeros2, Scalar(0.0), backend(), one), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(pad(x, zeros2, zeros2, Scalar(0.0), backend(), neg_interior),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(pad(x, too_much, zeros2, Scalar(0.0), backend()), ErrorKind::InvalidArgument);
  Tensor xi = sample({3, 4}, i64);
  EXPECT_TF_ERROR(pad(xi, zeros2, zeros2, Scalar(std::nan("")), backend()),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(pad(xi, zeros2, zeros2, Scalar(1e300), backend()), ErrorKind::InvalidArgument);
}

TEST(Structural, ConcatenatePromotesAndJoins) {
  for (DType dt : kDTypes) {
    Tensor a = sample({2, 3}, dt, 1);
    Tensor b = tftest::strided_copy(sample({2, 1}, dt, 2));
    Tensor c = sample({2, 0}, dt);
    const Tensor xs[] = {a, b, c};
    Tensor out = concatenate(xs, -1, backend());
    EXPECT_EQ(out.shape(), (Shape{2, 4}));
    expect_fresh(out, a, dt);
    expect_each(out, [&](const Idx& i) { return i[1] < 3 ? at(a, i) : at(b, {i[0], 0}); });
  }
  const Tensor mixed[] = {sample({2}, i64), sample({3}, f32)};
  Tensor out = concatenate(mixed, 0, backend());
  EXPECT_EQ(out.dtype(), f32);
  expect_each(out,
              [&](const Idx& i) { return i[0] < 2 ? at(mixed[0], i) : at(mixed[1], {i[0] - 2}); });
}

TEST(Structural, ConcatenateErrors) {
  EXPECT_TF_ERROR(concatenate({}, 0, backend()), ErrorKind::InvalidArgument);
  const Tensor ranks[] = {zeros({2, 3}), zeros({2})};
  EXPECT_TF_ERROR(concatenate(ranks, 0, backend()), ErrorKind::RankMismatch);
  const Tensor shapes[] = {zeros({2, 3}), zeros({3, 3})};
  EXPECT_TF_ERROR(concatenate(shapes, 1, backend()), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(concatenate(shapes, 2, backend()), ErrorKind::AxisOutOfBounds);
  const Tensor undefined[] = {zeros({2}), Tensor()};
  EXPECT_TF_ERROR(concatenate(undefined, 0, backend()), ErrorKind::InvalidArgument);
  const Tensor scalars[] = {zeros({}), zeros({})};
  EXPECT_TF_ERROR(concatenate(scalars, 0, backend()), ErrorKind::AxisOutOfBounds);
}

TEST(Structural, StackInsertsAxis) {
  for (DType dt : kDTypes) {
    Tensor a = sample({2, 3}, dt, 1);
    Tensor b = tftest::strided_copy(sample({2, 3}, dt, 5));
    const Tensor xs[] = {a, b};
    Tensor mid = stack(xs, 1, backend());
    EXPECT_EQ(mid.shape(), (Shape{2, 2, 3}));
    expect_fresh(mid, a, dt);
    expect_each(mid, [&](const Idx& i) { return at(xs[i[1]], {i[0], i[2]}); });
    Tensor last = stack(xs, -1, backend());
    EXPECT_EQ(last.shape(), (Shape{2, 3, 2}));
    expect_each(last, [&](const Idx& i) { return at(xs[i[2]], {i[0], i[1]}); });
  }
  const Tensor scalars[] = {Tensor::scalar(std::int32_t{4}), Tensor::scalar(c64_t(1, -1))};
  Tensor v = stack(scalars, 0, backend());
  EXPECT_EQ(v.dtype(), c64);
  EXPECT_EQ(v.shape(), (Shape{2}));
  EXPECT_EQ(at(v, {0}), c128_t(4));
  EXPECT_EQ(at(v, {1}), c128_t(1, -1));
  const Tensor empties[] = {zeros({0}), zeros({0})};
  EXPECT_EQ(stack(empties, 0, backend()).shape(), (Shape{2, 0}));
}

TEST(Structural, StackErrors) {
  EXPECT_TF_ERROR(stack({}, 0, backend()), ErrorKind::InvalidArgument);
  const Tensor ranks[] = {zeros({2, 3}), zeros({2})};
  EXPECT_TF_ERROR(stack(ranks, 0, backend()), ErrorKind::RankMismatch);
  const Tensor shapes[] = {zeros({2, 3}), zeros({3, 2})};
  EXPECT_TF_ERROR(stack(shapes, 0, backend()), ErrorKind::ShapeMismatch);
  const Tensor ok[] = {zeros({2}), zeros({2})};
  EXPECT_TF_ERROR(stack(ok, 2, backend()), ErrorKind::AxisOutOfBounds);
}

TEST(Structural, ReverseAxes) {
  for (DType dt : kDTypes) {
    for (const Tensor& x : layouts(sample({3, 4, 2}, dt))) {
      const std::int64_t axes[] = {0, -1};
      Tensor out = reverse(x, axes, backend());
      expect_fresh(out, x, dt);
      expect_each(out, [&](const Idx& i) { return at(x, {2 - i[0], i[1], 1 - i[2]}); });
      Tensor same = reverse(x, {}, backend());
      expect_each(same, [&](const Idx& i) { return at(x, i); });
    }
  }
  const std::int64_t zero[] = {0};
  EXPECT_EQ(reverse(zeros({0, 2}), zero, backend()).shape(), (Shape{0, 2}));
  const std::int64_t dup[] = {0, -2}, far[] = {2};
  EXPECT_TF_ERROR(reverse(zeros({2, 2}), dup, backend()), ErrorKind::DuplicateAxis);
  EXPECT_TF_ERROR(reverse(zeros({2, 2}), far, backend()), ErrorKind::AxisOutOfBounds);
}

TEST(Structural, DiagonalWithOffsets) {
  for (DType dt : kDTypes) {
    for (const Tensor& x : layouts(sample({3, 4, 2}, dt))) {
      Tensor up = diagonal(x, 1, 0, 1, backend());
      EXPECT_EQ(up.shape(), (Shape{3, 2}));
      expect_fresh(up, x, dt);
      expect_each(up, [&](const Idx& i) { return at(x, {i[0], i[0] + 1, i[1]}); });
      Tensor down = diagonal(x, -1, 0, 1, backend());
      EXPECT_EQ(down.shape(), (Shape{2, 2}));
      expect_each(down, [&](const Idx& i) { return at(x, {i[0] + 1, i[0], i[1]}); });
      Tensor other = diagonal(x, 0, 2, 0, backend());
      EXPECT_EQ(other.shape(), (Shape{2, 4}));
      expect_each(other, [&](const Idx& i) { return at(x, {i[0], i[1], i[0]}); });
    }
  }
  EXPECT_EQ(diagonal(zeros({2, 2}), 5, 0, 1, backend()).shape(), (Shape{0}));
  EXPECT_TF_ERROR(diagonal(zeros({2, 2}), 0, 1, 1, backend()), ErrorKind::DuplicateAxis);
  EXPECT_TF_ERROR(diagonal(zeros({2}), 0, 0, 1, backend()), ErrorKind::AxisOutOfBounds);
}

TEST(Structural, DiagEmbedInvertsDiagonal) {
  for (DType dt : kDTypes) {
    for (const Tensor& x : layouts(sample({3, 2}, dt))) {
      for (std::int64_t k : {0, 1, -2}) {
        Tensor out = diag_embed(x, k, backend());
        const std::int64_t n = 3 + std::abs(k);
        EXPECT_EQ(out.shape(), (Shape{n, n, 2}));
        expect_fresh(out, x, dt);
        expect_each(out, [&](const Idx& i) {
          return i[1] - i[0] == k ? at(x, {k >= 0 ? i[0] : i[1], i[2]}) : c128_t(0);
        });
        expect_each(diagonal(out, k, 0, 1, backend()), [&](const Idx& i) { return at(x, i); });
      }
    }
  }
  EXPECT_EQ(diag_embed(zeros({0}), 0, backend()).shape(), (Shape{0, 0}));
  EXPECT_TF_ERROR(diag_embed(zeros({}), 0, backend()), ErrorKind::RankMismatch);
}

TEST(Structural, TrilTriuMatchReference) {
  constexpr std::int64_t kBig = std::numeric_limits<std::int64_t>::max();
  for (CpuBackend* be : {&backend(), &parallel_backend()}) {
    for (DType dt : kDTypes) {
      for (const Tensor& x : layouts(sample({4, 5, 2}, dt))) {
        for (std::int64_t k :
             {std::int64_t{0}, std::int64_t{-1}, std::int64_t{2}, kBig, -kBig - 1}) {
          Tensor lo = tril(x, k, *be);
          Tensor up = triu(x, k, *be);
          expect_fresh(lo, x, dt);
          expect_fresh(up, x, dt);
          expect_each(lo, [&](const Idx& i) { return i[1] - i[0] <= k ? at(x, i) : c128_t(0); });
          expect_each(up, [&](const Idx& i) { return i[1] - i[0] >= k ? at(x, i) : c128_t(0); });
        }
      }
    }
  }
  EXPECT_EQ(tril(zeros({0, 3}), 0, backend()).shape(), (Shape{0, 3}));
  EXPECT_EQ(triu(zeros({3, 0, 2}), 0, backend()).shape(), (Shape{3, 0, 2}));
  EXPECT_TF_ERROR(tril(zeros({3}), 0, backend()), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(triu(zeros({}), 0, backend()), ErrorKind::RankMismatch);
}

TEST(Structural, ConvertIsLosslessOnly) {
  Tensor xi = tftest::strided_copy(sample({2, 3}, i32));
  Tensor f = convert(xi, f64, backend());
  expect_fresh(f, xi, f64);
  expect_each(f, [&](const Idx& i) { return at(xi, i); });
  Tensor c = convert(sample({3}, f32), c64, backend());
  EXPECT_EQ(c.dtype(), c64);
  Tensor flags =
      cast(Tensor::from_col_major({2}, std::vector<std::int32_t>{5, 0}), bool_, backend());
  EXPECT_EQ(flags.dtype(), bool_);
  Tensor b = convert(flags, i64, backend());
  EXPECT_EQ(b.to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 0}));
  EXPECT_EQ(convert(zeros({0}, f32), f64, backend()).shape(), (Shape{0}));
  EXPECT_TF_ERROR(convert(sample({2}, i64), f64, backend()), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(convert(sample({2}, f64), f32, backend()), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(convert(sample({2}, c128), f64, backend()), ErrorKind::DTypeMismatch);
}

TEST(Structural, CastTruncatesSaturatesAndZeroesNonFinite) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> v{1.7, -1.7, std::nan(""), inf, -inf, 1e300, -1e300, 2.5};
  Tensor x = Tensor::from_col_major({8}, v);
  constexpr auto i32max = std::numeric_limits<std::int32_t>::max();
  constexpr auto i32min = std::numeric_limits<std::int32_t>::min();
  constexpr auto i64max = std::numeric_limits<std::int64_t>::max();
  constexpr auto i64min = std::numeric_limits<std::int64_t>::min();
  for (CpuBackend* be : {&backend(), &parallel_backend()}) {
    for (const Tensor& in : layouts(x)) {
      Tensor a = cast(in, i32, *be);
      expect_fresh(a, in, i32);
      EXPECT_EQ(a.to_vector<std::int32_t>(),
                (std::vector<std::int32_t>{1, -1, 0, 0, 0, i32max, i32min, 2}));
      EXPECT_EQ(cast(in, i64, *be).to_vector<std::int64_t>(),
                (std::vector<std::int64_t>{1, -1, 0, 0, 0, i64max, i64min, 2}));
      // NaN != 0, so every value here is true.
      expect_each(cast(in, bool_, *be), [](const Idx&) { return c128_t(1); });
    }
  }
  // Float edge: 2^63 as f32 saturates, 2^31 - 128 as f32 fits in i32.
  Tensor xf = Tensor::from_col_major({2}, std::vector<float>{9.3e18f, 2147483520.0f});
  EXPECT_EQ(cast(xf, i64, backend()).to_vector<std::int64_t>()[0], i64max);
  EXPECT_EQ(cast(xf, i32, backend()).to_vector<std::int32_t>()[1], 2147483520);
  Tensor xc = Tensor::from_col_major({2}, std::vector<c128_t>{{-2.9, 5.0}, {3.0, -1.0}});
  EXPECT_EQ(cast(xc, i64, backend()).to_vector<std::int64_t>(), (std::vector<std::int64_t>{-2, 3}));
  EXPECT_EQ(cast(xc, f64, backend()).to_vector<double>(), (std::vector<double>{-2.9, 3.0}));
  Tensor wide =
      Tensor::from_col_major({2}, std::vector<std::int64_t>{(std::int64_t{1} << 40) + 5, -7});
  EXPECT_EQ(cast(wide, i32, backend()).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{5, -7}));
  EXPECT_EQ(cast(sample({}, f64), i32, backend()).rank(), 0);
  EXPECT_EQ(cast(zeros({0, 2}), i32, backend()).shape(), (Shape{0, 2}));
  EXPECT_TF_ERROR(cast(Tensor(), f64, backend()), ErrorKind::InvalidArgument);
}

namespace {
// A non-CPU backend over host memory: ops must refuse it rather than misuse it.
class OtherBackend final : public Backend {
 public:
  std::string_view kind() const override { return "cuda"; }
  Placement placement() const override { return Placement{}; }
  Tensor empty(std::span<const std::int64_t> shape, DType dtype) override {
    return tenferro::empty(shape, dtype);
  }
};
}  // namespace

TEST(Structural, NonCpuBackendIsUnsupported) {
  OtherBackend other;
  Tensor x = sample({2, 2}, f64);
  EXPECT_TF_ERROR(copy(x, other), ErrorKind::Unsupported);
  EXPECT_TF_ERROR(tril(x, 0, other), ErrorKind::Unsupported);
  EXPECT_TF_ERROR(cast(x, i32, other), ErrorKind::Unsupported);
  EXPECT_TF_ERROR(
      index_select(x, 0, Tensor::from_col_major({1}, std::vector<std::int64_t>{0}), other),
      ErrorKind::Unsupported);
}
