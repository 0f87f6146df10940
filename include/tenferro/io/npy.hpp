#pragma once
// NumPy .npy and .npz files: save and load tensors of every dtype.
//
// Layout. A NumPy array of shape (d0, ..., dk) loads as a tensor of shape
// [d0, ..., dk] with the same element at the same index (i0, ..., ik), so
// load_npy("a.npy").item at (i, j) is a[i, j] in Python. A Fortran-order
// file is our column-major layout already (no copy beyond the read); a
// C-order file is transposed into column-major storage while loading.
// save_npy writes `fortran_order: True` with the tensor's own shape by
// default (NpyOrder::Fortran, no transpose), or `fortran_order: False` with
// the data in row-major order (NpyOrder::C, one transposing copy, for readers
// that expect NumPy's default layout such as torch.from_numpy(...).view(-1)).
// Either way numpy.load gives an array with the same shape and the same
// element at every index, and load_npy(save_npy(x)) == x (dtype, shape and
// values).
//
// Note the difference with the zero-copy PyTorch mapping of docs/operators.md
// (same memory, reversed shape): files keep NumPy's shape and indices.
//
// dtypes: bool ('|b1'), i32 ('<i4'), i64 ('<i8'), f32 ('<f4'), f64 ('<f8'),
// c64 ('<c8'), c128 ('<c16'); little- and big-endian ('>' is byte-swapped on
// load), format versions 1.0, 2.0 and 3.0. Other dtypes (float16, unsigned
// and 8/16-bit integers, strings, structured or object arrays) are
// Unsupported. A bad file (wrong magic, malformed header, truncated data,
// size that does not match the shape) is InvalidArgument; a file that cannot
// be opened, read or written is InvalidArgument naming the path and the
// system's reason.
//
// Saves replace a regular file atomically: the bytes go to a temporary file
// in the target's folder, every write, the flush to disk and the close are
// checked, and the temporary file is renamed over the target. A failed save
// (disk full, file-size limit, no write access to the folder) raises
// InvalidArgument, removes the temporary file and leaves an existing file as
// it was. A target that exists and is not a regular file (a device such as
// /dev/null, a pipe) is written in place, every write checked.
//
// .npz files are zip archives of .npy members named "<key>.npy"
// (numpy.savez and numpy.savez_compressed): stored and deflate-compressed
// members are read, and save_npz writes either. Loading checks the whole
// central directory before inflating anything: members whose bytes overlap
// or whose names repeat are InvalidArgument (a damaged or crafted archive),
// and members adding up to more than NpzLoadOptions::max_total_bytes are
// OutOfMemory. A failed allocation is OutOfMemory too, never std::bad_alloc.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "tenferro/tensor/tensor.hpp"

namespace tenferro::io {

/// How a saved .npy file lays out its data. Both orders hold the same NumPy
/// array (same shape, same element at every index); they differ in memory.
enum class NpyOrder {
  /// `fortran_order: True`: our column-major data as they are (no copy).
  /// NumPy reads it as an F-contiguous array.
  Fortran,
  /// `fortran_order: False`: the data transposed to row-major (one copy), so
  /// NumPy reads a C-contiguous array, as torch.from_numpy(...).view(-1) and
  /// other C-order readers require.
  C,
};

/// The total a loaded .npz archive's members may hold by default: 4 GiB.
inline constexpr std::uint64_t kNpzDefaultMaxTotalBytes = std::uint64_t{4} << 30;

/// Options of load_npz and from_npz_bytes.
struct NpzLoadOptions {
  /// The most bytes all members together may hold once inflated (the sizes
  /// of the .npy members inside, headers included, as the central directory
  /// records them). An archive above it is refused with OutOfMemory before
  /// anything is inflated; raise it for a trusted archive that is larger.
  std::uint64_t max_total_bytes = kNpzDefaultMaxTotalBytes;
};

/// The bytes of a .npy file holding x (format 1.0, in the given order).
std::vector<std::byte> to_npy_bytes(const Tensor& x, NpyOrder order = NpyOrder::Fortran);
/// Parses the bytes of a .npy file; `what` names the source in errors.
Tensor from_npy_bytes(std::span<const std::byte> bytes, const std::string& what = "npy data");

/// Writes x to `path` as .npy, replacing an existing file atomically.
void save_npy(const std::filesystem::path& path, const Tensor& x,
              NpyOrder order = NpyOrder::Fortran);
/// Reads a .npy file.
Tensor load_npy(const std::filesystem::path& path);

/// Writes `arrays` as the members "<key>.npy" of a .npz archive (keys are
/// non-empty and contain no '/'), deflate-compressed when `compressed`
/// (numpy.savez_compressed) and stored otherwise (numpy.savez); each member
/// in `order`. Replaces an existing file atomically, as save_npy does.
void save_npz(const std::filesystem::path& path, const std::map<std::string, Tensor>& arrays,
              bool compressed = false, NpyOrder order = NpyOrder::Fortran);
/// Reads every member of a .npz archive; keys drop the ".npy" suffix.
std::map<std::string, Tensor> load_npz(const std::filesystem::path& path,
                                       const NpzLoadOptions& options = {});

/// The bytes of the .npz archive save_npz writes (same checks), for archives
/// kept in memory or sent elsewhere than a file.
std::vector<std::byte> to_npz_bytes(const std::map<std::string, Tensor>& arrays,
                                    bool compressed = false, NpyOrder order = NpyOrder::Fortran);
/// Parses the bytes of a .npz archive (what load_npz reads from a file), with
/// the same errors; `what` names the source in them.
std::map<std::string, Tensor> from_npz_bytes(std::span<const std::byte> bytes,
                                             const std::string& what = "npz data",
                                             const NpzLoadOptions& options = {});

}  // namespace tenferro::io
