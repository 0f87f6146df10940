#include "tenferro/tensor/tensor.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "tensor/dispatch.hpp"
#include "tensor/strided.hpp"
#include "tensor/strided_copy.hpp"

namespace tenferro {

using detail::cat;

// ---- shape helpers -----------------------------------------------------------

Strides col_major_strides(std::span<const std::int64_t> shape) {
  Strides s(shape.size());
  std::int64_t acc = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    s[d] = acc;
    acc = checked_mul(acc, std::max<std::int64_t>(shape[d], 1), "strides");
  }
  return s;
}

Strides row_major_strides(std::span<const std::int64_t> shape) {
  Strides s(shape.size());
  std::int64_t acc = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    s[d] = acc;
    acc = checked_mul(acc, std::max<std::int64_t>(shape[d], 1), "strides");
  }
  return s;
}

std::int64_t shape_numel(std::span<const std::int64_t> shape, const char* op) {
  // One pass. The compact strides multiply the non-zero extents, so those
  // are bounded too, also when a zero extent makes the tensor empty.
  bool zero = false;
  std::int64_t n = 1;
  for (auto e : shape) {
    if (e < 0) {
      fail(ErrorKind::InvalidArgument, op, "negative extent ", e, " in shape ",
           shape_to_string(shape));
    }
    zero = zero || e == 0;
    if (__builtin_mul_overflow(n, std::max<std::int64_t>(e, 1), &n) || n > kMaxElements) {
      fail(ErrorKind::InvalidArgument, op, "shape ", shape_to_string(shape),
           " has more than 2^59 elements (the most a tensor may have); check the extents");
    }
  }
  return zero ? 0 : n;
}

std::int64_t checked_add(std::int64_t a, std::int64_t b, const char* op) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) {
    fail(ErrorKind::InvalidArgument, op, a, " + ", b, " overflows 64 bits; check the sizes");
  }
  return r;
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* op) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    fail(ErrorKind::InvalidArgument, op, a, " * ", b, " overflows 64 bits; check the sizes");
  }
  return r;
}

std::string shape_to_string(std::span<const std::int64_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Shape broadcast_shapes(std::span<const std::int64_t> a, std::span<const std::int64_t> b,
                       const char* op) {
  const std::size_t r = std::max(a.size(), b.size());
  Shape out(r, 1);
  for (std::size_t i = 0; i < r; ++i) {
    const std::int64_t ea = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const std::int64_t eb = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (ea != eb && ea != 1 && eb != 1) {
      fail(ErrorKind::ShapeMismatch, op, "shapes ", shape_to_string(a), " and ", shape_to_string(b),
           " do not broadcast (NumPy rules, right-aligned): extents ", ea, " and ", eb);
    }
    out[i] = ea == 1 ? eb : ea;
  }
  return out;
}

std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank, const char* op) {
  if (axis < -rank || axis >= rank) {
    fail(ErrorKind::AxisOutOfBounds, op, "axis ", axis, " is out of range for rank ", rank,
         " (valid: ", -rank, "..", rank - 1, ")");
  }
  return axis < 0 ? axis + rank : axis;
}

// ---- construction --------------------------------------------------------------

namespace {
Tensor make_owned(std::span<const std::int64_t> shape, DType dtype) {
  const std::int64_t n = shape_numel(shape);
  auto storage = allocate_host_storage(static_cast<std::size_t>(n) * itemsize(dtype));
  return Tensor::from_storage(std::move(storage), dtype, Shape(shape), col_major_strides(shape), 0);
}
}  // namespace

Tensor Tensor::from_storage(std::shared_ptr<Storage> storage, DType dtype, Shape shape,
                            Strides strides, std::int64_t offset) {
  if (!storage) fail(ErrorKind::InvalidArgument, "Tensor", "storage is null");
  if (shape.size() != strides.size()) {
    fail(ErrorKind::RankMismatch, "Tensor", "shape ", shape_to_string(shape), " and ",
         strides.size(), " strides differ in rank");
  }
  shape_numel(shape);
  Tensor t;
  t.storage_ = std::move(storage);
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.strides_ = std::move(strides);
  t.offset_ = offset;
  return t;
}

Tensor Tensor::from_col_major_bytes(std::span<const std::int64_t> shape, DType dtype,
                                    const void* data, std::size_t count) {
  const std::int64_t n = shape_numel(shape, "from_col_major");
  if (static_cast<std::int64_t>(count) != n) {
    fail(ErrorKind::ShapeMismatch, "from_col_major", "shape ", shape_to_string(shape), " needs ", n,
         " elements but ", count, " were given");
  }
  Tensor t = make_owned(shape, dtype);
  if (n > 0) std::memcpy(t.raw_data(), data, count * itemsize(dtype));
  return t;
}

Tensor Tensor::from_row_major_bytes(std::span<const std::int64_t> shape, DType dtype,
                                    const void* data, std::size_t count) {
  const std::int64_t n = shape_numel(shape, "from_row_major");
  if (static_cast<std::int64_t>(count) != n) {
    fail(ErrorKind::ShapeMismatch, "from_row_major", "shape ", shape_to_string(shape), " needs ", n,
         " elements but ", count, " were given");
  }
  Tensor src = wrap(const_cast<void*>(data), dtype, shape, row_major_strides(shape));
  Tensor t = make_owned(shape, dtype);
  copy_into(src, t);
  return t;
}

Tensor Tensor::scalar(Scalar value) {
  return scalar(value, value.dtype());
}
Tensor Tensor::scalar(Scalar value, DType dtype) {
  return full({}, value, dtype);
}

Tensor Tensor::wrap(void* data, DType dtype, std::span<const std::int64_t> shape,
                    std::span<const std::int64_t> strides, std::shared_ptr<void> keepalive,
                    Placement placement, std::size_t nbytes) {
  Strides st = strides.empty() ? col_major_strides(shape) : Strides(strides);
  if (st.size() != shape.size()) {
    fail(ErrorKind::RankMismatch, "wrap", "shape ", shape_to_string(shape), " has rank ",
         shape.size(), " but ", st.size(), " strides were given");
  }
  const std::int64_t n = shape_numel(shape, "wrap");
  if (n > 0 && data == nullptr) fail(ErrorKind::InvalidArgument, "wrap", "data pointer is null");
  if (nbytes > 0 && n > 0) {
    // The element range the strides span, with checked arithmetic: a stride
    // of 2^60 must not wrap around into a small, in-bounds range.
    std::int64_t lo = 0, hi = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      const std::int64_t span = checked_mul(shape[d] - 1, st[d], "wrap");
      (st[d] < 0 ? lo : hi) = checked_add(st[d] < 0 ? lo : hi, span, "wrap");
    }
    const std::int64_t bytes_hi =
        checked_mul(checked_add(hi, 1, "wrap"), static_cast<std::int64_t>(itemsize(dtype)), "wrap");
    if (lo < 0 || static_cast<std::size_t>(bytes_hi) > nbytes) {
      fail(ErrorKind::InvalidArgument, "wrap", "the strided element range does not fit in ", nbytes,
           " bytes of external memory");
    }
  }
  auto storage = wrap_storage(data, nbytes, placement, std::move(keepalive));
  return from_storage(std::move(storage), dtype, Shape(shape), std::move(st), 0);
}

// ---- metadata --------------------------------------------------------------------

std::int64_t Tensor::dim(std::int64_t axis) const {
  return shape_[static_cast<std::size_t>(normalize_axis(axis, rank(), "dim"))];
}

void* Tensor::raw_data() const {
  if (!storage_) {
    fail(ErrorKind::InvalidArgument, "raw_data", "tensor is undefined (default-constructed)");
  }
  return static_cast<char*>(storage_->data()) +
         offset_ * static_cast<std::int64_t>(itemsize(dtype_));
}

void Tensor::require_defined(const char* op) const {
  if (!defined()) fail(ErrorKind::InvalidArgument, op, "tensor is undefined (default-constructed)");
}

void Tensor::require_contiguous(const char* op) const {
  require_defined(op);
  if (!is_contiguous()) {
    fail(ErrorKind::InvalidArgument, op, "tensor is a strided view; call contiguous() first");
  }
}

const void* Tensor::typed_ptr(DType want, bool write) const {
  require_defined("data");
  if (!placement().is_host()) {
    fail(ErrorKind::Unsupported, "data", "tensor lives on ", to_string(placement()),
         "; copy it to the host first");
  }
  if (want != dtype_) {
    fail(ErrorKind::DTypeMismatch, "data", "tensor has dtype ", name(dtype_), ", requested ",
         name(want));
  }
  if (write && !is_unique()) {
    fail(ErrorKind::RuntimeState, "mutable_data",
         "the storage is shared with other tensors or views; clone() it to get a private copy");
  }
  return raw_data();
}

void Tensor::copy_to_host(DType want, void* out) const {
  typed_ptr(want, false);
  Tensor dst = wrap(out, want, shape_);
  copy_into(*this, dst);
}

Scalar Tensor::item() const {
  require_defined("item");
  if (numel() != 1) {
    fail(ErrorKind::ShapeMismatch, "item", "tensor of shape ", shape_to_string(shape_), " has ",
         numel(), " elements; item() needs exactly one");
  }
  typed_ptr(dtype_, false);
  return detail::dispatch_dtype(dtype_, [&](auto tag) -> Scalar {
    using T = typename decltype(tag)::type;
    return Scalar(*static_cast<const T*>(raw_data()));
  });
}

// ---- views -------------------------------------------------------------------------

Tensor Tensor::permute(std::span<const std::int64_t> perm) const {
  require_defined("permute");
  if (static_cast<std::int64_t>(perm.size()) != rank()) {
    fail(ErrorKind::RankMismatch, "permute", "permutation has ", perm.size(),
         " axes but the tensor has rank ", rank());
  }
  Tensor t = *this;
  SmallVector<bool, 8> seen(perm.size(), false);
  for (std::size_t i = 0; i < perm.size(); ++i) {
    const auto a = static_cast<std::size_t>(normalize_axis(perm[i], rank(), "permute"));
    if (seen[a]) fail(ErrorKind::DuplicateAxis, "permute", "axis ", perm[i], " appears twice");
    seen[a] = true;
    t.shape_[i] = shape_[a];
    t.strides_[i] = strides_[a];
  }
  return t;
}

Tensor Tensor::transpose(std::int64_t a, std::int64_t b) const {
  require_defined("transpose");
  const auto ia = static_cast<std::size_t>(normalize_axis(a, rank(), "transpose"));
  const auto ib = static_cast<std::size_t>(normalize_axis(b, rank(), "transpose"));
  Tensor t = *this;
  std::swap(t.shape_[ia], t.shape_[ib]);
  std::swap(t.strides_[ia], t.strides_[ib]);
  return t;
}

Tensor Tensor::slice(std::int64_t axis, std::optional<std::int64_t> start,
                     std::optional<std::int64_t> stop, std::int64_t step) const {
  require_defined("slice");
  const auto a = static_cast<std::size_t>(normalize_axis(axis, rank(), "slice"));
  if (step == 0) fail(ErrorKind::InvalidArgument, "slice", "step must be non-zero");
  const std::int64_t n = shape_[a];
  std::int64_t b = 0, e = 0, len = 0;
  auto wrap_index = [n](std::int64_t i) { return i < 0 ? i + n : i; };
  if (step > 0) {
    b = std::clamp<std::int64_t>(start ? wrap_index(*start) : 0, 0, n);
    e = std::clamp<std::int64_t>(stop ? wrap_index(*stop) : n, 0, n);
    len = e > b ? (e - b - 1) / step + 1 : 0;  // no overflow for any step
  } else {
    b = std::clamp<std::int64_t>(start ? wrap_index(*start) : n - 1, -1, n - 1);
    e = std::clamp<std::int64_t>(stop ? wrap_index(*stop) : -1, -1, n - 1);
    // -step overflows for INT64_MIN: any such step takes one element.
    len = b > e ? (step == INT64_MIN ? 1 : (b - e - 1) / (-step) + 1) : 0;
  }
  Tensor t = *this;
  if (len > 0) t.offset_ += b * strides_[a];
  t.shape_[a] = len;
  // With at most one element the stride is never used: keep it small.
  t.strides_[a] = len > 1 ? checked_mul(strides_[a], step, "slice") : strides_[a];
  return t;
}

Tensor Tensor::select(std::int64_t axis, std::int64_t index) const {
  require_defined("select");
  const auto a = static_cast<std::size_t>(normalize_axis(axis, rank(), "select"));
  const std::int64_t n = shape_[a];
  if (index < -n || index >= n) {
    fail(ErrorKind::AxisOutOfBounds, "select", "index ", index, " out of range for axis ", axis,
         " with extent ", n);
  }
  if (index < 0) index += n;
  Tensor t = *this;
  t.offset_ += index * strides_[a];
  t.shape_.erase(t.shape_.begin() + a);
  t.strides_.erase(t.strides_.begin() + a);
  return t;
}

namespace {
// Shape with one -1 resolved against numel.
Shape resolve_shape(std::span<const std::int64_t> shape, std::int64_t numel, const Shape& from) {
  Shape out(shape);
  std::int64_t known = 1;
  int infer = -1;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer >= 0) fail(ErrorKind::InvalidArgument, "reshape", "only one extent may be -1");
      infer = static_cast<int>(i);
    } else if (out[i] < 0) {
      fail(ErrorKind::InvalidArgument, "reshape", "negative extent ", out[i]);
    }
  }
  // The given extents must be a shape a tensor can have (InvalidArgument).
  Shape given;
  for (const std::int64_t e : out)
    if (e >= 0) given.push_back(e);
  known = shape_numel(given, "reshape");
  if (infer >= 0) {
    if (known == 0 || numel % known != 0) {
      fail(ErrorKind::ShapeMismatch, "reshape", "cannot infer -1 in ", shape_to_string(shape),
           " for ", numel, " elements");
    }
    out[static_cast<std::size_t>(infer)] = numel / known;
  } else if (known != numel) {
    fail(ErrorKind::ShapeMismatch, "reshape", "cannot reshape ", shape_to_string(from), " (", numel,
         " elements) to ", shape_to_string(shape), " (", known, " elements)");
  }
  return out;
}

// Column-major strides viewing (old_shape, old_strides) as new_shape, if possible.
bool view_strides(const Shape& old_shape, const Strides& old_strides, const Shape& new_shape,
                  Strides& out) {
  Shape od;
  Strides os;
  for (std::size_t i = 0; i < old_shape.size(); ++i) {
    if (old_shape[i] != 1) {
      od.push_back(old_shape[i]);
      os.push_back(old_strides[i]);
    }
  }
  const std::size_t nn = new_shape.size(), no = od.size();
  out.assign(nn, 1);
  std::size_t ni = 0, oi = 0;
  while (ni < nn && oi < no) {
    std::int64_t np = new_shape[ni], op = od[oi];
    std::size_t nj = ni + 1, oj = oi + 1;
    while (np != op) {
      if (np < op) {
        np *= new_shape[nj++];
      } else {
        op *= od[oj++];
      }
    }
    for (std::size_t k = oi; k + 1 < oj; ++k) {
      if (os[k + 1] != os[k] * od[k]) return false;
    }
    out[ni] = os[oi];
    for (std::size_t k = ni + 1; k < nj; ++k) out[k] = out[k - 1] * new_shape[k - 1];
    ni = nj;
    oi = oj;
  }
  for (; ni < nn; ++ni) out[ni] = ni > 0 ? out[ni - 1] * new_shape[ni - 1] : 1;
  return true;
}
}  // namespace

Tensor Tensor::reshape(std::span<const std::int64_t> shape) const {
  require_defined("reshape");
  const std::int64_t n = numel();
  Shape ns = resolve_shape(shape, n, shape_);
  Tensor t = *this;
  if (n == 0) {
    t.strides_ = col_major_strides(ns);
  } else if (!view_strides(shape_, strides_, ns, t.strides_)) {
    fail(ErrorKind::InvalidArgument, "reshape", "a tensor of shape ", shape_to_string(shape_),
         " with strides ", shape_to_string(strides_), " cannot be viewed as ", shape_to_string(ns),
         " without a copy; use reshape_copy() or contiguous() first");
  }
  t.shape_ = std::move(ns);
  return t;
}

Tensor Tensor::reshape_copy(std::span<const std::int64_t> shape) const {
  require_defined("reshape_copy");
  Shape ns = resolve_shape(shape, numel(), shape_);
  Strides st;
  if (numel() == 0 || view_strides(shape_, strides_, ns, st)) return reshape(ns);
  return contiguous().reshape(ns);
}

Tensor Tensor::broadcast_to(std::span<const std::int64_t> shape) const {
  require_defined("broadcast_to");
  if (shape.size() < shape_.size()) {
    fail(ErrorKind::RankMismatch, "broadcast_to", "cannot broadcast rank ", rank(), " shape ",
         shape_to_string(shape_), " to lower rank shape ", shape_to_string(shape));
  }
  shape_numel(shape, "broadcast_to");
  const std::size_t lead = shape.size() - shape_.size();
  Tensor t = *this;
  t.shape_ = Shape(shape);
  t.strides_.assign(shape.size(), 0);
  for (std::size_t i = 0; i < shape_.size(); ++i) {
    const std::int64_t e = shape_[i], target = shape[lead + i];
    if (e == target) {
      t.strides_[lead + i] = strides_[i];
    } else if (e != 1) {
      fail(ErrorKind::ShapeMismatch, "broadcast_to", "cannot broadcast ", shape_to_string(shape_),
           " to ", shape_to_string(shape), ": extent ", e, " vs ", target);
    }
  }
  return t;
}

Tensor Tensor::diagonal(std::int64_t offset, std::int64_t axis1, std::int64_t axis2) const {
  require_defined("diagonal");
  const auto a = static_cast<std::size_t>(normalize_axis(axis1, rank(), "diagonal"));
  const auto b = static_cast<std::size_t>(normalize_axis(axis2, rank(), "diagonal"));
  if (a == b) fail(ErrorKind::DuplicateAxis, "diagonal", "axis1 and axis2 are both ", a);
  const std::int64_t n1 = shape_[a], n2 = shape_[b];
  const std::int64_t len = std::max<std::int64_t>(
      0, offset >= 0 ? std::min(n1, n2 - offset) : std::min(n1 + offset, n2));
  Tensor t;
  t.storage_ = storage_;
  t.dtype_ = dtype_;
  t.offset_ = offset_;
  if (len > 0) t.offset_ += offset >= 0 ? offset * strides_[b] : -offset * strides_[a];
  // Batch-last convention: the diagonal comes first, the remaining axes follow.
  t.shape_.push_back(len);
  t.strides_.push_back(strides_[a] + strides_[b]);
  for (std::size_t d = 0; d < shape_.size(); ++d) {
    if (d == a || d == b) continue;
    t.shape_.push_back(shape_[d]);
    t.strides_.push_back(strides_[d]);
  }
  return t;
}

Tensor Tensor::squeeze() const {
  require_defined("squeeze");
  Tensor t = *this;
  t.shape_.clear();
  t.strides_.clear();
  for (std::size_t d = 0; d < shape_.size(); ++d) {
    if (shape_[d] == 1) continue;
    t.shape_.push_back(shape_[d]);
    t.strides_.push_back(strides_[d]);
  }
  return t;
}

Tensor Tensor::squeeze(std::int64_t axis) const {
  require_defined("squeeze");
  const auto a = static_cast<std::size_t>(normalize_axis(axis, rank(), "squeeze"));
  if (shape_[a] != 1) {
    fail(ErrorKind::InvalidArgument, "squeeze", "axis ", axis, " has extent ", shape_[a],
         ", only extent-1 axes can be squeezed");
  }
  Tensor t = *this;
  t.shape_.erase(t.shape_.begin() + a);
  t.strides_.erase(t.strides_.begin() + a);
  return t;
}

Tensor Tensor::unsqueeze(std::int64_t axis) const {
  require_defined("unsqueeze");
  const auto a = static_cast<std::size_t>(normalize_axis(axis, rank() + 1, "unsqueeze"));
  Tensor t = *this;
  std::int64_t stride = 1;
  if (a < shape_.size())
    stride = strides_[a] * shape_[a];
  else if (a > 0)
    stride = strides_[a - 1] * shape_[a - 1];
  t.shape_.insert(t.shape_.begin() + a, 1);
  t.strides_.insert(t.strides_.begin() + a, stride);
  return t;
}

Tensor Tensor::real() const {
  require_defined("real");
  if (!is_complex(dtype_)) return *this;
  Tensor t = *this;
  t.dtype_ = real_dtype(dtype_);
  for (auto& s : t.strides_) s *= 2;
  t.offset_ = offset_ * 2;
  return t;
}

Tensor Tensor::view_as_real() const {
  require_defined("view_as_real");
  if (!is_complex(dtype_)) return *this;
  Tensor t = real();
  t.shape_.insert(t.shape_.begin(), 2);
  t.strides_.insert(t.strides_.begin(), 1);
  return t;
}

Tensor Tensor::imag() const {
  require_defined("imag");
  if (!is_complex(dtype_)) {
    fail(ErrorKind::DTypeMismatch, "imag", "imag() needs a complex tensor, got ", name(dtype_));
  }
  Tensor t = real();
  t.offset_ += 1;
  return t;
}

// ---- copies ------------------------------------------------------------------------

Tensor Tensor::contiguous() const {
  require_defined("contiguous");
  if (is_contiguous() && offset_ >= 0) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  require_defined("clone");
  Tensor t = make_owned(shape_, dtype_);
  copy_into(*this, t);
  return t;
}

void Tensor::copy_into(const Tensor& src, const Tensor& dst) {
  src.require_defined("copy");
  dst.require_defined("copy");
  if (!(src.shape_ == dst.shape_)) {
    fail(ErrorKind::ShapeMismatch, "copy", "source shape ", shape_to_string(src.shape_),
         " differs from destination shape ", shape_to_string(dst.shape_));
  }
  if (!src.placement().is_host() || !dst.placement().is_host()) {
    fail(ErrorKind::Unsupported, "copy", "host copy between ", to_string(src.placement()), " and ",
         to_string(dst.placement()), "; use the device backend's copy");
  }
  // The backend's copy kernel (cache-blocked for permuted layouts), serially.
  detail::strided_copy_into(
      src, dst,
      [](std::int64_t n, std::int64_t, auto&& body) {
        if (n > 0) body(std::int64_t{0}, n);
      },
      std::numeric_limits<std::int64_t>::max());
}

}  // namespace tenferro
