// Direct layout helpers composed of other direct ops: flip, kron, trace, roll
// (the AD tiers' forms are the composites of tenferro/ad/composite.hpp).

#include <algorithm>

#include "tenferro/backend/elementwise.hpp"
#include "tenferro/backend/reduce.hpp"
#include "tenferro/backend/structural.hpp"

namespace tenferro {

namespace {

void require_defined(const Tensor& x, const char* op, const char* which = "input") {
  if (!x.defined()) fail(ErrorKind::InvalidArgument, op, which, " is undefined; pass a tensor");
}

}  // namespace

Tensor flip(const Tensor& x, std::span<const std::int64_t> axes, Backend& backend) {
  return reverse(x, axes, backend);
}

Tensor kron(const Tensor& a, const Tensor& b, Backend& backend) {
  require_defined(a, "kron", "a");
  require_defined(b, "kron", "b");
  const std::size_t r = static_cast<std::size_t>(std::max(a.rank(), b.rank()));
  Shape wa, wb, out;
  for (std::size_t d = 0; d < r; ++d) {
    const std::int64_t ea = d < a.shape().size() ? a.shape()[d] : 1;
    const std::int64_t eb = d < b.shape().size() ? b.shape()[d] : 1;
    wa.push_back(1);
    wa.push_back(ea);
    wb.push_back(eb);
    wb.push_back(1);
    out.push_back(checked_mul(ea, eb, "kron"));  // InvalidArgument, as the AD tiers
  }
  // Inserting unit axes is a view of a compact tensor; mul's result is compact.
  auto widen = [&](const Tensor& t, const Shape& s) {
    return t.is_contiguous() ? t.reshape(s) : reshape(t, s, backend);
  };
  return mul(widen(a, wa), widen(b, wb), backend).reshape(out);
}

Tensor trace(const Tensor& x, Backend& backend, std::int64_t offset, std::int64_t axis1,
             std::int64_t axis2) {
  require_defined(x, "trace");
  if (x.rank() < 2) {
    fail(ErrorKind::RankMismatch, "trace", "needs a matrix (rank >= 2), got rank ", x.rank(),
         "; the matrix axes are axis1 and axis2");
  }
  const std::int64_t first[1] = {0};
  return sum(diagonal(x, offset, axis1, axis2, backend), first, backend);
}

Tensor roll(const Tensor& x, std::span<const std::int64_t> shifts,
            std::span<const std::int64_t> axes, Backend& backend) {
  require_defined(x, "roll");
  if (shifts.size() != axes.size()) {
    fail(ErrorKind::InvalidArgument, "roll", "got ", shifts.size(), " shifts but ", axes.size(),
         " axes; give one shift per axis");
  }
  Tensor out = x;
  bool copied = false;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::int64_t a = normalize_axis(axes[i], x.rank(), "roll");
    const std::int64_t n = x.shape()[static_cast<std::size_t>(a)];
    if (n == 0) continue;
    const std::int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    const Tensor parts[2] = {out.slice(a, n - s, n, 1), out.slice(a, 0, n - s, 1)};
    out = concatenate(parts, a, backend);
    copied = true;
  }
  return copied ? out : copy(x, backend);
}

Tensor roll(const Tensor& x, std::int64_t shift, Backend& backend) {
  require_defined(x, "roll");
  const std::int64_t flat[1] = {x.numel()};
  const std::int64_t shifts[1] = {shift}, axes[1] = {0};
  return roll(reshape(x, flat, backend), shifts, axes, backend).reshape(x.shape());
}

}  // namespace tenferro
