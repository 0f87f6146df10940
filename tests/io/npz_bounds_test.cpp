// .npz loading is bounded: archives crafted in memory (several central
// records for one member, repeated names, sizes above the configured limit,
// garbage claiming a large size) give typed errors before or instead of large
// allocations, and an allocation that fails is OutOfMemory, never
// std::bad_alloc. Every archive here is a few KiB to a few MiB.

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tenferro/io/npy.hpp"
#include "test_util.hpp"

using namespace tenferro;

namespace {

// One local record of an archive: the fields a central record repeats.
struct Local {
  std::string name;
  std::uint16_t method = 0;
  std::uint32_t crc = 0;
  std::uint32_t size = 0;  // uncompressed
  std::vector<std::byte> data;
};

// A central record naming local record `local` (by index), under `name`,
// claiming `size` uncompressed bytes (the local's own when unset).
struct Central {
  Central(std::size_t local_index, std::string member_name,
          std::optional<std::uint32_t> claimed = std::nullopt)
      : local(local_index), name(std::move(member_name)), size(claimed) {}
  std::size_t local;
  std::string name;
  std::optional<std::uint32_t> size;
};

void put(std::vector<std::byte>& out, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
}
void put(std::vector<std::byte>& out, const std::string& s) {
  for (char c : s) out.push_back(static_cast<std::byte>(c));
}
std::uint64_t get(const std::vector<std::byte>& b, std::size_t at, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint64_t>(b[at + i]);
  return v;
}

std::vector<std::byte> make_zip(const std::vector<Local>& locals,
                                const std::vector<Central>& centrals) {
  std::vector<std::byte> out, cd;
  std::vector<std::uint64_t> offsets;
  for (const Local& l : locals) {
    offsets.push_back(out.size());
    put(out, 0x04034b50, 4);
    put(out, 20, 2);
    put(out, 0, 2);
    put(out, l.method, 2);
    put(out, 0, 4);  // time, date
    put(out, l.crc, 4);
    put(out, l.data.size(), 4);
    put(out, l.size, 4);
    put(out, l.name.size(), 2);
    put(out, 0, 2);
    put(out, l.name);
    out.insert(out.end(), l.data.begin(), l.data.end());
  }
  for (const Central& c : centrals) {
    const Local& l = locals.at(c.local);
    put(cd, 0x02014b50, 4);
    put(cd, 20, 2);
    put(cd, 20, 2);
    put(cd, 0, 2);
    put(cd, l.method, 2);
    put(cd, 0, 4);
    put(cd, l.crc, 4);
    put(cd, l.data.size(), 4);
    put(cd, c.size.value_or(l.size), 4);
    put(cd, c.name.size(), 2);
    put(cd, 0, 6);  // extra, comment, disk
    put(cd, 0, 6);  // attributes
    put(cd, offsets[c.local], 4);
    put(cd, c.name);
  }
  const std::uint64_t cd_at = out.size();
  out.insert(out.end(), cd.begin(), cd.end());
  put(out, 0x06054b50, 4);
  put(out, 0, 4);
  put(out, centrals.size(), 2);
  put(out, centrals.size(), 2);
  put(out, cd.size(), 4);
  put(out, cd_at, 4);
  put(out, 0, 2);
  return out;
}

// The first member of an archive save_npz wrote, as a Local record.
Local member_of(const Tensor& t, bool compressed, const std::string& name = "a.npy") {
  const std::vector<std::byte> z = io::to_npz_bytes({{"a", t}}, compressed);
  Local l{name,
          static_cast<std::uint16_t>(get(z, 8, 2)),
          static_cast<std::uint32_t>(get(z, 14, 4)),
          static_cast<std::uint32_t>(get(z, 22, 4)),
          {}};
  const std::size_t data_at = 30 + get(z, 26, 2) + get(z, 28, 2);
  l.data.assign(z.begin() + data_at, z.begin() + data_at + get(z, 18, 4));
  return l;
}

// Garbage presented as a deflated member claiming `size` bytes.
Local garbage_member(std::size_t compressed_bytes, std::uint32_t size) {
  Local l{"g.npy", 8, 0, size, std::vector<std::byte>(compressed_bytes)};
  std::uint32_t s = 12345;
  for (auto& b : l.data) b = static_cast<std::byte>((s = s * 1103515245u + 12345u) >> 24);
  l.data[0] = std::byte{0xFF};  // BTYPE 3: an invalid deflate block at once
  return l;
}

std::optional<Error> error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

bool mentions(const std::optional<Error>& e, const std::string& text) {
  return e && std::string(e->what()).find(text) != std::string::npos;
}

}  // namespace

TEST(NpzBounds, SeveralRecordsForOneMemberAreRefused) {
  // 32 KiB of zeros deflate to ~60 bytes; 2 and 64 central records naming
  // that one member, and the same with a stored member.
  for (bool compressed : {true, false}) {
    const Local m = member_of(zeros({64, 64}, DType::F64), compressed);
    for (std::size_t copies : {2, 64}) {
      std::vector<Central> cds;
      for (std::size_t i = 0; i < copies; ++i) cds.push_back({0, "m" + std::to_string(i) + ".npy"});
      const std::vector<std::byte> z = make_zip({m}, cds);
      const auto e = error_of([&] { io::from_npz_bytes(z, "crafted"); });
      ASSERT_TRUE(e) << copies << " records must be refused";
      EXPECT_EQ(e->kind(), ErrorKind::InvalidArgument) << e->what();
      EXPECT_TRUE(mentions(e, "share bytes")) << e->what();
    }
    // The one record alone loads.
    const auto one = io::from_npz_bytes(make_zip({m}, {{0, "m.npy"}}));
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one.at("m").shape(), (Shape{64, 64}));
  }
}

TEST(NpzBounds, RepeatedNamesAreRefused) {
  const Local a = member_of(zeros({3}, DType::F64), false, "a.npy");
  Local b = member_of(ones({2}, DType::I32), false, "a.npy");
  // Two separate members with one name.
  auto e = error_of([&] { io::from_npz_bytes(make_zip({a, b}, {{0, "a.npy"}, {1, "a.npy"}})); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), ErrorKind::InvalidArgument) << e->what();
  EXPECT_TRUE(mentions(e, "two members named 'a.npy'")) << e->what();
  // "a" and "a.npy" load as the same key.
  b.name = "a";
  e = error_of([&] { io::from_npz_bytes(make_zip({a, b}, {{0, "a.npy"}, {1, "a"}})); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), ErrorKind::InvalidArgument) << e->what();
  EXPECT_TRUE(mentions(e, "key 'a'")) << e->what();
  // Distinct names load.
  b.name = "b.npy";
  EXPECT_EQ(io::from_npz_bytes(make_zip({a, b}, {{0, "a.npy"}, {1, "b.npy"}})).size(), 2u);
}

TEST(NpzBounds, TotalAboveTheLimitIsOutOfMemory) {
  EXPECT_EQ(io::kNpzDefaultMaxTotalBytes, std::uint64_t{4} << 30);
  EXPECT_EQ(io::NpzLoadOptions{}.max_total_bytes, io::kNpzDefaultMaxTotalBytes);
  // Two members of 128 + 8000 bytes each: under a limit of 10000 one at a
  // time, above it together.
  const std::map<std::string, Tensor> arrays = {{"a", zeros({1000}, DType::F64)},
                                                {"b", ones({1000}, DType::F64)}};
  for (bool compressed : {false, true}) {
    const std::vector<std::byte> z = io::to_npz_bytes(arrays, compressed);
    const auto e = error_of([&] { io::from_npz_bytes(z, "two", io::NpzLoadOptions{10000}); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->kind(), ErrorKind::OutOfMemory) << e->what();
    EXPECT_TRUE(mentions(e, "16256 bytes")) << e->what();
    EXPECT_TRUE(mentions(e, "max_total_bytes")) << e->what();
    EXPECT_EQ(io::from_npz_bytes(z, "two", io::NpzLoadOptions{16256}).size(), 2u);
    EXPECT_EQ(io::from_npz_bytes(z).size(), 2u);
  }
  // Through a file.
  const auto p = std::filesystem::temp_directory_path() /
                 ("tenferro_npz_bounds_" + std::to_string(::getpid()) + ".npz");
  io::save_npz(p, arrays, true);
  EXPECT_TF_ERROR(io::load_npz(p, {100}), ErrorKind::OutOfMemory);
  EXPECT_EQ(io::load_npz(p).size(), 2u);
  std::filesystem::remove(p);
}

TEST(NpzBounds, HugeClaimsAreRefusedOrFailCheaply) {
  // 64 KiB of garbage claiming 60 MiB (a ratio deflate can reach): above a
  // 1 MiB limit it is refused before anything is allocated; under the default
  // limit the stream fails at its first block, a damaged archive.
  const Local g = garbage_member(64 << 10, 60u << 20);
  const std::vector<std::byte> z = make_zip({g}, {{0, g.name}});
  auto e = error_of([&] { io::from_npz_bytes(z, "garbage", io::NpzLoadOptions{1 << 20}); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), ErrorKind::OutOfMemory) << e->what();
  e = error_of([&] { io::from_npz_bytes(z, "garbage"); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), ErrorKind::InvalidArgument) << e->what();
  EXPECT_TRUE(mentions(e, "does not inflate")) << e->what();
  // A claim beyond deflate's 1032:1 is damaged, whatever the limit.
  const Local far = garbage_member(1024, 4000u << 20);
  e = error_of([&] {
    io::from_npz_bytes(make_zip({far}, {{0, far.name}}), "far", io::NpzLoadOptions{~0ull});
  });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), ErrorKind::InvalidArgument) << e->what();
  // A real member whose record claims more than it inflates to.
  const Local m = member_of(zeros({64, 64}, DType::F64), true);
  EXPECT_TF_ERROR(io::from_npz_bytes(make_zip({m}, {{0, m.name, m.size + 64}})),
                  ErrorKind::InvalidArgument);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TENFERRO_NO_ADDRESS_LIMIT 1  // the sanitizers reserve terabytes of shadow memory
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define TENFERRO_NO_ADDRESS_LIMIT 1
#endif
#endif

TEST(NpzBounds, FailedAllocationIsOutOfMemory) {
#ifdef TENFERRO_NO_ADDRESS_LIMIT
  GTEST_SKIP() << "an address-space limit cannot be set under a sanitizer";
#else
  // 1.1 MB of garbage claiming 1 GiB, under an address-space limit 256 MiB
  // above what the process maps now: the inflate buffer cannot be had. In a
  // child process, so the limit never touches this one.
  const Local g = garbage_member(1100000, 1u << 30);
  const std::vector<std::byte> z = make_zip({g}, {{0, g.name}});
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    long pages = 0;
    if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
      std::fclose(f);
    }
    if (pages <= 0) ::_exit(10);
    const rlim_t limit = static_cast<rlim_t>(pages) * ::sysconf(_SC_PAGESIZE) + (256u << 20);
    const rlimit lim{limit, limit};
    if (::setrlimit(RLIMIT_AS, &lim) != 0) ::_exit(11);
    try {
      io::from_npz_bytes(z, "big", io::NpzLoadOptions{2ull << 30});
      ::_exit(3);
    } catch (const Error& e) {
      ::_exit(e.kind() == ErrorKind::OutOfMemory ? 0 : 1);
    } catch (const std::bad_alloc&) {
      ::_exit(2);
    } catch (...) {
      ::_exit(4);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died: status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "1: another error kind, 2: std::bad_alloc escaped, 3: no error, 10/11: setup";
#endif
}
