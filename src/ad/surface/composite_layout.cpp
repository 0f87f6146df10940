// Layout composites of tenferro/ad/composite.hpp (kron, trace, roll),
// written once over the tensor type and instantiated for the three tiers. They
// are reshapes, broadcasts, slices and concatenations, so their derivatives
// are exact to any order.

#include "ad/surface/composite_checks.hpp"
#include "tenferro/ad/composite.hpp"
#include "tenferro/core/report_as.hpp"

namespace tenferro {

namespace {

SymShape shape_of(const EagerTensor& x) {
  return to_sym_shape(x.shape());
}
SymShape shape_of(const DirectTensor& x) {
  return to_sym_shape(x.shape());
}
const SymShape& shape_of(const TracedTensor& x) {
  return x.shape();
}

}  // namespace

template <SurfaceTensor T>
T kron(const T& a, const T& b) {
  return report_as("kron", [&]() -> T {
    detail::require_defined(a, "kron", "a");
    detail::require_defined(b, "kron", "b");
    const SymShape sa = shape_of(a), sb = shape_of(b);
    const std::size_t r = std::max(sa.size(), sb.size());
    // a's axis d becomes axis 2d + 1 and b's axis d axis 2d, so that the
    // column-major merge of (2d, 2d + 1) gives the index i * b_d + j.
    SymShape wa, wb, out;
    for (std::size_t d = 0; d < r; ++d) {
      const SymDim ea = d < sa.size() ? sa[d] : SymDim(1);
      const SymDim eb = d < sb.size() ? sb[d] : SymDim(1);
      wa.push_back(SymDim(1));
      wa.push_back(ea);
      wb.push_back(eb);
      wb.push_back(SymDim(1));
      out.push_back(ea * eb);
    }
    // A result over the element limit is refused before the product runs.
    double count = 1;
    for (const SymDim& e : out) {
      if (const auto c = e.try_constant()) count *= static_cast<double>(*c);
    }
    if (count > static_cast<double>(kMaxElements)) {
      fail(ErrorKind::InvalidArgument, "kron", "the result would have ", count,
           " elements, more than 2^59 (the most a tensor may have); check the shapes");
    }
    return reshape(mul(reshape(a, wa), reshape(b, wb)), out);
  });
}

template <SurfaceTensor T>
T trace(const T& x, std::int64_t offset, std::int64_t axis1, std::int64_t axis2) {
  detail::require_defined(x, "trace");
  if (x.rank() < 2) {
    fail(ErrorKind::RankMismatch, "trace", "needs a matrix (rank >= 2), got rank ", x.rank(),
         "; the matrix axes are axis1 and axis2");
  }
  return report_as("trace", [&] { return sum(diagonal(x, offset, axis1, axis2), {0}); });
}

template <SurfaceTensor T>
T roll(const T& x, std::span<const std::int64_t> shifts, Axes axes) {
  detail::require_defined(x, "roll");
  if (shifts.size() != axes.size()) {
    fail(ErrorKind::InvalidArgument, "roll", "got ", shifts.size(), " shifts but ", axes.size(),
         " axes; give one shift per axis");
  }
  const SymShape shape = shape_of(x);
  T out = x;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::int64_t a = normalize_axis(axes[i], x.rank(), "roll");
    const auto ua = static_cast<std::size_t>(a);
    const auto n_opt = shape[ua].try_constant();
    if (!n_opt) {
      fail(ErrorKind::InvalidArgument, "roll", "axis ", a, " has the symbolic extent ",
           shape[ua].to_string(), "; roll needs a constant extent (bind the size first)");
    }
    const std::int64_t n = *n_opt;
    if (n == 0) continue;
    const std::int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    // Static slices need every extent; the other axes are taken whole.
    Shape start(shape.size(), 0), limit;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      const auto e = shape[d].try_constant();
      if (!e) {
        fail(ErrorKind::InvalidArgument, "roll", "axis ", d, " has the symbolic extent ",
             shape[d].to_string(), "; roll slices need constant extents (bind the size first)");
      }
      limit.push_back(*e);
    }
    Shape tail_start = start, head_limit = limit;
    tail_start[ua] = n - s;
    head_limit[ua] = n - s;
    const T parts[2] = {slice(out, tail_start, limit), slice(out, start, head_limit)};
    out = concatenate(parts, a);
  }
  return out;
}

template <SurfaceTensor T>
T roll(const T& x, std::int64_t shift) {
  detail::require_defined(x, "roll");
  const SymShape shape = shape_of(x);
  SymDim numel(1);
  for (const SymDim& d : shape) numel = numel * d;
  const std::int64_t s[1] = {shift};
  return reshape(roll(reshape(x, SymShape{numel}), std::span<const std::int64_t>(s, 1), Axes{0}),
                 shape);
}

#define TF_INSTANTIATE(T)                                                  \
  template T kron<T>(const T&, const T&);                                  \
  template T trace<T>(const T&, std::int64_t, std::int64_t, std::int64_t); \
  template T roll<T>(const T&, std::span<const std::int64_t>, Axes);       \
  template T roll<T>(const T&, std::int64_t);

TF_INSTANTIATE(DirectTensor)
TF_INSTANTIATE(EagerTensor)
TF_INSTANTIATE(TracedTensor)
#undef TF_INSTANTIATE

}  // namespace tenferro
