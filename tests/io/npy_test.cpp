// .npy/.npz IO: round trips for every dtype in both memory orders (rank 0,
// zero-size, strided views), files written by NumPy (tests/io/fixtures: C and
// Fortran order, big-endian, stored and compressed .npz) checked element by
// element against the formula that made them and re-saved byte for byte, and
// typed errors for bad files.

#include "tenferro/io/npy.hpp"

#include <gtest/gtest.h>

#include <complex>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "test_util.hpp"

using namespace tenferro;
namespace fs = std::filesystem;

namespace {

const fs::path kFixtures = TENFERRO_TEST_FIXTURES;

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() /
         ("tenferro_npy_test_" + std::to_string(::getpid()) + "_" + name);
}

// The formula of make_fixtures.py: sum_k (k + 1) 10^k i_k (+ 0.5, - i * base).
c128_t fixture_value(const std::vector<std::int64_t>& idx, DType dt) {
  double base = 0, scale = 1;
  for (std::size_t k = 0; k < idx.size(); ++k, scale *= 10)
    base += static_cast<double>(k + 1) * scale * static_cast<double>(idx[k]);
  if (dt == DType::Bool) return static_cast<double>(static_cast<std::int64_t>(base) % 2 == 1);
  if (is_integral(dt)) return base;
  if (is_complex(dt)) return {base + 0.5, -base};
  return base + 0.5;
}

void expect_fixture(const Tensor& t, DType dt, const Shape& shape, const std::string& what) {
  ASSERT_EQ(t.dtype(), dt) << what;
  ASSERT_EQ(t.shape(), shape) << what;
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    const auto idx = tftest::unravel(i, shape);
    EXPECT_EQ(tftest::element<c128_t>(t, idx), fixture_value(idx, dt)) << what << " element " << i;
  }
}

bool same(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || !(a.shape() == b.shape())) return false;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    const auto idx = tftest::unravel(i, a.shape());
    if (tftest::element<c128_t>(a, idx) != tftest::element<c128_t>(b, idx)) return false;
  }
  return true;
}

std::vector<std::byte> file_bytes(const fs::path& p) {
  std::FILE* f = std::fopen(p.c_str(), "rb");
  std::vector<std::byte> out;
  int c;
  while ((c = std::fgetc(f)) != EOF) out.push_back(static_cast<std::byte>(c));
  std::fclose(f);
  return out;
}

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> out;
  for (char c : s) out.push_back(static_cast<std::byte>(c));
  return out;
}

// A .npy preamble (version 1.0) with the given header text.
std::vector<std::byte> npy_with_header(std::string header, std::size_t data_bytes) {
  header += '\n';
  std::string s = std::string("\x93NUMPY\x01\x00", 8);
  s += static_cast<char>(header.size() & 0xFF);
  s += static_cast<char>(header.size() >> 8);
  s += header;
  s.append(data_bytes, '\0');
  return bytes_of(s);
}

const DType kAll[] = {DType::Bool, DType::I32, DType::I64, DType::F32,
                      DType::F64,  DType::C64, DType::C128};

}  // namespace

TEST(Npy, RoundTripEveryDtypeAndShape) {
  Generator gen(3);
  int checked = 0;
  for (DType dt : kAll) {
    const Tensor base =
        cast(randn({3, 4, 2}, DType::C128, gen), dt, *std::make_unique<CpuBackend>());
    for (const Tensor& x : {base, tftest::strided_copy(base), base.slice(1, 1, 3),
                            zeros({0, 3}, dt), full({}, Scalar(1.0), dt), base.select(2, 1)}) {
      const Tensor y = io::from_npy_bytes(io::to_npy_bytes(x));
      EXPECT_TRUE(same(x, y)) << name(dt) << " shape " << shape_to_string(x.shape());
      ++checked;
    }
  }
  EXPECT_EQ(checked, 7 * 6);
  // Through a file, and the header NumPy reads: Fortran order, our shape.
  const Tensor x = Tensor::from_col_major<double>({2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6});
  const fs::path p = temp_path("x.npy");
  io::save_npy(p, x);
  EXPECT_TRUE(same(io::load_npy(p), x));
  const std::vector<std::byte> b = file_bytes(p);
  const std::string head(reinterpret_cast<const char*>(b.data()), 80);
  EXPECT_NE(head.find("'fortran_order': True, 'shape': (2, 3)"), std::string::npos) << head;
  EXPECT_EQ((b.size() - 6 * 8) % 64, 0u);  // data aligned to 64 bytes
  fs::remove(p);
}

TEST(Npy, NumpyFixturesEveryDtypeOrderAndEndianness) {
  const std::pair<const char*, DType> tags[] = {
      {"b1", DType::Bool}, {"i4", DType::I32}, {"i8", DType::I64},  {"f4", DType::F32},
      {"f8", DType::F64},  {"c8", DType::C64}, {"c16", DType::C128}};
  int checked = 0;
  for (const auto& [tag, dt] : tags) {
    for (const char* order : {"_c", "_f", "_be"}) {
      const fs::path p = kFixtures / (std::string(tag) + order + ".npy");
      if (std::string(order) == "_be" && dt == DType::Bool) continue;  // one byte: no order
      expect_fixture(io::load_npy(p), dt, {3, 4, 2}, p.filename().string());
      ++checked;
    }
  }
  EXPECT_EQ(checked, 7 * 3 - 1);
  const Tensor s = io::load_npy(kFixtures / "f8_scalar.npy");
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.item<double>(), 2.5);
  EXPECT_EQ(io::load_npy(kFixtures / "f8_empty.npy").shape(), (Shape{0, 3}));
  expect_fixture(io::load_npy(kFixtures / "f8_vector.npy"), DType::F64, {5}, "vector");
}

TEST(Npz, NumpyArchivesAndRoundTrip) {
  const auto stored = io::load_npz(kFixtures / "stored.npz");
  ASSERT_EQ(stored.size(), 2u);
  expect_fixture(stored.at("a"), DType::F64, {3, 4}, "stored a");
  expect_fixture(stored.at("b"), DType::I32, {2}, "stored b");
  const auto packed = io::load_npz(kFixtures / "compressed.npz");
  ASSERT_EQ(packed.size(), 2u);
  expect_fixture(packed.at("a"), DType::F64, {3, 4}, "compressed a");
  expect_fixture(packed.at("z"), DType::C128, {2, 2}, "compressed z");

  Generator gen(8);
  const std::map<std::string, Tensor> arrays = {{"w", randn({4, 5}, DType::F32, gen)},
                                                {"flag", full({3}, Scalar(true), DType::Bool)},
                                                {"empty", zeros({0}, DType::I64)},
                                                {"big", zeros({300, 7}, DType::C128)}};
  for (bool compressed : {false, true}) {
    const fs::path p = temp_path(compressed ? "c.npz" : "s.npz");
    io::save_npz(p, arrays, compressed);
    const auto back = io::load_npz(p);
    ASSERT_EQ(back.size(), arrays.size());
    for (const auto& [key, t] : arrays) EXPECT_TRUE(same(back.at(key), t)) << key;
    if (compressed) {
      EXPECT_LT(fs::file_size(p), 300u * 7u * 16u / 4u);  // the zeros deflate
    }
    fs::remove(p);
  }
}

TEST(Npz, InMemoryBytesMatchTheFiles) {
  // from_npz_bytes reads what load_npz reads; to_npz_bytes is save_npz's content.
  const std::vector<std::byte> numpy_bytes = file_bytes(kFixtures / "compressed.npz");
  const auto packed = io::from_npz_bytes(numpy_bytes);
  ASSERT_EQ(packed.size(), 2u);
  expect_fixture(packed.at("a"), DType::F64, {3, 4}, "compressed a");
  expect_fixture(packed.at("z"), DType::C128, {2, 2}, "compressed z");
  const std::map<std::string, Tensor> arrays = {
      {"x", Tensor::from_col_major({2, 2}, std::vector<double>{1, 2, 3, 4})},
      {"n", Tensor::scalar(std::int64_t{-7})}};
  for (bool compressed : {false, true}) {
    const std::vector<std::byte> bytes = io::to_npz_bytes(arrays, compressed);
    const fs::path p = temp_path(compressed ? "mc.npz" : "ms.npz");
    io::save_npz(p, arrays, compressed);
    EXPECT_EQ(file_bytes(p), bytes);
    fs::remove(p);
    const auto back = io::from_npz_bytes(bytes);
    ASSERT_EQ(back.size(), 2u);
    for (const auto& [key, t] : arrays) EXPECT_TRUE(same(back.at(key), t)) << key;
  }
  // Errors name the source given as `what`.
  try {
    io::from_npz_bytes(std::span<const std::byte>(numpy_bytes).first(10), "upload 3");
    ADD_FAILURE() << "a 10-byte archive must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("upload 3"), std::string::npos) << e.what();
  }
  EXPECT_TF_ERROR(io::to_npz_bytes({{"", zeros({1})}}), ErrorKind::InvalidArgument);
}

TEST(Npy, BadFilesAreTypedErrors) {
  // Unsupported dtypes, from NumPy.
  EXPECT_TF_ERROR(io::load_npy(kFixtures / "f2_bad_dtype.npy"), ErrorKind::Unsupported);
  EXPECT_TF_ERROR(io::load_npy(kFixtures / "object_bad.npy"), ErrorKind::Unsupported);
  EXPECT_TF_ERROR(io::from_npy_bytes(npy_with_header(
                      "{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }", 4)),
                  ErrorKind::Unsupported);
  EXPECT_TF_ERROR(io::from_npy_bytes(npy_with_header(
                      "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,), }", 16)),
                  ErrorKind::Unsupported);
  // Bad magic, truncated preamble, truncated and overlong data.
  EXPECT_TF_ERROR(io::from_npy_bytes(bytes_of("PK\x03\x04 not npy")), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(io::from_npy_bytes(bytes_of("\x93NUMPY\x01")), ErrorKind::InvalidArgument);
  std::vector<std::byte> good = io::to_npy_bytes(zeros({3, 2}, DType::F64));
  std::vector<std::byte> cut(good.begin(), good.end() - 8);
  EXPECT_TF_ERROR(io::from_npy_bytes(cut), ErrorKind::InvalidArgument);
  std::vector<std::byte> longer = good;
  longer.push_back(std::byte{0});
  EXPECT_TF_ERROR(io::from_npy_bytes(longer), ErrorKind::InvalidArgument);
  std::vector<std::byte> header_cut(good.begin(), good.begin() + 40);
  EXPECT_TF_ERROR(io::from_npy_bytes(header_cut), ErrorKind::InvalidArgument);
  // A shape far larger than the data (no allocation is attempted for it).
  EXPECT_TF_ERROR(io::from_npy_bytes(npy_with_header(
                      "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }", 16)),
                  ErrorKind::InvalidArgument);
  // Malformed headers.
  for (const char* h : {"{'descr': '<f8', 'shape': (2,), }",
                        "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (2,), }",
                        "{'descr': '<f8', 'fortran_order': False, 'shape': (-2,), }", "not a dict",
                        "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'extra': 1}"}) {
    EXPECT_TF_ERROR(io::from_npy_bytes(npy_with_header(h, 16)), ErrorKind::InvalidArgument);
  }
  // Version 2.0 (4-byte header length) is read; version 9 is not.
  std::string v2 = "{'descr': '<i4', 'fortran_order': True, 'shape': (2,), }\n";
  std::string s = std::string("\x93NUMPY\x02\x00", 8) + static_cast<char>(v2.size()) +
                  std::string(3, '\0') + v2 + std::string("\x05\x00\x00\x00\x07\x00\x00\x00", 8);
  EXPECT_EQ(io::from_npy_bytes(bytes_of(s)).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{5, 7}));
  s[6] = '\x09';
  EXPECT_TF_ERROR(io::from_npy_bytes(bytes_of(s)), ErrorKind::Unsupported);
  // Files that do not exist or cannot be written; damaged archives.
  EXPECT_TF_ERROR(io::load_npy(kFixtures / "missing.npy"), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(io::save_npy(kFixtures / "no_such_dir" / "x.npy", zeros({1})),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(io::save_npy(temp_path("u.npy"), Tensor()), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(io::load_npz(kFixtures / "f8_c.npy"), ErrorKind::InvalidArgument);
  const std::vector<std::byte> zip = file_bytes(kFixtures / "compressed.npz");
  for (std::size_t cut_at : {zip.size() / 2, zip.size() - 30}) {
    const fs::path p = temp_path("cut.npz");
    std::FILE* f = std::fopen(p.c_str(), "wb");
    std::fwrite(zip.data(), 1, cut_at, f);
    std::fclose(f);
    EXPECT_TF_ERROR(io::load_npz(p), ErrorKind::InvalidArgument);
    fs::remove(p);
  }
  std::vector<std::byte> flipped = zip;
  flipped[80] ^= std::byte{0x5A};  // inside the first member's deflate stream
  const fs::path p = temp_path("flip.npz");
  std::FILE* f = std::fopen(p.c_str(), "wb");
  std::fwrite(flipped.data(), 1, flipped.size(), f);
  std::fclose(f);
  EXPECT_TF_ERROR(io::load_npz(p), ErrorKind::InvalidArgument);
  fs::remove(p);
  EXPECT_TF_ERROR(io::save_npz(temp_path("k.npz"), {{"a/b", zeros({1})}}),
                  ErrorKind::InvalidArgument);
}

TEST(Npy, COrderRoundTripsAndSaysFortranOrderFalse) {
  // Every dtype and layout: both orders load back to the same tensor.
  Generator gen(5);
  int checked = 0;
  for (DType dt : kAll) {
    const Tensor base =
        cast(randn({3, 4, 2}, DType::C128, gen), dt, *std::make_unique<CpuBackend>());
    for (const Tensor& x :
         {base, tftest::strided_copy(base), base.slice(1, 1, 3), zeros({0, 3}, dt),
          full({}, Scalar(1.0), dt), base.select(2, 1), base.select(2, 0).select(1, 2)}) {
      for (io::NpyOrder order : {io::NpyOrder::Fortran, io::NpyOrder::C}) {
        const Tensor y = io::from_npy_bytes(io::to_npy_bytes(x, order));
        EXPECT_TRUE(same(x, y)) << name(dt) << " shape " << shape_to_string(x.shape());
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 7 * 7 * 2);
  // The header NumPy reads and the row-major data: numpy.load gives
  // [[1, 3, 5], [2, 4, 6]], C-contiguous, as for the Fortran-order file.
  const Tensor x = Tensor::from_col_major<double>({2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6});
  const fs::path p = temp_path("c.npy");
  io::save_npy(p, x, io::NpyOrder::C);
  const std::vector<std::byte> b = file_bytes(p);
  const std::string head(reinterpret_cast<const char*>(b.data()), 80);
  EXPECT_NE(head.find("'fortran_order': False, 'shape': (2, 3)"), std::string::npos) << head;
  ASSERT_EQ(b.size(), 128u + 6 * 8);  // the header padded to 64-byte alignment
  std::vector<double> data(6);
  std::memcpy(data.data(), b.data() + 128, 6 * 8);
  EXPECT_EQ(data, (std::vector<double>{1, 3, 5, 2, 4, 6}));
  EXPECT_TRUE(same(io::load_npy(p), x));
  fs::remove(p);
  // The default stays Fortran order.
  EXPECT_EQ(io::to_npy_bytes(x), io::to_npy_bytes(x, io::NpyOrder::Fortran));
}

TEST(Npy, BothOrdersWriteNumpysOwnBytes) {
  // Re-saving a NumPy file in its own order gives NumPy's bytes exactly
  // (header, padding and data): the C-order file is what numpy.save writes.
  int checked = 0;
  for (const char* tag : {"b1", "i4", "i8", "f4", "f8", "c8", "c16"}) {
    for (const auto& [suffix, order] :
         {std::pair{"_c", io::NpyOrder::C}, std::pair{"_f", io::NpyOrder::Fortran}}) {
      const fs::path p = kFixtures / (std::string(tag) + suffix + ".npy");
      EXPECT_EQ(io::to_npy_bytes(io::load_npy(p), order), file_bytes(p)) << p.filename();
      ++checked;
    }
  }
  for (const char* file : {"f8_scalar.npy", "f8_empty.npy", "f8_vector.npy"}) {
    const fs::path p = kFixtures / file;
    EXPECT_EQ(io::to_npy_bytes(io::load_npy(p), io::NpyOrder::C), file_bytes(p)) << file;
    ++checked;
  }
  EXPECT_EQ(checked, 7 * 2 + 3);
}

TEST(Npz, COrderMembersRoundTrip) {
  const std::map<std::string, Tensor> arrays = {
      {"x", Tensor::from_col_major<double>({2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6})},
      {"n", Tensor::scalar(std::int64_t{-7})}};
  for (bool compressed : {false, true}) {
    const fs::path p = temp_path(compressed ? "corder_c.npz" : "corder_s.npz");
    io::save_npz(p, arrays, compressed, io::NpyOrder::C);
    const auto back = io::load_npz(p);
    ASSERT_EQ(back.size(), 2u);
    for (const auto& [key, t] : arrays) EXPECT_TRUE(same(back.at(key), t)) << key;
    const std::vector<std::byte> bytes = io::to_npz_bytes(arrays, compressed, io::NpyOrder::C);
    EXPECT_EQ(file_bytes(p), bytes);
    fs::remove(p);
    if (!compressed) {  // stored members show their headers
      const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      EXPECT_NE(text.find("'fortran_order': False, 'shape': (2, 3)"), std::string::npos);
      EXPECT_EQ(text.find("'fortran_order': True"), std::string::npos);
    }
  }
}
