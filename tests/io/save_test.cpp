// Saves either succeed completely or raise a typed error: a full device, a
// file-size limit (RLIMIT_FSIZE) and a folder that cannot be written are
// errors, a failed save leaves the file it was replacing intact and no
// temporary file behind, and a successful one keeps the target's permission
// bits and symbolic links.

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tenferro/io/npy.hpp"
#include "test_util.hpp"

using namespace tenferro;
namespace fs = std::filesystem;

namespace {

// A fresh, empty folder for one test, removed afterwards.
class Scratch {
 public:
  explicit Scratch(const std::string& name)
      : dir_(fs::temp_directory_path() /
             ("tenferro_save_test_" + std::to_string(::getpid()) + "_" + name)) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~Scratch() {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }
  fs::path operator/(const std::string& file) const { return dir_ / file; }
  const fs::path& dir() const { return dir_; }
  // The names in the folder (a temporary file left behind shows here).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  fs::path dir_;
};

// RLIMIT_FSIZE lowered to `bytes` with SIGXFSZ ignored (so an oversized write
// fails with EFBIG instead of killing the process), both restored on exit.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    ::getrlimit(RLIMIT_FSIZE, &old_);
    rlimit lowered = old_;
    lowered.rlim_cur = bytes;
    ok_ = ::setrlimit(RLIMIT_FSIZE, &lowered) == 0;
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    std::signal(SIGXFSZ, old_handler_);
  }
  bool ok() const { return ok_; }

 private:
  rlimit old_{};
  void (*old_handler_)(int) = nullptr;
  bool ok_ = false;
};

std::vector<std::byte> file_bytes(const fs::path& p) {
  std::vector<std::byte> out;
  if (std::FILE* f = std::fopen(p.c_str(), "rb")) {
    int c;
    while ((c = std::fgetc(f)) != EOF) out.push_back(static_cast<std::byte>(c));
    std::fclose(f);
  }
  return out;
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

TEST(Save, FullDeviceIsAnError) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  // A device is written in place, every write checked.
  auto e = error_of([] { io::save_npy("/dev/full", zeros({4}, DType::F64)); });
  ASSERT_TRUE(e) << "save_npy to /dev/full returned normally";
  EXPECT_EQ(e->kind(), ErrorKind::InvalidArgument) << e->what();
  EXPECT_TRUE(mentions(e, "No space left on device")) << e->what();
  EXPECT_TRUE(mentions(e, "'/dev/full'")) << e->what();
  e = error_of([] { io::save_npz("/dev/full", {{"a", zeros({4})}}, true); });
  ASSERT_TRUE(e) << "save_npz to /dev/full returned normally";
  EXPECT_EQ(e->kind(), ErrorKind::InvalidArgument) << e->what();
  // Other devices still work.
  io::save_npy("/dev/null", zeros({4}, DType::F64));
}

TEST(Save, FileSizeLimitIsAnErrorAndLeavesNoFile) {
  Scratch dir("fsize");
  const Tensor x = zeros({40}, DType::F64);  // 128 header + 320 data = 448 bytes
  ASSERT_EQ(io::to_npy_bytes(x).size(), 448u);
  std::optional<Error> e, ez;
  {
    FileSizeLimit limit(100);
    ASSERT_TRUE(limit.ok());
    e = error_of([&] { io::save_npy(dir / "x.npy", x); });
    ez = error_of([&] { io::save_npz(dir / "x.npz", {{"x", x}}); });
  }
  ASSERT_TRUE(e) << "a 448-byte save under a 100-byte limit returned normally";
  EXPECT_EQ(e->kind(), ErrorKind::InvalidArgument) << e->what();
  EXPECT_TRUE(mentions(e, "File too large")) << e->what();
  EXPECT_TRUE(mentions(e, "after 100 of 448 bytes")) << e->what();
  EXPECT_TRUE(mentions(e, "no file was created")) << e->what();
  ASSERT_TRUE(ez);
  EXPECT_EQ(ez->kind(), ErrorKind::InvalidArgument) << ez->what();
  EXPECT_TRUE(dir.names().empty()) << dir.names().front();  // nor a temporary file
  // Without the limit the same saves succeed.
  io::save_npy(dir / "x.npy", x);
  EXPECT_EQ(fs::file_size(dir / "x.npy"), 448u);
}

TEST(Save, FailedSaveKeepsTheOldFile) {
  Scratch dir("keep");
  const Tensor good = Tensor::from_col_major<double>({2, 2}, std::vector<double>{1, 2, 3, 4});
  const Tensor big = ones({100, 10}, DType::F64);  // 8128 bytes
  io::save_npy(dir / "w.npy", good);
  io::save_npz(dir / "w.npz", {{"w", good}});
  const std::vector<std::byte> npy = file_bytes(dir / "w.npy"), npz = file_bytes(dir / "w.npz");
  std::optional<Error> e, ez;
  {
    FileSizeLimit limit(4096);
    ASSERT_TRUE(limit.ok());
    e = error_of([&] { io::save_npy(dir / "w.npy", big); });
    ez = error_of([&] { io::save_npz(dir / "w.npz", {{"w", big}}); });
  }
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), ErrorKind::InvalidArgument) << e->what();
  EXPECT_TRUE(mentions(e, "the existing file is unchanged")) << e->what();
  ASSERT_TRUE(ez);
  EXPECT_EQ(ez->kind(), ErrorKind::InvalidArgument) << ez->what();
  EXPECT_EQ(file_bytes(dir / "w.npy"), npy);
  EXPECT_EQ(file_bytes(dir / "w.npz"), npz);
  EXPECT_EQ(io::load_npy(dir / "w.npy").to_vector<double>(), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"w.npy", "w.npz"}));
  // A later save replaces it.
  io::save_npy(dir / "w.npy", big);
  EXPECT_EQ(io::load_npy(dir / "w.npy").shape(), (Shape{100, 10}));
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"w.npy", "w.npz"}));
}

TEST(Save, FolderThatCannotHoldAFileIsAnError) {
  // /proc takes no new files, even for root.
  auto e = error_of([] { io::save_npy("/proc/tenferro_save_test.npy", zeros({1})); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind(), ErrorKind::InvalidArgument) << e->what();
  EXPECT_TRUE(mentions(e, "temporary file")) << e->what();
  e = error_of([] { io::save_npy("/no_such_folder_tenferro/x.npy", zeros({1})); });
  ASSERT_TRUE(e);
  EXPECT_TRUE(mentions(e, "check that the folder exists")) << e->what();
  EXPECT_TF_ERROR(io::save_npy(fs::temp_directory_path(), zeros({1})),
                  ErrorKind::InvalidArgument);  // a directory
  // A folder without write permission (root ignores permissions).
  if (::geteuid() != 0) {
    Scratch dir("readonly");
    io::save_npy(dir / "r.npy", zeros({1}));
    fs::permissions(dir.dir(), fs::perms::owner_read | fs::perms::owner_exec);
    e = error_of([&] { io::save_npy(dir / "r.npy", ones({1})); });
    fs::permissions(dir.dir(), fs::perms::owner_all);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->kind(), ErrorKind::InvalidArgument) << e->what();
    EXPECT_TRUE(mentions(e, "Permission denied")) << e->what();
    EXPECT_EQ(io::load_npy(dir / "r.npy").item<double>(), 0.0);
    // A write-protected file in a writable folder is not replaced either.
    fs::permissions(dir / "r.npy", fs::perms::owner_read);
    EXPECT_TF_ERROR(io::save_npy(dir / "r.npy", ones({1})), ErrorKind::InvalidArgument);
    EXPECT_EQ(io::load_npy(dir / "r.npy").item<double>(), 0.0);
  }
}

TEST(Save, ReplacingKeepsPermissionsAndLinks) {
  Scratch dir("replace");
  const fs::path p = dir / "a.npy";
  io::save_npy(p, zeros({3}));
  fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  io::save_npy(p, ones({3}));
  EXPECT_EQ(fs::status(p).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_EQ(io::load_npy(p).to_vector<double>(), (std::vector<double>{1, 1, 1}));
  // Saving through a link replaces the file it names; the link stays.
  fs::create_symlink("a.npy", dir / "link.npy");
  io::save_npy(dir / "link.npy", full({2}, Scalar(5.0)));
  EXPECT_TRUE(fs::is_symlink(dir / "link.npy"));
  EXPECT_EQ(io::load_npy(p).to_vector<double>(), (std::vector<double>{5, 5}));
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"a.npy", "link.npy"}));
  // A relative path in the working folder.
  const fs::path cwd = fs::current_path();
  fs::current_path(dir.dir());
  io::save_npy("rel.npy", zeros({2}));
  fs::current_path(cwd);
  EXPECT_EQ(io::load_npy(dir / "rel.npy").shape(), (Shape{2}));
}
