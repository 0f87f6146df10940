// Whole-file reads and checked, atomic whole-file writes (POSIX): a save that
// fails must say so and must not destroy the file it was replacing.

#include "io/file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <fstream>
#include <new>
#include <string>
#include <system_error>

#include "tenferro/core/error.hpp"

namespace tenferro::io::file {

namespace fs = std::filesystem;

// Appended piecewise: GCC 12 warns falsely on "'" + string.
std::string quoted(const fs::path& path) {
  std::string out = "'";
  out += path.string();
  out += '\'';
  return out;
}

namespace {

// The system's words for `err` and, for the usual causes, what to do.
std::string reason(int err) {
  std::string out = std::generic_category().message(err);
  switch (err) {
    case ENOSPC:
      return out + ": the disk is full; free space or save elsewhere";
    case EDQUOT:
      return out + ": the disk quota is used up; free space or save elsewhere";
    case EFBIG:
      return out +
             ": the file would exceed the process's file-size limit (ulimit -f) or the file "
             "system's largest file; raise the limit or save elsewhere";
    case EACCES:
    case EPERM:
      return out + ": check the access rights of the folder and the file";
    case EROFS:
      return out + ": the file system is read-only; save elsewhere";
    case ENOENT:
      return out + ": check that the folder exists";
    case EIO:
      return out + ": the device reported an I/O error; check the disk";
    default:
      return out;
  }
}

// Writes all of `bytes` to `fd`; 0, or the errno of the write that failed
// (`written` then counts what went out before it).
int write_all(int fd, std::span<const std::byte> bytes, std::size_t& written) {
  written = 0;
  while (written < bytes.size()) {
    const std::size_t chunk = std::min<std::size_t>(bytes.size() - written, std::size_t{1} << 30);
    const ssize_t n = ::write(fd, bytes.data() + written, chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    written += static_cast<std::size_t>(n);
  }
  return 0;
}

// `path` with symbolic links followed, so a save replaces the file a link
// names and keeps the link.
fs::path resolve_links(const fs::path& path, const char* op) {
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(p, ec)) return p;
    const fs::path to = fs::read_symlink(p, ec);
    if (ec) return p;
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  fail(ErrorKind::InvalidArgument, op, "cannot write ", quoted(path),
       ": too many levels of symbolic links; pass the path of a file");
}

// A device or a pipe: no temporary file can stand in for it.
void write_in_place(const fs::path& path, std::span<const std::byte> bytes, const char* op) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    fail(ErrorKind::InvalidArgument, op, "cannot open ", quoted(path),
         " for writing: ", reason(err));
  }
  std::size_t written = 0;
  int err = write_all(fd, bytes, written);
  if (::close(fd) != 0 && err == 0 && errno != EINTR) err = errno;
  if (err != 0) {
    fail(ErrorKind::InvalidArgument, op, "writing ", quoted(path), " failed after ", written,
         " of ", bytes.size(), " bytes: ", reason(err));
  }
}

void write_replacing(const fs::path& target, std::span<const std::byte> bytes, const char* op,
                     const struct stat* existing) {
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // A hidden name beside the target (kept short of NAME_MAX), unique in this
  // process by a counter and among processes by the pid.
  static std::atomic<std::uint64_t> counter{0};
  const std::string stem = target.filename().string().substr(0, 128);
  fs::path tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    tmp = dir / ("." + stem + ".tmp-" + std::to_string(::getpid()) + "-" +
                 std::to_string(counter.fetch_add(1)));
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && (errno != EEXIST || attempt == 100)) {
      const int err = errno;
      fail(ErrorKind::InvalidArgument, op, "cannot create a temporary file in ", quoted(dir),
           " to write ", quoted(target), ": ", reason(err),
           " (saves write beside the target and rename over it, so its folder must exist and "
           "be writable)");
    }
  }
  // The replacement keeps the permission bits of the file it replaces.
  if (existing != nullptr) (void)::fchmod(fd, existing->st_mode & 07777);
  const char* unchanged =
      existing != nullptr ? "; the existing file is unchanged" : "; no file was created";
  auto give_up = [&](const std::string& what_failed, int err) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    fail(ErrorKind::InvalidArgument, op, what_failed, ": ", reason(err), unchanged);
  };
  std::size_t written = 0;
  if (const int err = write_all(fd, bytes, written); err != 0) {
    give_up("writing " + quoted(target) + " failed after " + std::to_string(written) + " of " +
                std::to_string(bytes.size()) + " bytes",
            err);
  }
  // fsync reports write-back errors (NFS, quotas) and orders the data before
  // the rename; EINVAL: a file system without it.
  if (::fsync(fd) != 0 && errno != EINVAL) {
    const int err = errno;
    give_up("flushing " + quoted(target) + " to disk failed", err);
  }
  const int closed = ::close(fd);
  const int close_err = errno;
  fd = -1;
  if (closed != 0 && close_err != EINTR)
    give_up("closing " + quoted(target) + " failed", close_err);
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    give_up("renaming the temporary file over " + quoted(target) + " failed", err);
  }
}

}  // namespace

std::vector<std::byte> read(const fs::path& path, const char* op) {
  // A directory opens as a stream on Linux but has no size (tellg() is -1).
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    fail(ErrorKind::InvalidArgument, op, quoted(path), " is a directory; pass the path of a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    fail(ErrorKind::InvalidArgument, op, "cannot open ", quoted(path),
         " for reading; check that the file exists and is readable");
  }
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) {
    fail(ErrorKind::InvalidArgument, op, "cannot determine the size of ", quoted(path),
         "; pass a regular file");
  }
  in.seekg(0, std::ios::beg);
  std::vector<std::byte> bytes;
  try {
    bytes.resize(static_cast<std::size_t>(size));
  } catch (const std::bad_alloc&) {
    fail(ErrorKind::OutOfMemory, op, "could not allocate ", size, " bytes to read ", quoted(path),
         "; free memory first");
  }
  if (size > 0 && !in.read(reinterpret_cast<char*>(bytes.data()), size)) {
    fail(ErrorKind::InvalidArgument, op, "cannot read ", quoted(path));
  }
  return bytes;
}

void write(const fs::path& path, std::span<const std::byte> bytes, const char* op) {
  if (!path.has_filename()) {
    fail(ErrorKind::InvalidArgument, op, quoted(path), " names no file; pass the path of a file");
  }
  const fs::path target = resolve_links(path, op);
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0) {
    write_replacing(target, bytes, op, nullptr);
  } else if (S_ISREG(st.st_mode)) {
    // Renaming would replace a write-protected file that opening refuses.
    if (::access(target.c_str(), W_OK) != 0) {
      const int err = errno;
      fail(ErrorKind::InvalidArgument, op, "cannot write ", quoted(path), ": ", reason(err),
           "; the file was left as it was");
    }
    write_replacing(target, bytes, op, &st);
  } else if (S_ISDIR(st.st_mode)) {
    fail(ErrorKind::InvalidArgument, op, quoted(path), " is a directory; pass the path of a file");
  } else {
    write_in_place(target, bytes, op);
  }
}

}  // namespace tenferro::io::file
