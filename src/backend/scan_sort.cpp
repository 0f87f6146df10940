// Direct cumsum/cumprod, argsort, sort and topk. The lane kernels see one
// layout whatever x's strides are: cumsum/cumprod hand x to the backend's
// cumulate_into (the CPU backend scans a compact x of the result's dtype
// straight into the output, and copies any other x first); the sorts copy x
// into a compact column-major tensor.

#include <utility>

#include "tenferro/backend/scan.hpp"
#include "tenferro/backend/sort.hpp"
#include "tenferro/backend/structural.hpp"

namespace tenferro {

namespace {

void require_defined(const Tensor& x, const char* op) {
  if (!x.defined()) fail(ErrorKind::InvalidArgument, op, "input is undefined");
}

// A rank-0 tensor acts as one lane of length 1 (PyTorch accepts dim 0 or -1).
std::int64_t lane_axis(const Tensor& x, std::int64_t axis, const char* op) {
  if (x.rank() == 0) {
    if (axis != 0 && axis != -1) {
      fail(ErrorKind::AxisOutOfBounds, op, "axis ", axis,
           " is out of range for a rank-0 tensor; use 0 or -1");
    }
    return 0;
  }
  return normalize_axis(axis, x.rank(), op);
}

Tensor cumulate(const Tensor& x, std::int64_t axis, Backend& backend, bool reverse, bool product,
                const char* op) {
  require_defined(x, op);
  const std::int64_t a = lane_axis(x, axis, op);
  Tensor out = backend.empty(x.shape(), cumulative_result_dtype(x.dtype()));
  if (x.rank() > 0) {
    backend.cumulate_into(x, out, a, product, reverse);
  } else {
    backend.copy(x, out);
  }
  return out;
}

}  // namespace

DType cumulative_result_dtype(DType dtype) {
  return is_integral(dtype) || dtype == DType::Bool ? DType::I64 : dtype;
}

Tensor cumsum(const Tensor& x, std::int64_t axis, Backend& backend, bool reverse) {
  return cumulate(x, axis, backend, reverse, false, "cumsum");
}

Tensor cumprod(const Tensor& x, std::int64_t axis, Backend& backend, bool reverse) {
  return cumulate(x, axis, backend, reverse, true, "cumprod");
}

namespace {

// The first k entries (k < 0: all) of the stable sort of x along `axis`:
// {values, indices}, or indices only (values left undefined) unless
// `with_values`.
std::pair<Tensor, Tensor> sort_prefix(const Tensor& x, std::int64_t axis, std::int64_t k,
                                      bool descending, Backend& backend, bool with_values) {
  const char* op = k < 0 ? (with_values ? "sort" : "argsort") : "topk";
  require_defined(x, op);
  if (is_complex(x.dtype())) {
    fail(ErrorKind::DTypeMismatch, op, "complex numbers are not ordered (dtype ", name(x.dtype()),
         "); sort abs(x), real(x) or imag(x) instead");
  }
  const std::int64_t a = lane_axis(x, axis, op);
  const std::int64_t n = x.rank() == 0 ? 1 : x.shape()[static_cast<std::size_t>(a)];
  if (k > n) {
    fail(ErrorKind::InvalidArgument, op, "k = ", k, " exceeds the extent ", n, " of axis ", a,
         "; choose 0 <= k <= ", n);
  }
  if (x.rank() == 0 && k == 0) {
    fail(ErrorKind::InvalidArgument, op,
         "k = 0 on a rank-0 tensor, which always holds one value; use k = 1");
  }
  const std::int64_t kept = k < 0 ? n : k;
  Shape out_shape(x.shape());
  if (x.rank() > 0) out_shape[static_cast<std::size_t>(a)] = kept;
  Tensor out = backend.empty(out_shape, DType::I64);
  if (x.rank() == 0) {
    if (kept == 1) backend.fill(out, Scalar(std::int64_t{0}));
    return {with_values ? copy(x, backend) : Tensor(), std::move(out)};
  }
  Tensor compact = x;
  if (!x.is_contiguous()) {
    compact = backend.empty(x.shape(), x.dtype());
    backend.copy(x, compact);
  }
  if (!with_values) {
    backend.argsort(compact, a, descending, out);
    return {Tensor(), std::move(out)};
  }
  Tensor values = backend.empty(out_shape, x.dtype());
  backend.sort_into(compact, a, descending, values, out);
  return {std::move(values), std::move(out)};
}

}  // namespace

namespace detail {

Tensor argsort_prefix(const Tensor& x, std::int64_t axis, std::int64_t k, bool descending,
                      Backend& backend) {
  return sort_prefix(x, axis, k, descending, backend, false).second;
}

}  // namespace detail

Tensor argsort(const Tensor& x, std::int64_t axis, Backend& backend, bool descending) {
  return detail::argsort_prefix(x, axis, -1, descending, backend);
}

std::pair<Tensor, Tensor> sort(const Tensor& x, std::int64_t axis, Backend& backend,
                               bool descending) {
  return sort_prefix(x, axis, -1, descending, backend, true);
}

std::pair<Tensor, Tensor> topk(const Tensor& x, std::int64_t k, std::int64_t axis, Backend& backend,
                               bool largest) {
  if (k < 0) {
    fail(ErrorKind::InvalidArgument, "topk", "k = ", k, " is negative; choose 0 <= k <= extent");
  }
  return sort_prefix(x, axis, k, largest, backend, true);
}

}  // namespace tenferro
