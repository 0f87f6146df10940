#pragma once
// Tensor: a cheap shared handle to (dtype, shape, strides, offset, storage).
// Column-major: the leftmost dimension varies fastest. Owned tensors are compact
// column-major; views alias the storage and copy nothing. Copies are named
// (contiguous(), clone(), reshape_copy()) or the result of a computation.

#include <complex>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tenferro/core/dtype.hpp"
#include "tenferro/core/error.hpp"
#include "tenferro/core/scalar.hpp"
#include "tenferro/core/small_vector.hpp"
#include "tenferro/tensor/generator.hpp"
#include "tenferro/tensor/storage.hpp"

namespace tenferro {

/// Compact column-major strides of `shape` (stride[0] = 1).
Strides col_major_strides(std::span<const std::int64_t> shape);
/// Compact row-major strides of `shape` (last stride = 1).
Strides row_major_strides(std::span<const std::int64_t> shape);
/// The most elements a tensor (or view) may have: 2^59, so that every byte
/// count (elements x 16 bytes at most) and element offset fits in 64 bits.
inline constexpr std::int64_t kMaxElements = std::int64_t{1} << 59;
/// Product of extents (1 for rank 0), with checked arithmetic: a negative
/// extent, or a product of the non-zero extents above kMaxElements (however
/// they would overflow; an empty tensor's strides still multiply them), is
/// InvalidArgument naming `op` and the shape. Every shape a tensor or view
/// gets passes through here.
std::int64_t shape_numel(std::span<const std::int64_t> shape, const char* op = "shape");
/// a + b and a * b for sizes, extents and offsets: InvalidArgument naming
/// `op` when the result leaves the int64 range.
std::int64_t checked_add(std::int64_t a, std::int64_t b, const char* op);
std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* op);
/// NumPy broadcasting (right-aligned). Throws ShapeMismatch naming `op`.
Shape broadcast_shapes(std::span<const std::int64_t> a, std::span<const std::int64_t> b,
                       const char* op = "broadcast");
/// Maps a possibly negative axis into [0, rank). Throws AxisOutOfBounds naming `op`.
std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank, const char* op);
std::string shape_to_string(std::span<const std::int64_t> shape);

class Tensor {
 public:
  /// An undefined tensor (defined() == false). Most operations reject it.
  Tensor() noexcept {}  // user-provided: Tensor() does not zero the inline shape buffers

  // ---- construction -------------------------------------------------------
  /// Copies `data`, given in column-major order, into a new owned tensor.
  template <class T>
  static Tensor from_col_major(std::span<const std::int64_t> shape, std::span<const T> data) {
    return from_col_major_bytes(shape, dtype_of_v<T>, data.data(), data.size());
  }
  template <class T>
  static Tensor from_col_major(std::initializer_list<std::int64_t> shape,
                               const std::vector<T>& data) {
    return from_col_major_bytes({shape.begin(), shape.size()}, dtype_of_v<T>, data.data(),
                                data.size());
  }
  template <class T>
  static Tensor from_col_major(const Shape& shape, const std::vector<T>& data) {
    return from_col_major_bytes(shape, dtype_of_v<T>, data.data(), data.size());
  }
  /// Copies `data`, given in row-major (C) order, into a new column-major tensor.
  template <class T>
  static Tensor from_row_major(std::span<const std::int64_t> shape, std::span<const T> data) {
    return from_row_major_bytes(shape, dtype_of_v<T>, data.data(), data.size());
  }
  template <class T>
  static Tensor from_row_major(std::initializer_list<std::int64_t> shape,
                               const std::vector<T>& data) {
    return from_row_major_bytes({shape.begin(), shape.size()}, dtype_of_v<T>, data.data(),
                                data.size());
  }
  template <class T>
  static Tensor from_row_major(const Shape& shape, const std::vector<T>& data) {
    return from_row_major_bytes(shape, dtype_of_v<T>, data.data(), data.size());
  }
  /// A rank-0 tensor holding `value`.
  static Tensor scalar(Scalar value);
  static Tensor scalar(Scalar value, DType dtype);

  /// Wraps external memory without copying. `strides` empty means compact
  /// column-major. `keepalive` is held while any view of the tensor lives.
  /// Throws InvalidArgument when the element range is not inside `nbytes`
  /// (pass nbytes = 0 to skip the check).
  static Tensor wrap(void* data, DType dtype, std::span<const std::int64_t> shape,
                     std::span<const std::int64_t> strides = {},
                     std::shared_ptr<void> keepalive = nullptr, Placement placement = {},
                     std::size_t nbytes = 0);
  template <class T>
  static Tensor wrap(T* data, std::span<const std::int64_t> shape,
                     std::span<const std::int64_t> strides = {},
                     std::shared_ptr<void> keepalive = nullptr) {
    return wrap(static_cast<void*>(data), dtype_of_v<T>, shape, strides, std::move(keepalive));
  }
  /// For backend authors: a tensor over `storage` with the given layout.
  static Tensor from_storage(std::shared_ptr<Storage> storage, DType dtype, Shape shape,
                             Strides strides, std::int64_t offset);

  // ---- metadata -----------------------------------------------------------
  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  const Strides& strides() const { return strides_; }
  /// Offset of element (0, ..., 0) in elements of dtype() from the storage start.
  std::int64_t offset() const { return offset_; }
  std::int64_t rank() const { return static_cast<std::int64_t>(shape_.size()); }
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (const std::int64_t e : shape_) n *= e;
    return n;
  }
  /// Extent of `axis` (negative counts from the end).
  std::int64_t dim(std::int64_t axis) const;
  Placement placement() const { return storage_ ? storage_->placement() : Placement{}; }
  /// Compact column-major: the layout of an owned tensor.
  bool is_contiguous() const {
    std::int64_t acc = 1;
    for (std::size_t d = 0; d < shape_.size(); ++d) {
      if (shape_[d] == 0) return true;
      if (shape_[d] != 1 && strides_[d] != acc) return false;
      acc *= shape_[d];
    }
    return true;
  }
  /// True when this handle is the only one referring to its storage.
  bool is_unique() const { return storage_ && storage_.use_count() == 1; }
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  // ---- host element access (checks placement and dtype) -----------------
  template <class T>
  const T* data() const {
    return static_cast<const T*>(typed_ptr(dtype_of_v<T>, false));
  }
  /// Write access: refused (RuntimeState) unless this handle owns the storage alone.
  template <class T>
  T* mutable_data() {
    return static_cast<T*>(const_cast<void*>(typed_ptr(dtype_of_v<T>, true)));
  }
  /// The elements as a span; the tensor must be compact column-major.
  template <class T>
  std::span<const T> span() const {
    require_contiguous("span");
    return {data<T>(), static_cast<std::size_t>(numel())};
  }
  /// Copies the elements in column-major order (any layout).
  template <class T>
  std::vector<T> to_vector() const {
    if constexpr (std::is_same_v<T, bool>) {
      // std::vector<bool> is packed: go through one byte per element.
      std::vector<unsigned char> bytes(static_cast<std::size_t>(numel()));
      copy_to_host(DType::Bool, bytes.data());
      return std::vector<bool>(bytes.begin(), bytes.end());
    } else {
      std::vector<T> out(static_cast<std::size_t>(numel()));
      copy_to_host(dtype_of_v<T>, out.data());
      return out;
    }
  }
  /// The value of a one-element tensor.
  Scalar item() const;
  /// The value of a one-element tensor as T (bool, an integer, a floating
  /// type or std::complex<float|double>): double loss = t.item<double>().
  /// Reading a complex tensor as a real type is DTypeMismatch (take real() or
  /// abs() first); other conversions are C++'s.
  template <class T>
  T item() const {
    const Scalar s = item();
    if constexpr (std::is_arithmetic_v<T>) {
      if (is_complex(s.dtype())) {
        fail(ErrorKind::DTypeMismatch, "item", "the tensor is ", name(s.dtype()),
             "; read it as std::complex, or take real() or abs() first");
      }
    }
    return s.template to<T>();
  }

  /// For backend authors: byte address of element (0, ..., 0); no checks.
  void* raw_data() const;

  // ---- views (no copy) ----------------------------------------------------
  Tensor permute(std::span<const std::int64_t> perm) const;
  Tensor permute(std::initializer_list<std::int64_t> perm) const {
    return permute(std::span<const std::int64_t>(perm.begin(), perm.size()));
  }
  /// Swaps two axes (default: the two of a matrix).
  Tensor transpose(std::int64_t a = 0, std::int64_t b = 1) const;
  /// Python-style slice of one axis; start/stop are clamped, negative values
  /// count from the end, step may be negative (default start/stop then run
  /// from the end backwards). step == 0 is InvalidArgument.
  Tensor slice(std::int64_t axis, std::optional<std::int64_t> start,
               std::optional<std::int64_t> stop, std::int64_t step = 1) const;
  /// Fixes `axis` at `index`, removing the axis.
  Tensor select(std::int64_t axis, std::int64_t index) const;
  /// A view with a new shape (one extent may be -1). Throws InvalidArgument
  /// when the layout cannot be viewed that way: use reshape_copy() then.
  Tensor reshape(std::span<const std::int64_t> shape) const;
  Tensor reshape(std::initializer_list<std::int64_t> shape) const {
    return reshape(std::span<const std::int64_t>(shape.begin(), shape.size()));
  }
  /// reshape() when possible, otherwise a compact copy with the new shape.
  Tensor reshape_copy(std::span<const std::int64_t> shape) const;
  Tensor reshape_copy(std::initializer_list<std::int64_t> shape) const {
    return reshape_copy(std::span<const std::int64_t>(shape.begin(), shape.size()));
  }
  /// NumPy broadcast (right-aligned) with stride-0 axes.
  Tensor broadcast_to(std::span<const std::int64_t> shape) const;
  Tensor broadcast_to(std::initializer_list<std::int64_t> shape) const {
    return broadcast_to(std::span<const std::int64_t>(shape.begin(), shape.size()));
  }
  /// Diagonal of axes (axis1, axis2), which are removed; the diagonal becomes
  /// the first axis and the others follow in order (batch-last convention:
  /// [n, n, batch...] -> [n, batch...]). offset > 0 is above the main diagonal.
  Tensor diagonal(std::int64_t offset = 0, std::int64_t axis1 = 0, std::int64_t axis2 = 1) const;
  Tensor squeeze() const;
  /// Removes `axis`, which must have extent 1.
  Tensor squeeze(std::int64_t axis) const;
  /// Inserts an extent-1 axis at `axis` in [-rank-1, rank].
  Tensor unsqueeze(std::int64_t axis) const;
  /// Real part as a view (complex) or the tensor itself (real).
  Tensor real() const;
  /// Imaginary part as a view; complex only.
  Tensor imag() const;
  /// The real and imaginary parts as a leading axis of extent 2 ([2,
  /// shape...] in the real dtype: torch.view_as_real, whose trailing
  /// row-major axis is our leading one), a view; the tensor itself when real.
  Tensor view_as_real() const;

  // ---- named copies -------------------------------------------------------
  /// This tensor if already compact column-major, otherwise a compact copy.
  Tensor contiguous() const;
  /// Always a fresh compact copy.
  Tensor clone() const;

  /// For backend authors: copies `src` into `dst` (same shape), converting
  /// dtypes (complex -> real keeps the real part; x -> bool is x != 0).
  static void copy_into(const Tensor& src, const Tensor& dst);

 private:
  static Tensor from_col_major_bytes(std::span<const std::int64_t> shape, DType dtype,
                                     const void* data, std::size_t count);
  static Tensor from_row_major_bytes(std::span<const std::int64_t> shape, DType dtype,
                                     const void* data, std::size_t count);
  const void* typed_ptr(DType want, bool write) const;
  void require_defined(const char* op) const;
  void require_contiguous(const char* op) const;
  void copy_to_host(DType want, void* out) const;

  std::shared_ptr<Storage> storage_;
  Shape shape_;
  Strides strides_;
  std::int64_t offset_ = 0;
  DType dtype_ = DType::F64;
};

// ---- factories (host memory from the heap) ---------------------------------
/// Uninitialised compact tensor.
Tensor empty(std::span<const std::int64_t> shape, DType dtype = f64);
Tensor zeros(std::span<const std::int64_t> shape, DType dtype = f64);
Tensor ones(std::span<const std::int64_t> shape, DType dtype = f64);
Tensor full(std::span<const std::int64_t> shape, Scalar value, DType dtype);
/// Full with the dtype of `value`.
Tensor full(std::span<const std::int64_t> shape, Scalar value);
/// n x m identity (m < 0 means m = n).
Tensor eye(std::int64_t n, std::int64_t m = -1, DType dtype = f64);
/// [start, stop) with `step` (non-zero), like numpy.arange.
Tensor arange(double start, double stop, double step = 1.0, DType dtype = f64);
Tensor arange(std::int64_t n, DType dtype = i64);
/// `num` evenly spaced values from start to stop inclusive.
Tensor linspace(double start, double stop, std::int64_t num, DType dtype = f64);
/// Uniform on [0, 1) (real and imaginary parts independently for complex).
Tensor rand(std::span<const std::int64_t> shape, DType dtype, Generator& gen);
/// Standard normal; complex values have E|z|^2 = 1 (each part variance 1/2).
Tensor randn(std::span<const std::int64_t> shape, DType dtype, Generator& gen);
/// re + i*im; both real of one dtype and one shape (f32 -> c64, f64 -> c128).
Tensor complex(const Tensor& re, const Tensor& im);

// initializer_list forms so that zeros({2, 3}) works.
inline Tensor empty(std::initializer_list<std::int64_t> s, DType d = f64) {
  return empty(std::span<const std::int64_t>(s.begin(), s.size()), d);
}
inline Tensor zeros(std::initializer_list<std::int64_t> s, DType d = f64) {
  return zeros(std::span<const std::int64_t>(s.begin(), s.size()), d);
}
inline Tensor ones(std::initializer_list<std::int64_t> s, DType d = f64) {
  return ones(std::span<const std::int64_t>(s.begin(), s.size()), d);
}
inline Tensor full(std::initializer_list<std::int64_t> s, Scalar v, DType d) {
  return full(std::span<const std::int64_t>(s.begin(), s.size()), v, d);
}
inline Tensor full(std::initializer_list<std::int64_t> s, Scalar v) {
  return full(std::span<const std::int64_t>(s.begin(), s.size()), v);
}
inline Tensor rand(std::initializer_list<std::int64_t> s, DType d, Generator& g) {
  return rand(std::span<const std::int64_t>(s.begin(), s.size()), d, g);
}
inline Tensor randn(std::initializer_list<std::int64_t> s, DType d, Generator& g) {
  return randn(std::span<const std::int64_t>(s.begin(), s.size()), d, g);
}

// ---- comparison and printing ------------------------------------------------
/// |a - b| <= atol + rtol * |b| elementwise (NumPy semantics, broadcasting).
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
              bool equal_nan = false);
/// Largest |a - b| over all elements (broadcasting); 0 for empty tensors.
double max_abs_diff(const Tensor& a, const Tensor& b);
/// NumPy-like text: tensor([[1., 2.], [3., 4.]], dtype=f64, shape=[2, 2]).
std::string to_string(const Tensor& t);
std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace tenferro
