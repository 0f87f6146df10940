// cpu::copy and Tensor::copy_into (one kernel, tensor/strided_copy.hpp)
// against element reads through the strides (same dtype), and conversions
// against a compact same-dtype copy converted element by element.

#include <cstddef>
#include <cstring>
#include <numeric>

#include "../../src/cpu/kernels.hpp"
#include "../../src/cpu/stream_store.hpp"
#include "../../src/tensor/transpose_tile.hpp"
#include "test_util.hpp"

using namespace tenferro;

namespace {

Tensor random(std::span<const std::int64_t> shape, DType dtype, std::uint64_t seed) {
  Generator gen(seed);
  Tensor r = randn(shape, is_inexact(dtype) ? dtype : f64, gen);
  if (is_inexact(dtype)) return r;
  // Integers in [-20, 20] and bools with both values.
  Tensor scaled = zeros(shape, f64);
  const auto v = r.to_vector<double>();
  std::vector<double> w(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) w[i] = std::round(v[i] * 10.0);
  Tensor src = Tensor::from_col_major(Shape(shape), w);
  Tensor out = zeros(shape, dtype);
  Tensor::copy_into(src, out);
  return out;
}
Tensor random(std::initializer_list<std::int64_t> shape, DType dtype, std::uint64_t seed) {
  return random(std::span<const std::int64_t>(shape.begin(), shape.size()), dtype, seed);
}

// Element `linear` (column-major) of t, read through its strides from raw
// memory: the reference no copy kernel is involved in.
c128_t element_at(const Tensor& t, std::int64_t linear) {
  std::int64_t off = 0;
  for (std::size_t d = 0; d < t.shape().size(); ++d) {
    off += linear % t.shape()[d] * t.strides()[d];
    linear /= t.shape()[d];
  }
  const auto* p = static_cast<const std::byte*>(t.raw_data()) +
                  off * static_cast<std::int64_t>(itemsize(t.dtype()));
  auto read = [p](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t.dtype()) {
    case DType::Bool:
      return read(bool{}) ? 1.0 : 0.0;
    case DType::I32:
      return static_cast<double>(read(std::int32_t{}));
    case DType::I64:
      return static_cast<double>(read(std::int64_t{}));
    case DType::F32:
      return read(float{});
    case DType::F64:
      return read(double{});
    case DType::C64:
      return c128_t(read(c64_t{}));
    case DType::C128:
      return read(c128_t{});
  }
  return {};
}

// Copies src into a fresh compact dst of `dtype` with cpu::copy and with
// Tensor::copy_into; same dtype: both must equal the strided reads of src;
// another dtype: both must equal a compact copy of src converted; returns
// the result.
Tensor check_copy(CpuBackend& cpu, const Tensor& src, DType dtype) {
  Tensor got = cpu.empty(src.shape(), dtype);
  cpu::copy(cpu, src, got);
  Tensor via_tensor = zeros(src.shape(), dtype);
  Tensor::copy_into(src, via_tensor);
  const std::string where =
      "src shape " + shape_to_string(src.shape()) + " strides " + shape_to_string(src.strides());
  if (dtype == src.dtype()) {
    std::int64_t wrong = 0;
    for (std::int64_t i = 0; i < src.numel(); ++i) {
      const c128_t want = element_at(src, i);
      wrong += element_at(got, i) != want || element_at(via_tensor, i) != want;
    }
    EXPECT_EQ(wrong, 0) << where;
  } else {
    Tensor want = zeros(src.shape(), dtype);
    Tensor::copy_into(check_copy(cpu, src, src.dtype()), want);
    EXPECT_EQ(max_abs_diff(got, want), 0.0) << where;
    EXPECT_EQ(max_abs_diff(via_tensor, want), 0.0) << where;
  }
  return got;
}

std::vector<std::int64_t> reversed_axes(std::int64_t rank) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(rank));
  std::iota(p.rbegin(), p.rend(), 0);
  return p;
}

}  // namespace

TEST(Copy, TransposeEveryDType) {
  CpuBackend cpu({.num_threads = 1});
  for (DType dt : kAllDTypes) {
    SCOPED_TRACE(std::string(name(dt)));
    const Tensor t = random({67, 45}, dt, 1);
    check_copy(cpu, t.transpose(), dt);
    // Tile edges: extents below, at and just above the tile side.
    check_copy(cpu, random({64, 65}, dt, 2).transpose(), dt);
    check_copy(cpu, random({32, 130}, dt, 2).transpose(), dt);
    check_copy(cpu, random({5, 100}, dt, 3).transpose(), dt);
  }
}

TEST(Copy, Rank3PermutationsAndSmallExtents) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor t = random({24, 20, 10}, f64, 4);
  for (const auto& p : std::vector<std::vector<std::int64_t>>{
           {2, 0, 1}, {1, 2, 0}, {1, 0, 2}, {0, 2, 1}, {2, 1, 0}}) {
    check_copy(cpu, t.permute(p), f64);
  }
  // A 3^9 tensor with its axes reversed: every extent is below the tile side.
  const std::vector<std::int64_t> shape(9, 3);
  const Tensor cube = random(shape, c128, 5);
  check_copy(cpu, cube.permute(reversed_axes(9)), c128);
  check_copy(cpu, cube.permute({4, 0, 8, 1, 7, 2, 6, 3, 5}), c128);
}

// The register-blocked tiles (tensor/transpose_tile.hpp): 4- and 8-byte
// elements, edges that are no multiple of the 8 x 8 / 16 x 8 blocks, outer
// axes, row strides that are not the row extent (a slice) or negative, an
// unaligned destination, two threads, and an output above the streaming-store
// size; then the grouped tiles of many small axes.
TEST(Copy, TiledTransposeLayouts) {
  CpuBackend one({.num_threads = 1}), two({.num_threads = 2});
  for (DType dt : {f32, f64, i32, i64, c64}) {
    SCOPED_TRACE(std::string(name(dt)));
    check_copy(one, random({37, 53}, dt, 10).transpose(), dt);
    check_copy(one, random({9, 8, 3}, dt, 11).permute({1, 0, 2}), dt);
    check_copy(one, random({40, 3, 70}, dt, 12).permute({2, 1, 0}), dt);
    check_copy(two, random({131, 260}, dt, 13).transpose(), dt);
    // Every other column of a wider tensor, then rows read backwards.
    const Tensor wide = random({50, 90}, dt, 14);
    check_copy(one, wide.slice(1, 0, std::nullopt, 2).transpose(), dt);
    check_copy(one, wide.slice(0, std::nullopt, std::nullopt, -1).transpose(), dt);
    // A destination one element into its buffer: not 64-byte aligned.
    const Tensor src = random({33, 47}, dt, 15);
    Tensor buffer = zeros({33 * 47 + 1}, dt);
    Tensor dst = buffer.slice(0, 1, std::nullopt, 1).reshape(std::vector<std::int64_t>{47, 33});
    cpu::copy(one, src.transpose(), dst);
    EXPECT_EQ(max_abs_diff(dst, check_copy(one, src.transpose(), dt)), 0.0);
  }
  // Groups of small axes on each side (tables of row and column offsets).
  const std::vector<std::int64_t> cube(9, 3);
  for (DType dt : {bool_, i32, f64, c128}) {
    SCOPED_TRACE(std::string(name(dt)));
    check_copy(one, random(cube, dt, 17).permute(reversed_axes(9)), dt);
    check_copy(two, random(cube, dt, 18).permute({5, 6, 7, 8, 0, 1, 2, 3, 4}), dt);
    check_copy(one, random({4, 5, 6, 7}, dt, 19).permute({3, 2, 1, 0}), dt);
    check_copy(one, random({2, 3, 4, 5, 6}, dt, 20).permute(reversed_axes(5)), dt);
    // A strided source inside the column group: not a compact run.
    check_copy(one, tftest::strided_copy(random({4, 5, 6}, dt, 21)).permute({2, 1, 0}), dt);
  }
  // The largest groups: 3^12 reversed takes rows of 729 and columns of 243
  // (the limits are 1024 and 256) with one outer axis; 2^11 x 3^2 reversed
  // rows of 3 * 3 * 2^6 = 576 (another 2 would pass 1024), columns of the
  // 2^5 left.
  const Tensor deep = random(std::vector<std::int64_t>(12, 3), f64, 22);
  check_copy(two, deep.permute(reversed_axes(12)), f64);
  std::vector<std::int64_t> mixed(11, 2);
  mixed.push_back(3);
  mixed.push_back(3);
  check_copy(one, random(mixed, i32, 23).permute(reversed_axes(13)), i32);
  // Narrow layouts (tiles of many rows walked by strips), such as an MPS
  // bra tensor B(e, b, d) copied to [b, d, e], in every dtype: odd extents,
  // a last partial column block, two threads, a reversed source axis.
  for (DType dt : kAllDTypes) {
    SCOPED_TRACE(std::string(name(dt)));
    check_copy(one, random({19, 19, 30}, dt, 24).permute({1, 2, 0}), dt);
    check_copy(one, random({5, 33, 17}, dt, 25).permute({1, 2, 0}), dt);
    check_copy(one, random({61, 7, 11}, dt, 26).permute({1, 2, 0}), dt);
    check_copy(two, random({19, 19, 200}, dt, 27).permute({1, 2, 0}), dt);
    check_copy(one, random({19, 19, 30}, dt, 28).permute({2, 0, 1}), dt);
    check_copy(
        one,
        random({19, 19, 30}, dt, 29).slice(2, std::nullopt, std::nullopt, -1).permute({1, 2, 0}),
        dt);
    check_copy(
        one,
        random({19, 19, 30}, dt, 30).slice(0, std::nullopt, std::nullopt, -1).permute({1, 2, 0}),
        dt);
  }
  // 2.2 M doubles (17.6 MB): streaming stores, on one and on two threads.
  const Tensor big = random({1100, 2000}, f64, 16);
  const Tensor want = check_copy(one, big.transpose(), f64);
  Tensor got = two.empty(want.shape(), f64);
  cpu::copy(two, big.transpose(), got);
  EXPECT_EQ(max_abs_diff(got, want), 0.0);
}

// Every kernel set the machine supports, on every element size, against the
// scalar definition d[i + j * dld] = s[i * sld + j]; aligned streaming
// destinations included. Padding around each row must stay untouched.
const std::vector<std::pair<std::int64_t, std::int64_t>> kTileShapes{
    {8, 8},   {16, 8},   {32, 32}, {19, 13}, {40, 7},  {3, 29},  {1901, 19}, {103, 64},
    {37, 65}, {50, 130}, {21, 5},  {9, 4},   {70, 33}, {66, 31}, {13, 128},  {17, 129}};

TEST(Copy, TransposeTileKernelsOfEverySupportedIsa) {
  using detail::TransposeIsa;
  std::vector<TransposeIsa> isas{TransposeIsa::Scalar};
  if (detail::best_transpose_isa() != TransposeIsa::Scalar) isas.push_back(TransposeIsa::Avx2);
  if (detail::best_transpose_isa() == TransposeIsa::Avx512) isas.push_back(TransposeIsa::Avx512);
  std::int64_t checked = 0;
  for (const TransposeIsa isa : isas) {
    for (const std::size_t item : {1u, 2u, 4u, 8u, 16u}) {
      // Then narrow tiles (cols * item at most kNarrowTileBytes: strips of
      // rows) around that limit and the last partial column block.
      for (const auto& [rows, cols] : kTileShapes) {
        for (const bool streaming : {false, true}) {
          SCOPED_TRACE(::testing::Message()
                       << "isa " << static_cast<int>(isa) << " item " << item << " " << rows << "x"
                       << cols << " streaming " << streaming);
          // Source rows padded by 3 elements, destination rows by 64 bytes.
          const std::int64_t sld = cols + 3, dld = rows + 64 / static_cast<std::int64_t>(item);
          std::vector<unsigned char> src(static_cast<std::size_t>(rows * sld) * item);
          for (std::size_t b = 0; b < src.size(); ++b)
            src[b] = static_cast<unsigned char>(b * 7 + 1);
          // 64-byte aligned destination (streaming stores need it).
          std::vector<unsigned char> raw(static_cast<std::size_t>(cols * dld) * item + 64, 0xAB);
          unsigned char* dst =
              raw.data() + (64 - reinterpret_cast<std::uintptr_t>(raw.data()) % 64) % 64;
          detail::transpose_tile_with(isa, src.data(), sld, dst, dld, rows, cols, item, streaming);
          detail::transpose_fence();
          std::int64_t wrong = 0;
          for (std::int64_t j = 0; j < cols; ++j) {
            for (std::int64_t i = 0; i < dld; ++i) {
              const unsigned char* got = dst + (i + j * dld) * static_cast<std::int64_t>(item);
              for (std::size_t b = 0; b < item; ++b) {
                const unsigned char want =
                    i < rows ? src[static_cast<std::size_t>(i * sld + j) * item + b] : 0xAB;
                wrong += got[b] != want;
              }
            }
          }
          EXPECT_EQ(wrong, 0);
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, static_cast<std::int64_t>(isas.size() * 5 * kTileShapes.size() * 2));
}

TEST(Copy, NegativeStridesBroadcastAndStridedDestinations) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor t = random({13, 7, 5}, f32, 6);
  check_copy(cpu, tftest::strided_copy(t), f32);
  check_copy(cpu, tftest::strided_copy(t).permute({2, 0, 1}), f32);
  check_copy(cpu, t.slice(1, std::nullopt, std::nullopt, -1).transpose(0, 2), f32);
  // Broadcast (stride-0) sources, plain and permuted.
  const Tensor b = random({5, 1, 3}, i64, 7).broadcast_to(std::vector<std::int64_t>{5, 40, 3});
  check_copy(cpu, b, i64);
  check_copy(cpu, b.permute({1, 2, 0}), i64);
  check_copy(cpu, random({1}, f64, 8).broadcast_to(std::vector<std::int64_t>{4, 50}), f64);
  // Permuted and negative-stride destinations.
  const Tensor src = random({40, 36}, f64, 9);
  Tensor base = zeros({36, 40}, f64);
  cpu::copy(cpu, src, base.transpose());
  EXPECT_EQ(max_abs_diff(base.transpose(), src), 0.0);
  Tensor rev = zeros({40, 36}, f64);
  cpu::copy(cpu, src, rev.slice(0, std::nullopt, std::nullopt, -1));
  EXPECT_EQ(max_abs_diff(rev.slice(0, std::nullopt, std::nullopt, -1), src), 0.0);
}

TEST(Copy, CompactSameDTypeIsExact) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor t = random({17, 9}, c64, 10);
  check_copy(cpu, t, c64);
  // A compact view with an offset (the last columns).
  check_copy(cpu, t.slice(1, 4, std::nullopt), c64);
}

// Same-dtype copies between compact tensors that move enough take the
// streaming form (cpu/stream_store.hpp stream_copy over the pool's chunks):
// views at odd offsets from a cache line on both sides, on one thread and
// split across two; every byte copied, the destination's neighbours kept.
TEST(Copy, LargeCompactCopiesStreamEveryByte) {
  CpuBackend one({.num_threads = 1});
  CpuBackend two({.num_threads = 2});
  for (const DType dtype : {bool_, f64, c128}) {
    const auto item = static_cast<std::int64_t>(itemsize(dtype));
    // Reads plus writes at least streams_output's size.
    const std::int64_t n =
        static_cast<std::int64_t>(cpu::stream_threshold_bytes(2) * 3 / 2) / (2 * item) + 37;
    if (cpu::stream_stores_available()) {
      EXPECT_TRUE(cpu::streams_output(static_cast<std::size_t>(2 * n * item)));
    }
    const Tensor src_store = zeros({n + 5}, dtype);
    auto* sb = static_cast<unsigned char*>(src_store.raw_data());
    for (std::int64_t k = 0; k < (n + 5) * item; ++k) {
      sb[k] = static_cast<unsigned char>(dtype == bool_ ? k % 3 == 0 : (k * 131 + 7) % 251);
    }
    const Tensor src = src_store.slice(0, 3, 3 + n);
    for (CpuBackend* cpu : {&one, &two}) {
      const Tensor dst_store = zeros({n + 9}, dtype);
      auto* db = static_cast<unsigned char*>(dst_store.raw_data());
      std::memset(db, dtype == bool_ ? 1 : 0xAB, static_cast<std::size_t>((n + 9) * item));
      cpu::copy(*cpu, src, dst_store.slice(0, 5, 5 + n));
      std::int64_t wrong = 0;
      for (std::int64_t k = 0; k < n * item; ++k) wrong += db[5 * item + k] != sb[3 * item + k];
      for (std::int64_t k = 0; k < 5 * item; ++k) wrong += db[k] != (dtype == bool_ ? 1 : 0xAB);
      for (std::int64_t k = (5 + n) * item; k < (n + 9) * item; ++k) {
        wrong += db[k] != (dtype == bool_ ? 1 : 0xAB);
      }
      EXPECT_EQ(wrong, 0) << name(dtype) << " on " << cpu->num_threads() << " thread(s)";
    }
  }
}

TEST(Copy, ConvertingDTypePairs) {
  CpuBackend cpu({.num_threads = 1});
  const Tensor x = Tensor::from_col_major({2, 2}, std::vector<double>{1.5, -2.0, 0.0, 3.25});
  Tensor z = check_copy(cpu, x.transpose(), c128);
  EXPECT_EQ(z.to_vector<c128_t>(), (std::vector<c128_t>{{1.5, 0}, {0.0, 0}, {-2.0, 0}, {3.25, 0}}));
  const Tensor c = Tensor::from_col_major({3}, std::vector<c128_t>{{1, 2}, {-3, 4}, {5, -6}});
  Tensor re = check_copy(cpu, c, f64);
  EXPECT_EQ(re.to_vector<double>(), (std::vector<double>{1, -3, 5}));
  const Tensor f = Tensor::from_col_major({3}, std::vector<float>{2.75f, -1.5f, 7.0f});
  Tensor i = check_copy(cpu, f, i64);
  EXPECT_EQ(i.to_vector<std::int64_t>(), (std::vector<std::int64_t>{2, -1, 7}));
  const Tensor n = Tensor::from_col_major({4}, std::vector<std::int32_t>{0, 3, -1, 0});
  Tensor bl = check_copy(cpu, n, bool_);
  Tensor bi = zeros({4}, i32);  // to_vector<bool> cannot work (std::vector<bool> has no data())
  Tensor::copy_into(bl, bi);
  EXPECT_EQ(bi.to_vector<std::int32_t>(), (std::vector<std::int32_t>{0, 1, 1, 0}));
  // Strided and permuted converting copies across every pair.
  const Tensor t = random({6, 5, 4}, c128, 11);
  for (DType from : kAllDTypes) {
    Tensor s = zeros({6, 5, 4}, from);
    Tensor::copy_into(t, s);
    for (DType to : kAllDTypes) {
      SCOPED_TRACE(std::string(name(from)) + " -> " + std::string(name(to)));
      check_copy(cpu, tftest::strided_copy(s).permute({2, 0, 1}), to);
    }
  }
}

TEST(Copy, ZeroSizeAndRankZero) {
  CpuBackend cpu({.num_threads = 1});
  check_copy(cpu, zeros({0, 4}, f64).transpose(), f64);
  check_copy(cpu, zeros({3, 0, 2}, i32), c64);
  Tensor s = check_copy(cpu, Tensor::scalar(2.5), f64);
  EXPECT_EQ(s.item().real(), 2.5);
  Tensor si = check_copy(cpu, Tensor::scalar(c128_t(3.0, 1.0)), i32);
  EXPECT_EQ(si.item().to_int(), 3);
}

TEST(Copy, TwoThreadsMatchOneThread) {
  CpuBackend one({.num_threads = 1});
  CpuBackend two({.num_threads = 2, .parallel_threshold = 256});
  const Tensor t = random({96, 80, 6}, f64, 12);
  for (const Tensor& src :
       {t.permute({1, 0, 2}), t.permute({2, 0, 1}), t, tftest::strided_copy(t)}) {
    Tensor a = check_copy(one, src, f64);
    Tensor b = check_copy(two, src, f64);
    EXPECT_EQ(max_abs_diff(a, b), 0.0);
    Tensor c = check_copy(two, src, c128);  // converting path splits too
    EXPECT_EQ(max_abs_diff(c, a), 0.0);
  }
  const std::vector<std::int64_t> shape(8, 3);
  const Tensor cube = random(shape, f32, 13).permute(reversed_axes(8));
  EXPECT_EQ(max_abs_diff(check_copy(one, cube, f32), check_copy(two, cube, f32)), 0.0);
}

TEST(Copy, ErrorKinds) {
  CpuBackend cpu({.num_threads = 1});
  Tensor dst = zeros({3, 2});
  EXPECT_TF_ERROR(cpu::copy(cpu, zeros({2, 3}), dst), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(cpu::copy(cpu, Tensor(), dst), ErrorKind::InvalidArgument);
}
