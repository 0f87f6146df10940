#include <cmath>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "tenferro/tensor/tensor.hpp"
#include "tensor/dispatch.hpp"

namespace tenferro {

namespace {

void put_real(std::ostream& os, double v) {
  if (std::isnan(v)) {
    os << "nan";
  } else if (std::isinf(v)) {
    os << (v < 0 ? "-inf" : "inf");
  } else if (v == std::trunc(v) && std::fabs(v) < 1e16) {
    if (v == 0 && std::signbit(v)) os << '-';
    os << static_cast<long long>(v) << '.';
  } else {
    std::ostringstream s;
    s << std::setprecision(6) << v;
    os << s.str();
  }
}

template <class T>
void put_value(std::ostream& os, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    os << (v ? "true" : "false");
  } else if constexpr (std::is_integral_v<T>) {
    os << static_cast<long long>(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    put_real(os, static_cast<double>(v));
  } else {
    put_real(os, static_cast<double>(v.real()));
    os << (v.imag() < 0 || (v.imag() == 0 && std::signbit(v.imag())) ? "-" : "+");
    put_real(os, std::fabs(static_cast<double>(v.imag())));
    os << 'j';
  }
}

constexpr std::int64_t kSummariseAbove = 1000;
constexpr std::int64_t kEdgeItems = 3;

template <class T>
void put_nested(std::ostream& os, const T* base, const Tensor& t, std::size_t axis,
                std::int64_t offset, bool summarise) {
  if (axis == t.shape().size()) {
    put_value(os, base[offset]);
    return;
  }
  const std::int64_t n = t.shape()[axis];
  os << '[';
  for (std::int64_t i = 0; i < n; ++i) {
    if (summarise && n > 2 * kEdgeItems && i == kEdgeItems) {
      os << "..., ";
      i = n - kEdgeItems;
    }
    put_nested(os, base, t, axis + 1, offset + i * t.strides()[axis], summarise);
    if (i + 1 < n) os << (axis + 1 == t.shape().size() ? ", " : ",\n" + std::string(axis + 8, ' '));
  }
  os << ']';
}

}  // namespace

std::string to_string(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "tensor(undefined)";
  os << "tensor(";
  if (!t.placement().is_host()) {
    os << "<on " << to_string(t.placement()) << ">";
  } else {
    detail::dispatch_dtype(t.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      put_nested(os, static_cast<const T*>(t.raw_data()), t, 0, 0, t.numel() > kSummariseAbove);
    });
  }
  return os << ", dtype=" << name(t.dtype()) << ", shape=" << shape_to_string(t.shape()) << ")";
}

namespace {
// Both operands broadcast and converted to c128 compact copies.
std::pair<std::vector<c128_t>, std::vector<c128_t>> as_c128_pair(const Tensor& a, const Tensor& b,
                                                                 const char* op) {
  if (!a.defined() || !b.defined()) fail(ErrorKind::InvalidArgument, op, "inputs must be defined");
  const Shape s = broadcast_shapes(a.shape(), b.shape(), op);
  const std::int64_t n = shape_numel(s);
  std::vector<c128_t> va(static_cast<std::size_t>(n)), vb(static_cast<std::size_t>(n));
  Tensor::copy_into(a.broadcast_to(s), Tensor::wrap(va.data(), s));
  Tensor::copy_into(b.broadcast_to(s), Tensor::wrap(vb.data(), s));
  return {std::move(va), std::move(vb)};
}
bool has_nan(c128_t z) {
  return std::isnan(z.real()) || std::isnan(z.imag());
}
}  // namespace

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  auto [va, vb] = as_c128_pair(a, b, "allclose");
  for (std::size_t i = 0; i < va.size(); ++i) {
    if (has_nan(va[i]) || has_nan(vb[i])) {
      if (equal_nan && has_nan(va[i]) && has_nan(vb[i])) continue;
      return false;
    }
    if (va[i] == vb[i]) continue;  // equal infinities
    if (!(std::abs(va[i] - vb[i]) <= atol + rtol * std::abs(vb[i]))) return false;
  }
  return true;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  auto [va, vb] = as_c128_pair(a, b, "max_abs_diff");
  double m = 0;
  for (std::size_t i = 0; i < va.size(); ++i) {
    if (va[i] == vb[i]) continue;
    const double d = std::abs(va[i] - vb[i]);
    if (std::isnan(d)) return d;
    m = std::max(m, d);
  }
  return m;
}

}  // namespace tenferro
