#pragma once
// NumPy .npy and .npz files: save and load tensors of every dtype.
//
// Layout. A NumPy array of shape (d0, ..., dk) loads as a tensor of shape
// [d0, ..., dk] with the same element at the same index (i0, ..., ik), so
// load_npy("a.npy").item at (i, j) is a[i, j] in Python. A Fortran-order
// file is our column-major layout already (no copy beyond the read); a
// C-order file is transposed into column-major storage while loading.
// save_npy writes `fortran_order: True` with the tensor's own shape, so
// numpy.load gives an array with the same shape and the same element at every
// index, and load_npy(save_npy(x)) == x (dtype, shape and values).
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
// be opened, read or written is InvalidArgument naming the path.
//
// .npz files are zip archives of .npy members named "<key>.npy"
// (numpy.savez and numpy.savez_compressed): stored and deflate-compressed
// members are read, and save_npz writes either.

#include <cstddef>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "tenferro/tensor/tensor.hpp"

namespace tenferro::io {

/// The bytes of a .npy file holding x (format 1.0, Fortran order).
std::vector<std::byte> to_npy_bytes(const Tensor& x);
/// Parses the bytes of a .npy file; `what` names the source in errors.
Tensor from_npy_bytes(std::span<const std::byte> bytes, const std::string& what = "npy data");

/// Writes x to `path` as .npy.
void save_npy(const std::filesystem::path& path, const Tensor& x);
/// Reads a .npy file.
Tensor load_npy(const std::filesystem::path& path);

/// Writes `arrays` as the members "<key>.npy" of a .npz archive (keys are
/// non-empty and contain no '/'), deflate-compressed when `compressed`
/// (numpy.savez_compressed) and stored otherwise (numpy.savez).
void save_npz(const std::filesystem::path& path, const std::map<std::string, Tensor>& arrays,
              bool compressed = false);
/// Reads every member of a .npz archive; keys drop the ".npy" suffix.
std::map<std::string, Tensor> load_npz(const std::filesystem::path& path);

/// The bytes of the .npz archive save_npz writes (same checks), for archives
/// kept in memory or sent elsewhere than a file.
std::vector<std::byte> to_npz_bytes(const std::map<std::string, Tensor>& arrays,
                                    bool compressed = false);
/// Parses the bytes of a .npz archive (what load_npz reads from a file), with
/// the same errors; `what` names the source in them.
std::map<std::string, Tensor> from_npz_bytes(std::span<const std::byte> bytes,
                                             const std::string& what = "npz data");

}  // namespace tenferro::io
