#pragma once
// Direct structural operations: explicit backend argument, no AD. Each returns
// a fresh compact tensor (the view methods of Tensor are the zero-copy forms).

#include <span>
#include <vector>

#include "tenferro/backend/backend.hpp"
#include "tenferro/core/list_ref.hpp"

namespace tenferro {

/// Materialises x.permute(perm) compactly (cache-blocked kernel).
Tensor permute(const Tensor& x, std::span<const std::int64_t> perm, Backend& backend);
/// Compact copy of x with a new shape (column-major element order; one -1 allowed).
Tensor reshape(const Tensor& x, std::span<const std::int64_t> shape, Backend& backend);
/// Compact copy of any tensor (the backend's contiguous()).
Tensor copy(const Tensor& x, Backend& backend);
/// XLA broadcast_in_dim: operand axis i becomes result axis dims[i] (strictly
/// increasing); operand extents are 1 or equal to the result extent.
Tensor broadcast_in_dim(const Tensor& x, std::span<const std::int64_t> shape,
                        std::span<const std::int64_t> dims, Backend& backend);
/// XLA slice: per axis [start, limit) with a positive stride.
Tensor slice(const Tensor& x, std::span<const std::int64_t> start,
             std::span<const std::int64_t> limit, std::span<const std::int64_t> stride,
             Backend& backend);
/// Pads each axis with `low` and `high` elements of `value` (negative values
/// crop) and `interior` elements between neighbours (>= 0). Empty interior = 0.
Tensor pad(const Tensor& x, std::span<const std::int64_t> low, std::span<const std::int64_t> high,
           Scalar value, Backend& backend, std::span<const std::int64_t> interior = {});
/// Joins tensors along an existing axis; dtypes promote.
Tensor concatenate(ListRef<Tensor> xs, std::int64_t axis, Backend& backend);
/// Joins tensors along a new axis inserted at `axis`; dtypes promote.
Tensor stack(ListRef<Tensor> xs, std::int64_t axis, Backend& backend);
/// Reverses the given axes.
Tensor reverse(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend);
/// reverse under PyTorch's name (torch.flip).
Tensor flip(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend);
/// Kronecker product (torch.kron): extent a_d * b_d on each axis d, holding
/// a[i] * b[j] at i * b_d + j; the lower-rank operand gets trailing unit axes.
Tensor kron(const Tensor& a, const Tensor& b, Backend& backend);
/// Sum of the offset diagonal of the matrices in axis1/axis2, other axes kept
/// (torch.trace); dtypes as in sum.
Tensor trace(const Tensor& x, Backend& backend, std::int64_t offset = 0, std::int64_t axis1 = 0,
             std::int64_t axis2 = 1);
/// Rolls x by shifts[i] along axes[i] (torch.roll): out[(j + s) mod n] = x[j].
Tensor roll(const Tensor& x, std::span<const std::int64_t> shifts,
            std::span<const std::int64_t> axes, Backend& backend);
/// torch.roll without dims: rolls the column-major flattening of x.
Tensor roll(const Tensor& x, std::int64_t shift, Backend& backend);
/// Diagonal extract (see Tensor::diagonal: the diagonal becomes the first axis).
Tensor diagonal(const Tensor& x, std::int64_t offset, std::int64_t axis1, std::int64_t axis2,
                Backend& backend);
/// Inverse of diagonal(x, offset, 0, 1): [n, batch...] -> [n+|offset|, n+|offset|, batch...]
/// with x on the offset diagonal and zeros elsewhere.
Tensor diag_embed(const Tensor& x, std::int64_t offset, Backend& backend);
/// Lower/upper triangle of the matrices in axes 0 and 1 (batch last); k shifts
/// the diagonal (k > 0 above the main one), the rest becomes zero.
Tensor tril(const Tensor& x, std::int64_t k, Backend& backend);
Tensor triu(const Tensor& x, std::int64_t k, Backend& backend);
/// Picks entries of `axis` at `index` (1-D, i32/i64; negative counts from the end).
Tensor index_select(const Tensor& x, std::int64_t axis, const Tensor& index, Backend& backend);
/// numpy.take_along_axis: index has x's rank and extents (except along `axis`).
Tensor take_along_axis(const Tensor& x, const Tensor& index, std::int64_t axis, Backend& backend);
/// x with src added at index along `axis` (torch.scatter_add semantics):
/// out[..., index[i...], ...] += src[i...]; index and src have equal shapes.
Tensor scatter_add(const Tensor& x, std::int64_t axis, const Tensor& index, const Tensor& src,
                   Backend& backend);
/// Lossless dtype conversion; a lossy one is DTypeMismatch (use cast).
Tensor convert(const Tensor& x, DType dtype, Backend& backend);
/// Any dtype conversion: float -> int truncates, complex -> real keeps the real part.
Tensor cast(const Tensor& x, DType dtype, Backend& backend);

}  // namespace tenferro
