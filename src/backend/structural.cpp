// Structural direct ops: each builds a zero-copy view of its input (or of its
// output) and materialises it with one Backend::copy into a fresh tensor.

#include "tenferro/backend/structural.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/checks.hpp"

namespace tenferro {

namespace {

using detail::require_operand;

// A fresh compact copy of `view` (the view's shape) in `dtype`.
Tensor materialize(Backend& backend, const Tensor& view, DType dtype) {
  Tensor out = backend.empty(view.shape(), dtype);
  backend.copy(view, out);
  return out;
}
Tensor materialize(Backend& backend, const Tensor& view) {
  return materialize(backend, view, view.dtype());
}

void require_rank(std::span<const std::int64_t> list, std::int64_t rank, const char* op,
                  const char* what) {
  if (static_cast<std::int64_t>(list.size()) != rank) {
    fail(ErrorKind::RankMismatch, op, what, " has ", list.size(),
         " entries but the tensor has rank ", rank, "; give one per axis");
  }
}

// Resolves one -1 in a reshape target against `numel`.
Shape resolve_reshape(std::span<const std::int64_t> shape, const Tensor& x) {
  Shape out(shape);
  std::int64_t known = 1;
  std::int64_t infer = -1;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer >= 0) fail(ErrorKind::InvalidArgument, "reshape", "only one extent may be -1");
      infer = static_cast<std::int64_t>(i);
    } else if (out[i] < 0) {
      fail(ErrorKind::InvalidArgument, "reshape", "negative extent ", out[i], " in ",
           shape_to_string(shape));
    }
  }
  // The given extents must be a shape a tensor can have (InvalidArgument, as
  // every shape): their product never overflows into a wrong count.
  Shape given;
  for (const std::int64_t e : out)
    if (e >= 0) given.push_back(e);
  known = shape_numel(given, "reshape");
  const std::int64_t n = x.numel();
  if (infer >= 0) {
    if (known == 0 || n % known != 0) {
      fail(ErrorKind::ShapeMismatch, "reshape", "cannot infer the -1 in ", shape_to_string(shape),
           " for ", n, " elements");
    }
    out[static_cast<std::size_t>(infer)] = n / known;
  } else if (known != n) {
    fail(ErrorKind::ShapeMismatch, "reshape", "cannot reshape ", shape_to_string(x.shape()), " (",
         n, " elements) to ", shape_to_string(shape), " (", known, " elements)");
  }
  return out;
}

// Result dtype of joining `xs` (non-empty, all defined and host-readable).
DType joined_dtype(std::span<const Tensor> xs, const Backend& backend, const char* op) {
  if (xs.empty()) fail(ErrorKind::InvalidArgument, op, "needs at least one tensor");
  for (const Tensor& x : xs) require_operand(x, backend, op, "an input");
  DType dtype = xs[0].dtype();
  for (const Tensor& x : xs) dtype = promote_types(dtype, x.dtype());
  return dtype;
}

Tensor triangle(const Tensor& x, std::int64_t k, bool keep_lower, Backend& backend,
                const char* op) {
  require_operand(x, backend, op);
  if (x.rank() < 2) {
    fail(ErrorKind::RankMismatch, op, "needs matrices [m, n, batch...], got rank ", x.rank());
  }
  Tensor out = materialize(backend, x);
  backend.zero_triangle(out, k, keep_lower);
  return out;
}

}  // namespace

Tensor permute(const Tensor& x, std::span<const std::int64_t> perm, Backend& backend) {
  require_operand(x, backend, "permute");
  Tensor view = x.permute(perm);  // validates rank, bounds and duplicates
  return materialize(backend, view);
}

Tensor reshape(const Tensor& x, std::span<const std::int64_t> shape, Backend& backend) {
  require_operand(x, backend, "reshape");
  const Shape target = resolve_reshape(shape, x);
  Tensor out = backend.empty(target, x.dtype());
  // A compact tensor can always be viewed with x's shape: copy into that view.
  backend.copy(x, out.reshape(x.shape()));
  return out;
}

Tensor copy(const Tensor& x, Backend& backend) {
  require_operand(x, backend, "copy");
  return materialize(backend, x);
}

Tensor broadcast_in_dim(const Tensor& x, std::span<const std::int64_t> shape,
                        std::span<const std::int64_t> dims, Backend& backend) {
  const char* op = "broadcast_in_dim";
  require_operand(x, backend, op);
  if (static_cast<std::int64_t>(dims.size()) != x.rank()) {
    fail(ErrorKind::RankMismatch, op, "dims has ", dims.size(),
         " entries but the operand has rank ", x.rank(),
         "; give the result axis of every operand axis");
  }
  for (std::int64_t e : shape) {
    if (e < 0) fail(ErrorKind::InvalidArgument, op, "negative extent in ", shape_to_string(shape));
  }
  shape_numel(shape, op);  // an overflowing size names this op
  const auto out_rank = static_cast<std::int64_t>(shape.size());
  Strides strides(shape.size(), 0);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t d = dims[i];
    if (d < 0 || d >= out_rank) {
      fail(ErrorKind::AxisOutOfBounds, op, "dims[", i, "] = ", d, " is not an axis of the rank ",
           out_rank, " result");
    }
    if (i > 0 && d <= dims[i - 1]) {
      fail(ErrorKind::InvalidArgument, op, "dims must be strictly increasing, got ",
           shape_to_string(dims));
    }
  }
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t d = dims[i];
    const std::int64_t e = x.shape()[i], target = shape[static_cast<std::size_t>(d)];
    if (e != 1 && e != target) {
      fail(ErrorKind::ShapeMismatch, op, "operand axis ", i, " has extent ", e, " but result axis ",
           d, " has extent ", target, "; it must be 1 or equal");
    }
    // Extent-1 axes broadcast with stride 0; the rest keep their stride.
    if (e == target) strides[static_cast<std::size_t>(d)] = x.strides()[i];
  }
  const Tensor view =
      Tensor::from_storage(x.storage(), x.dtype(), Shape(shape), std::move(strides), x.offset());
  return materialize(backend, view);
}

Tensor slice(const Tensor& x, std::span<const std::int64_t> start,
             std::span<const std::int64_t> limit, std::span<const std::int64_t> stride,
             Backend& backend) {
  const char* op = "slice";
  require_operand(x, backend, op);
  require_rank(start, x.rank(), op, "start");
  require_rank(limit, x.rank(), op, "limit");
  require_rank(stride, x.rank(), op, "stride");
  Tensor view = x;
  for (std::size_t d = 0; d < start.size(); ++d) {
    const std::int64_t n = x.shape()[d];
    if (stride[d] <= 0) {
      fail(ErrorKind::InvalidArgument, op, "stride[", d, "] = ", stride[d],
           " must be positive; use reverse for backward steps");
    }
    if (start[d] < 0 || limit[d] > n) {
      fail(ErrorKind::AxisOutOfBounds, op, "axis ", d, " range [", start[d], ", ", limit[d],
           ") is outside [0, ", n, ")");
    }
    if (start[d] > limit[d]) {
      fail(ErrorKind::InvalidArgument, op, "axis ", d, " start ", start[d], " exceeds limit ",
           limit[d]);
    }
    view = view.slice(static_cast<std::int64_t>(d), start[d], limit[d], stride[d]);
  }
  return materialize(backend, view);
}

Tensor pad(const Tensor& x, std::span<const std::int64_t> low, std::span<const std::int64_t> high,
           Scalar value, Backend& backend, std::span<const std::int64_t> interior) {
  const char* op = "pad";
  require_operand(x, backend, op);
  require_rank(low, x.rank(), op, "low");
  require_rank(high, x.rank(), op, "high");
  if (!interior.empty()) require_rank(interior, x.rank(), op, "interior");
  if (!is_complex(x.dtype()) && value.imag() != 0.0) {
    fail(ErrorKind::DTypeMismatch, op, "value ", value.real(), "+", value.imag(),
         "i is complex but the tensor is ", name(x.dtype()), "; pass a real value");
  }
  if (is_integral(x.dtype()) && is_inexact(value.dtype())) {
    // Converting a non-finite or out-of-range float to an integer is undefined.
    const double limit = x.dtype() == DType::I32 ? 2147483648.0 : 9223372036854775808.0;
    const double v = value.real();
    if (!std::isfinite(v) || std::trunc(v) < -limit || std::trunc(v) >= limit) {
      fail(ErrorKind::InvalidArgument, op, "pad value ", v, " has no ", name(x.dtype()),
           " equivalent; pass a finite value inside the integer range");
    }
  }
  const std::size_t r = low.size();
  Shape out_shape(r, 0);
  // Where x's kept elements land: x[first + i] -> out[pos + i * step], count of them.
  Strides first(r, 0), pos(r, 0), step(r, 1), count(r, 0);
  for (std::size_t d = 0; d < r; ++d) {
    const std::int64_t n = x.shape()[d];
    const std::int64_t gap = interior.empty() ? 0 : interior[d];
    if (gap < 0) {
      fail(ErrorKind::InvalidArgument, op, "interior[", d, "] = ", gap, " must be >= 0");
    }
    if (low[d] == INT64_MIN) {
      fail(ErrorKind::InvalidArgument, op, "low[", d, "] = ", low[d], " is out of range");
    }
    const std::int64_t extent =
        checked_add(checked_add(checked_add(low[d], high[d], op), n, op),
                    checked_mul(std::max<std::int64_t>(n - 1, 0), gap, op), op);
    if (extent < 0) {
      fail(ErrorKind::InvalidArgument, op, "axis ", d, " would have negative extent ", extent,
           "; crop less with negative low/high");
    }
    out_shape[d] = extent;
    step[d] = checked_add(gap, 1, op);
    // Elements at out positions low + i * step; keep those inside [0, extent).
    const std::int64_t i0 = low[d] >= 0 ? 0 : checked_add(-low[d], step[d] - 1, op) / step[d];
    const std::int64_t room = checked_add(extent, -low[d], op);
    const std::int64_t i1 =
        room > 0 ? std::min(n, checked_add(room, step[d] - 1, op) / step[d]) : 0;
    first[d] = i0;
    count[d] = std::max<std::int64_t>(i1 - i0, 0);
    pos[d] = low[d] + i0 * step[d];
  }
  Tensor out = backend.empty(out_shape, x.dtype());
  backend.fill(out, value);
  if (shape_numel(count) == 0) return out;
  std::int64_t x_off = x.offset(), o_off = 0;
  Strides x_strides(r, 0), o_strides(r, 0);
  for (std::size_t d = 0; d < r; ++d) {
    x_off += first[d] * x.strides()[d];
    o_off += pos[d] * out.strides()[d];
    x_strides[d] = x.strides()[d];
    o_strides[d] = out.strides()[d] * step[d];
  }
  const Tensor src =
      Tensor::from_storage(x.storage(), x.dtype(), count, std::move(x_strides), x_off);
  const Tensor dst = Tensor::from_storage(out.storage(), out.dtype(), count, std::move(o_strides),
                                          out.offset() + o_off);
  backend.copy(src, dst);
  return out;
}

Tensor concatenate(ListRef<Tensor> xs, std::int64_t axis, Backend& backend) {
  const char* op = "concatenate";
  const DType dtype = joined_dtype(xs, backend, op);
  const Tensor& x0 = xs[0];
  const auto a = static_cast<std::size_t>(normalize_axis(axis, x0.rank(), op));
  Shape out_shape(x0.shape());
  out_shape[a] = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    if (x.rank() != x0.rank()) {
      fail(ErrorKind::RankMismatch, op, "input ", i, " has rank ", x.rank(),
           " but input 0 has rank ", x0.rank());
    }
    for (std::size_t d = 0; d < out_shape.size(); ++d) {
      if (d != a && x.shape()[d] != x0.shape()[d]) {
        fail(ErrorKind::ShapeMismatch, op, "input ", i, " has shape ", shape_to_string(x.shape()),
             " but input 0 has ", shape_to_string(x0.shape()), "; only axis ", a, " may differ");
      }
    }
    out_shape[a] += x.shape()[a];
  }
  Tensor out = backend.empty(out_shape, dtype);
  std::int64_t at = 0;
  for (const Tensor& x : xs) {
    const std::int64_t n = x.shape()[a];
    backend.copy(x, out.slice(static_cast<std::int64_t>(a), at, at + n));
    at += n;
  }
  return out;
}

Tensor stack(ListRef<Tensor> xs, std::int64_t axis, Backend& backend) {
  const char* op = "stack";
  const DType dtype = joined_dtype(xs, backend, op);
  const Tensor& x0 = xs[0];
  const std::int64_t a = normalize_axis(axis, x0.rank() + 1, op);
  for (std::size_t i = 1; i < xs.size(); ++i) {
    if (xs[i].rank() != x0.rank()) {
      fail(ErrorKind::RankMismatch, op, "input ", i, " has rank ", xs[i].rank(),
           " but input 0 has rank ", x0.rank());
    }
    if (!(xs[i].shape() == x0.shape())) {
      fail(ErrorKind::ShapeMismatch, op, "input ", i, " has shape ", shape_to_string(xs[i].shape()),
           " but input 0 has ", shape_to_string(x0.shape()), "; stacked tensors must match");
    }
  }
  Shape out_shape(x0.shape());
  out_shape.insert(out_shape.begin() + a, static_cast<std::int64_t>(xs.size()));
  Tensor out = backend.empty(out_shape, dtype);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    backend.copy(xs[i], out.select(a, static_cast<std::int64_t>(i)));
  }
  return out;
}

Tensor reverse(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend) {
  const char* op = "reverse";
  require_operand(x, backend, op);
  std::vector<bool> seen(static_cast<std::size_t>(x.rank()), false);
  Tensor view = x;
  for (std::int64_t axis : axes) {
    const std::int64_t a = normalize_axis(axis, x.rank(), op);
    if (seen[static_cast<std::size_t>(a)]) {
      fail(ErrorKind::DuplicateAxis, op, "axis ", axis, " is listed twice");
    }
    seen[static_cast<std::size_t>(a)] = true;
    view = view.slice(a, std::nullopt, std::nullopt, -1);
  }
  return materialize(backend, view);
}

Tensor diagonal(const Tensor& x, std::int64_t offset, std::int64_t axis1, std::int64_t axis2,
                Backend& backend) {
  require_operand(x, backend, "diagonal");
  Tensor view = x.diagonal(offset, axis1, axis2);  // validates the axes
  return materialize(backend, view);
}

Tensor diag_embed(const Tensor& x, std::int64_t offset, Backend& backend) {
  const char* op = "diag_embed";
  require_operand(x, backend, op);
  if (x.rank() < 1) {
    fail(ErrorKind::RankMismatch, op, "needs a tensor [n, batch...] of rank >= 1, got a scalar");
  }
  if (offset == INT64_MIN) {
    fail(ErrorKind::InvalidArgument, op, "offset ", offset, " is out of range");
  }
  const std::int64_t n = checked_add(x.shape()[0], offset < 0 ? -offset : offset, op);
  Shape out_shape{n, n};
  shape_numel(out_shape, op);
  for (std::size_t d = 1; d < x.shape().size(); ++d) out_shape.push_back(x.shape()[d]);
  Tensor out = backend.empty(out_shape, x.dtype());
  backend.fill(out, Scalar(false));
  backend.copy(x, out.diagonal(offset, 0, 1));
  return out;
}

Tensor tril(const Tensor& x, std::int64_t k, Backend& backend) {
  return triangle(x, k, true, backend, "tril");
}

Tensor triu(const Tensor& x, std::int64_t k, Backend& backend) {
  return triangle(x, k, false, backend, "triu");
}

Tensor convert(const Tensor& x, DType dtype, Backend& backend) {
  require_operand(x, backend, "convert");
  if (!is_lossless_conversion(x.dtype(), dtype)) {
    fail(ErrorKind::DTypeMismatch, "convert", name(x.dtype()), " -> ", name(dtype),
         " can lose information; use cast for an explicit lossy conversion");
  }
  return materialize(backend, x, dtype);
}

Tensor cast(const Tensor& x, DType dtype, Backend& backend) {
  require_operand(x, backend, "cast");
  Tensor out = backend.empty(x.shape(), dtype);
  backend.cast(x, out);
  return out;
}

}  // namespace tenferro
