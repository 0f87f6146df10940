// Gauge fixing of QR, SVD and eigen factors, composed of core ops (sgn,
// argmax, take_along_axis, diagonal), so every tier and every AD order work.

#include "tenferro/linalg/gauge.hpp"

#include "linalg/common.hpp"

namespace tenferro::linalg {

namespace {

SymShape sym(const Shape& s) {
  return to_sym_shape(std::span<const std::int64_t>(s.data(), s.size()));
}
const SymShape& sym(const SymShape& s) {
  return s;
}

// Whether axis `d` of x is a constant 0 (an empty matrix needs no fixing).
template <class T>
bool empty_axis(const T& x, std::int64_t d) {
  const auto c = sym(x.shape())[static_cast<std::size_t>(d)].try_constant();
  return c && *c == 0;
}

// sgn(x), with 1 where x is 0: a unit phase for every element.
template <class T>
T unit_phase(const T& x) {
  const T mag = abs(x);
  return where(eq(mag, zeros_like(mag)), ones_like(x), sgn(x));
}

// Per column of M [r, c, batch...]: the phase of its largest-magnitude
// component (the first on ties), as [1, c, batch...].
template <class T>
T column_phases(const T& m) {
  const T idx = argmax(abs(m), 0, /*keepdim=*/true);
  return unit_phase(take_along_axis(m, idx, 0));
}

// Per row of M [r, c, batch...]: the factor that makes the row's
// largest-magnitude component real and positive, as [r, 1, batch...].
template <class T>
T row_factors(const T& m) {
  const T idx = argmax(abs(m), 1, /*keepdim=*/true);
  return conj(unit_phase(take_along_axis(m, idx, 1)));
}

// x[lo:hi] along `axis`.
template <class T>
T range(const T& x, std::int64_t axis, std::int64_t lo, std::int64_t hi) {
  Shape start(static_cast<std::size_t>(x.rank()), 0), limit;
  for (const auto& d : sym(x.shape())) {
    const auto c = d.try_constant();
    if (!c) {
      fail(ErrorKind::Unsupported, "canonical_phase",
           "needs constant extents in a traced program, got ", to_string(sym(x.shape())));
    }
    limit.push_back(*c);
  }
  start[axis] = lo;
  limit[axis] = hi;
  return slice(x, start, limit);
}

template <class T>
std::int64_t extent(const T& x, std::int64_t d) {
  const auto c = sym(x.shape())[static_cast<std::size_t>(d)].try_constant();
  if (!c) {
    fail(ErrorKind::Unsupported, "linalg gauge fixing",
         "needs constant matrix extents in a traced program, got ", to_string(sym(x.shape())));
  }
  return *c;
}

// [k, batch...] -> [1, k, batch...] or [k, 1, batch...].
template <class T>
T as_row(const T& v) {
  SymShape s = sym(v.shape());
  s.insert(s.begin(), SymDim(1));
  return reshape(v, s);
}
template <class T>
T as_column(const T& v) {
  SymShape s = sym(v.shape());
  s.insert(s.begin() + 1, SymDim(1));
  return reshape(v, s);
}

// Pads a factor along `axis` with ones up to `total` entries.
template <class T>
T pad_ones(const T& f, std::int64_t axis, std::int64_t total) {
  const std::int64_t have = extent(f, axis);
  if (have >= total) return f;
  Shape low(static_cast<std::size_t>(f.rank()), 0), high = low;
  high[axis] = total - have;
  return pad(f, low, high, Scalar(1.0));
}

}  // namespace

template <LinalgTensor T>
std::pair<T, T> positive_diagonal(const std::pair<T, T>& qr) {
  const T& q = qr.first;
  const T& r = qr.second;
  if (q.rank() < 2 || r.rank() < 2) {
    fail(ErrorKind::RankMismatch, "positive_diagonal",
         "expects {Q, R} as qr returns them (matrices [m, n, batch...])");
  }
  if (empty_axis(q, 0) && !empty_axis(r, 0) && !empty_axis(r, 1)) {
    fail(ErrorKind::InvalidArgument, "positive_diagonal",
         "Q is empty (qr mode \"r\"); take abs of R's diagonal instead, or use mode "
         "\"reduced\"");
  }
  if (empty_axis(r, 0) || empty_axis(r, 1)) return qr;
  const T s = unit_phase(diagonal(r));  // [k, batch...]
  const T qf = pad_ones(as_row(s), 1, extent(q, 1));
  const T rf = pad_ones(as_column(conj(s)), 0, extent(r, 0));
  return {mul(q, qf), mul(rf, r)};
}

template <LinalgTensor T>
SvdResult<T> canonical_phase(const SvdResult<T>& f) {
  if (f.U.rank() < 2 || f.Vh.rank() < 2) {
    fail(ErrorKind::RankMismatch, "canonical_phase", "expects svd factors U, S, Vh");
  }
  if (empty_axis(f.U, 0) || empty_axis(f.U, 1) || empty_axis(f.Vh, 0) || empty_axis(f.Vh, 1))
    return f;
  const std::int64_t k = extent(f.S, 0);
  const T p = column_phases(f.U);  // [1, mU, batch...]
  SvdResult<T> out{mul(f.U, conj(p)), f.S, f.Vh};
  T rows = transpose(range(p, 1, 0, k), 0, 1);  // [k, 1, batch...]
  const std::int64_t nv = extent(f.Vh, 0);
  if (nv > k) {
    const T rest = row_factors(range(f.Vh, 0, k, nv));
    rows = concatenate({rows, rest}, 0);
  }
  out.Vh = mul(f.Vh, rows);
  return out;
}

template <LinalgTensor T>
EigResult<T> canonical_phase(const EigResult<T>& f) {
  if (f.eigenvectors.rank() < 2) {
    fail(ErrorKind::RankMismatch, "canonical_phase", "expects eigenvectors [n, n, batch...]");
  }
  if (empty_axis(f.eigenvectors, 0) || empty_axis(f.eigenvectors, 1)) return f;
  return {f.eigenvalues, mul(f.eigenvectors, conj(column_phases(f.eigenvectors)))};
}

// ---- direct tier -------------------------------------------------------------------------

std::pair<Tensor, Tensor> positive_diagonal(const std::pair<Tensor, Tensor>& qr, Backend& backend) {
  return detail::on_backend(backend, "positive_diagonal", [&](EagerRuntime& rt) {
    auto out = positive_diagonal(std::pair{rt.tensor(qr.first), rt.tensor(qr.second)});
    return std::pair{out.first.value(), out.second.value()};
  });
}

SvdResult<Tensor> canonical_phase(const SvdResult<Tensor>& f, Backend& backend) {
  return detail::on_backend(backend, "canonical_phase", [&](EagerRuntime& rt) {
    auto out =
        canonical_phase(SvdResult<EagerTensor>{rt.tensor(f.U), rt.tensor(f.S), rt.tensor(f.Vh)});
    return SvdResult<Tensor>{out.U.value(), out.S.value(), out.Vh.value()};
  });
}

EigResult<Tensor> canonical_phase(const EigResult<Tensor>& f, Backend& backend) {
  return detail::on_backend(backend, "canonical_phase", [&](EagerRuntime& rt) {
    auto out = canonical_phase(
        EigResult<EagerTensor>{rt.tensor(f.eigenvalues), rt.tensor(f.eigenvectors)});
    return EigResult<Tensor>{out.eigenvalues.value(), out.eigenvectors.value()};
  });
}

#define TF_INSTANTIATE(T)                                                \
  template std::pair<T, T> positive_diagonal<T>(const std::pair<T, T>&); \
  template SvdResult<T> canonical_phase<T>(const SvdResult<T>&);         \
  template EigResult<T> canonical_phase<T>(const EigResult<T>&);
TF_INSTANTIATE(EagerTensor)
TF_INSTANTIATE(TracedTensor)
#undef TF_INSTANTIATE

}  // namespace tenferro::linalg
