#pragma once
// Private: whole-file reads and checked, atomic whole-file writes for the
// .npy and .npz functions. Errors are InvalidArgument naming the path and the
// system's reason (OutOfMemory when a buffer cannot be allocated).

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace tenferro::io::file {

/// "'path'", as error messages name a file.
std::string quoted(const std::filesystem::path& path);

/// The bytes of the regular file `path`; `op` names the operation in errors.
std::vector<std::byte> read(const std::filesystem::path& path, const char* op);

/// Writes `bytes` as the whole content of `path`. A regular file (or a new
/// one) is replaced atomically: a temporary file in the same folder receives
/// the bytes, is flushed to disk and closed, every step checked, and is
/// renamed over `path` (following a symbolic link to its target; an existing
/// file keeps its permission bits). On any failure the temporary file is
/// removed, `path` is left as it was, and an error is raised. An existing
/// target that is not a regular file (a device, a pipe) is written in place.
void write(const std::filesystem::path& path, std::span<const std::byte> bytes, const char* op);

}  // namespace tenferro::io::file
