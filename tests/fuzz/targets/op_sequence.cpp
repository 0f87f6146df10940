// Random op-sequence fuzzer over every tier (issue 19).
//
// The bytes decode into a small program: 1-3 input tensors (dtype, rank 0-3
// with extents 0-4 or, rarely, one huge extent; contiguous, strided,
// negative-stride, broadcast or permuted views) and 1-8 ops from a table
// covering the public op surface, each picking its operands from the inputs
// and the earlier results. The program runs in the direct tier (Tensor on a
// CpuBackend), the eager tier (EagerTensor) and the traced tier (TracedTensor:
// build, compile, prepare, run), and the target checks:
//   - every value agrees between the tiers (dtype, shape, elements; a
//     tolerance for floating dtypes, NaN at the same positions);
//   - a failure is a tenferro::Error of the same ErrorKind in every tier;
//   - for a floating program, <vjp(u), v> == <u, jvp(v)> in the eager and
//     the traced tier, their jvp, vjp and the gradient of sum |y|^2 agree;
//   - the runtime still works after an error.
// Anything else prints the decoded program and traps.
//
// Built three ways: by tests/fuzz/op_sequence_test.cpp (corpus, seeded random
// inputs, regressions), by libFuzzer, and by the standalone fuzz driver.

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tenferro/tenferro.hpp"

namespace opseq {

using namespace tenferro;

// ---- bytes ----------------------------------------------------------------------

/// Reads the fuzzer's bytes; past the end every read is 0 (a valid choice).
class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  /// In [0, n).
  std::int64_t pick(std::int64_t n) { return n <= 1 ? (u8(), 0) : u8() % n; }
  /// In [lo, hi], or 1 in 32 an extreme value (huge, INT64 limits). Every
  /// extreme is at least 2^40 in size, so a tensor of it never fits in
  /// memory: allocating one must be OutOfMemory, never a slow success.
  std::int64_t param(std::int64_t lo, std::int64_t hi) {
    static constexpr std::int64_t kExtremes[8] = {std::int64_t{1} << 40,
                                                  std::int64_t{1} << 62,
                                                  std::numeric_limits<std::int64_t>::max(),
                                                  std::numeric_limits<std::int64_t>::min(),
                                                  -(std::int64_t{1} << 40),
                                                  -(std::int64_t{1} << 62),
                                                  std::int64_t{1} << 59,
                                                  (std::int64_t{1} << 59) + 1};
    const std::uint8_t b = u8();
    if (b >= 248) return kExtremes[b - 248];
    return lo + static_cast<std::int64_t>(b % static_cast<std::uint64_t>(hi - lo + 1));
  }
  /// An axis of a rank-r tensor, negative half the time, rarely out of range.
  std::int64_t axis(std::int64_t rank, std::int64_t extra = 0) {
    const std::uint8_t b = u8();
    const std::int64_t n = rank + extra;
    if (b >= 240 || n == 0) return b >= 248 ? std::int64_t{1} << 40 : n + (b & 1);
    const std::int64_t a = b % n;
    return (b >> 7) ? a - n : a;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

// ---- inputs ---------------------------------------------------------------------

enum class Layout { Contiguous, Strided, Flipped, Broadcast, Permuted };

struct InputSpec {
  DType dtype = f64;
  Shape shape;
  Layout layout = Layout::Contiguous;
  std::uint64_t seed = 0;
  int special = 0;        // 0: none; else plants 0/NaN/inf/... at one element
  std::int64_t huge = 0;  // non-zero: axis 0 has this extent (a broadcast view)
};

inline std::string describe(const InputSpec& s) {
  static const char* kLayouts[] = {"contiguous", "strided", "flipped", "broadcast", "permuted"};
  std::ostringstream os;
  os << name(s.dtype) << shape_to_string(s.shape) << " " << kLayouts[static_cast<int>(s.layout)]
     << " seed=" << s.seed << " special=" << s.special;
  if (s.huge != 0) os << " huge=" << s.huge;
  return os.str();
}

inline InputSpec decode_input(Bytes& in) {
  static constexpr DType kDTypes[16] = {f32,  f32,  f64,  f64, f64, f64, c64,   c64,
                                        c128, c128, c128, f64, i32, i64, bool_, f32};
  InputSpec s;
  s.dtype = kDTypes[in.u8() % 16];
  const std::int64_t rank = in.pick(4);
  for (std::int64_t d = 0; d < rank; ++d) s.shape.push_back(in.pick(5));
  s.layout = static_cast<Layout>(in.pick(5));
  s.seed = in.u8();
  const std::uint8_t sp = in.u8();
  s.special = sp >= 192 ? 1 + sp % 6 : 0;
  const std::uint8_t h = in.u8();
  if (h >= 250) {
    s.huge = h == 255 ? std::int64_t{1} << 62 : std::int64_t{1} << 40;
    if (s.shape.empty()) s.shape.push_back(1);
  }
  return s;
}

/// The input as a view with the spec's layout (same values in every tier).
inline Tensor make_input(const InputSpec& s, Backend& be) {
  if (s.huge != 0) {
    Shape shape = s.shape;
    shape[0] = s.huge;
    return full(Shape(shape.size(), 1), Scalar(1.5), s.dtype).broadcast_to(shape);
  }
  const std::int64_t rank = static_cast<std::int64_t>(s.shape.size());
  Shape base = s.shape;
  std::vector<std::int64_t> perm(rank), inv(rank);
  for (std::int64_t d = 0; d < rank; ++d) perm[d] = (d + 1) % rank;
  for (std::int64_t d = 0; d < rank; ++d) inv[perm[d]] = d;
  if (s.layout == Layout::Strided) {
    for (auto& e : base) e = 2 * e + 1;
  } else if (s.layout == Layout::Broadcast) {
    for (std::int64_t d = 0; d < rank; ++d)
      if (((s.seed >> d) & 1) != 0) base[d] = 1;
  } else if (s.layout == Layout::Permuted) {
    for (std::int64_t j = 0; j < rank; ++j) base[j] = s.shape[inv[j]];
  }
  Generator gen(s.seed);
  const DType gen_dtype = is_floating(s.dtype) || is_complex(s.dtype) ? s.dtype : f64;
  Tensor t = randn(base, gen_dtype, gen);
  if (s.dtype == bool_) {
    t = gt(t, Tensor::scalar(0.0), be);
  } else if (s.dtype == i32 || s.dtype == i64) {
    t = cast(mul(t, Tensor::scalar(3.0), be), s.dtype, be);
  }
  if (s.special != 0 && t.numel() > 0 && gen_dtype == s.dtype) {
    static const double kSpecials[6] = {0.0, NAN, INFINITY, -INFINITY, 0.5, -1.0};
    Tensor one = Tensor::from_storage(t.storage(), t.dtype(), {}, {},
                                      static_cast<std::int64_t>(s.seed) % t.numel());
    Tensor::copy_into(Tensor::scalar(Scalar(kSpecials[s.special - 1])), one);
  }
  switch (s.layout) {
    case Layout::Contiguous:
    case Layout::Broadcast:
      return s.layout == Layout::Broadcast ? t.broadcast_to(s.shape) : t;
    case Layout::Strided:
      for (std::int64_t d = 0; d < rank; ++d) t = t.slice(d, 1, 1 + 2 * s.shape[d], 2);
      return t;
    case Layout::Flipped:
      for (std::int64_t d = 0; d < rank; ++d) t = t.slice(d, std::nullopt, std::nullopt, -1);
      return t;
    case Layout::Permuted:
      return t.permute(perm);
  }
  return t;
}

// ---- the tiers ------------------------------------------------------------------

/// The direct tier: Tensor ops with an explicit backend.
struct Direct {
  using V = Tensor;
  Backend* be;
  std::int64_t rank(const Tensor& x) const { return x.rank(); }
  std::int64_t dim(const Tensor& x, std::int64_t d) const { return x.shape()[d]; }
  DType dtype(const Tensor& x) const { return x.dtype(); }
  Tensor constant(const Tensor& t) const { return t; }
  Tensor unary(UnaryOp op, const Tensor& x) const { return tenferro::unary(op, x, *be); }
  Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) const {
    return tenferro::binary(op, a, b, *be);
  }
  Tensor polygamma(std::int64_t n, const Tensor& x) const { return tenferro::polygamma(n, x, *be); }
  Tensor frexp_mantissa(const Tensor& x) const { return tenferro::frexp(x, *be).first; }
  Tensor clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) const {
    return tenferro::clamp(x, lo, hi, *be);
  }
  Tensor nonzero(const Tensor& x) const { return tenferro::ne(x, zeros({}, x.dtype()), *be); }
  Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) const {
    return tenferro::where(c, a, b, *be);
  }
  Tensor reduce(ReduceOp op, const Tensor& x, const Axes& axes, bool keepdim) const {
    return tenferro::reduce(op, x, axes, *be, keepdim);
  }
  Tensor var(const Tensor& x, const Axes& axes, double corr, bool keepdim, bool sd) const {
    return sd ? tenferro::std_dev(x, axes, *be, corr, keepdim)
              : tenferro::var(x, axes, *be, corr, keepdim);
  }
  Tensor argreduce(bool mx, const Tensor& x, std::int64_t axis, bool keepdim) const {
    return mx ? tenferro::argmax(x, axis, *be, keepdim) : tenferro::argmin(x, axis, *be, keepdim);
  }
  Tensor matmul(const Tensor& a, const Tensor& b) const { return tenferro::matmul(a, b, *be); }
  Tensor dot_general(const Tensor& a, const Tensor& b, const DotDims& d) const {
    return tenferro::dot_general(a, b, d, *be);
  }
  Tensor permute(const Tensor& x, const Axes& p) const { return tenferro::permute(x, p, *be); }
  Tensor transpose(const Tensor& x, std::int64_t a, std::int64_t b) const {
    return tenferro::copy(x.transpose(a, b), *be);
  }
  Tensor reshape(const Tensor& x, const Shape& s) const { return tenferro::reshape(x, s, *be); }
  Tensor broadcast_to(const Tensor& x, const Shape& s) const {
    return tenferro::copy(x.broadcast_to(s), *be);
  }
  Tensor broadcast_in_dim(const Tensor& x, const Shape& s, const Axes& dims) const {
    return tenferro::broadcast_in_dim(x, s, dims, *be);
  }
  Tensor slice(const Tensor& x, const Shape& start, const Shape& limit, const Shape& step) const {
    return tenferro::slice(x, start, limit, step, *be);
  }
  Tensor pad(const Tensor& x, const Shape& lo, const Shape& hi, Scalar v, const Shape& in) const {
    return tenferro::pad(x, lo, hi, v, *be, in);
  }
  Tensor concatenate(const Tensor& a, const Tensor& b, std::int64_t axis) const {
    return tenferro::concatenate({a, b}, axis, *be);
  }
  Tensor stack(const Tensor& a, const Tensor& b, std::int64_t axis) const {
    return tenferro::stack({a, b}, axis, *be);
  }
  Tensor flip(const Tensor& x, const Axes& axes) const { return tenferro::flip(x, axes, *be); }
  Tensor diagonal(const Tensor& x, std::int64_t o, std::int64_t a1, std::int64_t a2) const {
    return tenferro::diagonal(x, o, a1, a2, *be);
  }
  Tensor diag_embed(const Tensor& x, std::int64_t o) const {
    return tenferro::diag_embed(x, o, *be);
  }
  Tensor tri(bool lower, const Tensor& x, std::int64_t k) const {
    return lower ? tenferro::tril(x, k, *be) : tenferro::triu(x, k, *be);
  }
  Tensor index_select(const Tensor& x, std::int64_t axis, const Tensor& idx) const {
    return tenferro::index_select(x, axis, idx, *be);
  }
  Tensor take_along_axis(const Tensor& x, const Tensor& idx, std::int64_t axis) const {
    return tenferro::take_along_axis(x, idx, axis, *be);
  }
  Tensor scatter_add(const Tensor& x, std::int64_t axis, const Tensor& i, const Tensor& s) const {
    return tenferro::scatter_add(x, axis, i, s, *be);
  }
  Tensor convert(const Tensor& x, DType d, bool lossy) const {
    return lossy ? tenferro::cast(x, d, *be) : tenferro::convert(x, d, *be);
  }
  Tensor cumulative(bool prod, const Tensor& x, std::int64_t axis) const {
    return prod ? tenferro::cumprod(x, axis, *be) : tenferro::cumsum(x, axis, *be);
  }
  Tensor argsort(const Tensor& x, std::int64_t axis, bool desc) const {
    return tenferro::argsort(x, axis, *be, desc);
  }
  Tensor sort(const Tensor& x, std::int64_t axis, bool desc) const {
    return tenferro::sort(x, axis, *be, desc).first;
  }
  Tensor topk(const Tensor& x, std::int64_t k, std::int64_t axis, bool largest) const {
    return tenferro::topk(x, k, axis, *be, largest).first;
  }
  Tensor kron(const Tensor& a, const Tensor& b) const { return tenferro::kron(a, b, *be); }
  Tensor trace(const Tensor& x, std::int64_t o, std::int64_t a1, std::int64_t a2) const {
    return tenferro::trace(x, *be, o, a1, a2);
  }
  Tensor roll(const Tensor& x, const Shape& shifts, const Axes& axes) const {
    return tenferro::roll(x, shifts, axes, *be);
  }
  Tensor roll_flat(const Tensor& x, std::int64_t shift) const {
    return tenferro::roll(x, shift, *be);
  }
  Tensor einsum(const std::string& eq, const std::vector<Tensor>& xs) const {
    return tenferro::einsum(eq, xs, *be);
  }
  Tensor linalg(int which, const Tensor& a, const Tensor& b) const {
    switch (which) {
      case 0:
        return linalg::inv(a, *be);
      case 1:
        return linalg::det(a, *be);
      case 2:
        return linalg::svdvals(a, *be);
      case 3:
        return linalg::eigvalsh(a, 'L', *be);
      case 4:
        return linalg::matrix_exp(a, *be);
      default:
        return linalg::solve(a, b, true, *be);
    }
  }
  Tensor fft(int which, const Tensor& x, std::optional<std::int64_t> n, std::int64_t axis,
             const std::string& norm) const {
    switch (which) {
      case 0:
        return tenferro::fft::fft(x, n, axis, norm, *be);
      case 1:
        return tenferro::fft::ifft(x, n, axis, norm, *be);
      case 2:
        return tenferro::fft::rfft(x, n, axis, norm, *be);
      default:
        return tenferro::fft::irfft(x, n, axis, norm, *be);
    }
  }
};

/// The eager and the traced tier: the one op surface of tenferro/ad/ops.hpp.
template <AdTensor T>
struct Ad {
  using V = T;
  EagerRuntimePtr ert;  // eager only
  std::int64_t rank(const T& x) const { return x.rank(); }
  std::int64_t dim(const T& x, std::int64_t d) const {
    if constexpr (std::is_same_v<T, EagerTensor>) {
      return x.shape()[d];
    } else {
      return x.shape()[d].try_constant().value_or(0);
    }
  }
  DType dtype(const T& x) const { return x.dtype(); }
  T constant(const Tensor& t) const {
    if constexpr (std::is_same_v<T, EagerTensor>) {
      return ert->tensor(t);
    } else {
      return tenferro::constant(t);
    }
  }
  T unary(UnaryOp op, const T& x) const { return tenferro::unary(op, x); }
  T binary(BinaryOp op, const T& a, const T& b) const { return tenferro::binary(op, a, b); }
  T polygamma(std::int64_t n, const T& x) const { return tenferro::polygamma(n, x); }
  T frexp_mantissa(const T& x) const { return tenferro::frexp(x).first; }
  T clamp(const T& x, std::optional<Scalar> lo, std::optional<Scalar> hi) const {
    return tenferro::clamp(x, lo, hi);
  }
  T nonzero(const T& x) const { return tenferro::ne(x, tenferro::zeros_like(x)); }
  T where(const T& c, const T& a, const T& b) const { return tenferro::where(c, a, b); }
  T reduce(ReduceOp op, const T& x, const Axes& axes, bool keepdim) const {
    return tenferro::reduce(op, x, axes, keepdim);
  }
  T var(const T& x, const Axes& axes, double corr, bool keepdim, bool sd) const {
    return sd ? tenferro::std_dev(x, axes, corr, keepdim) : tenferro::var(x, axes, corr, keepdim);
  }
  T argreduce(bool mx, const T& x, std::int64_t axis, bool keepdim) const {
    return mx ? tenferro::argmax(x, axis, keepdim) : tenferro::argmin(x, axis, keepdim);
  }
  T matmul(const T& a, const T& b) const { return tenferro::matmul(a, b); }
  T dot_general(const T& a, const T& b, const DotDims& d) const {
    return tenferro::dot_general(a, b, d);
  }
  T permute(const T& x, const Axes& p) const { return tenferro::permute(x, p); }
  T transpose(const T& x, std::int64_t a, std::int64_t b) const {
    return tenferro::transpose(x, a, b);
  }
  T reshape(const T& x, const Shape& s) const { return tenferro::reshape(x, ShapeArg(s)); }
  T broadcast_to(const T& x, const Shape& s) const {
    return tenferro::broadcast_to(x, ShapeArg(s));
  }
  T broadcast_in_dim(const T& x, const Shape& s, const Axes& dims) const {
    return tenferro::broadcast_in_dim(x, ShapeArg(s), dims);
  }
  T slice(const T& x, const Shape& start, const Shape& limit, const Shape& step) const {
    return tenferro::slice(x, start, limit, step);
  }
  T pad(const T& x, const Shape& lo, const Shape& hi, Scalar v, const Shape& in) const {
    return tenferro::pad(x, lo, hi, v, in);
  }
  T concatenate(const T& a, const T& b, std::int64_t axis) const {
    return tenferro::concatenate({a, b}, axis);
  }
  T stack(const T& a, const T& b, std::int64_t axis) const { return tenferro::stack({a, b}, axis); }
  T flip(const T& x, const Axes& axes) const { return tenferro::flip(x, axes); }
  T diagonal(const T& x, std::int64_t o, std::int64_t a1, std::int64_t a2) const {
    return tenferro::diagonal(x, o, a1, a2);
  }
  T diag_embed(const T& x, std::int64_t o) const { return tenferro::diag_embed(x, o); }
  T tri(bool lower, const T& x, std::int64_t k) const {
    return lower ? tenferro::tril(x, k) : tenferro::triu(x, k);
  }
  T index_select(const T& x, std::int64_t axis, const T& idx) const {
    return tenferro::index_select(x, axis, idx);
  }
  T take_along_axis(const T& x, const T& idx, std::int64_t axis) const {
    return tenferro::take_along_axis(x, idx, axis);
  }
  T scatter_add(const T& x, std::int64_t axis, const T& i, const T& s) const {
    return tenferro::scatter_add(x, axis, i, s);
  }
  T convert(const T& x, DType d, bool lossy) const {
    return lossy ? tenferro::cast(x, d) : tenferro::convert(x, d);
  }
  T cumulative(bool prod, const T& x, std::int64_t axis) const {
    return prod ? tenferro::cumprod(x, axis) : tenferro::cumsum(x, axis);
  }
  T argsort(const T& x, std::int64_t axis, bool desc) const {
    return tenferro::argsort(x, axis, desc);
  }
  T sort(const T& x, std::int64_t axis, bool desc) const {
    return tenferro::sort(x, axis, desc).first;
  }
  T topk(const T& x, std::int64_t k, std::int64_t axis, bool largest) const {
    return tenferro::topk(x, k, axis, largest).first;
  }
  T kron(const T& a, const T& b) const { return tenferro::kron(a, b); }
  T trace(const T& x, std::int64_t o, std::int64_t a1, std::int64_t a2) const {
    return tenferro::trace(x, o, a1, a2);
  }
  T roll(const T& x, const Shape& shifts, const Axes& axes) const {
    return tenferro::roll(x, std::span<const std::int64_t>(shifts.data(), shifts.size()), axes);
  }
  T roll_flat(const T& x, std::int64_t shift) const { return tenferro::roll(x, shift); }
  T einsum(const std::string& eq, const std::vector<T>& xs) const {
    return tenferro::einsum(eq, xs);
  }
  T linalg(int which, const T& a, const T& b) const {
    switch (which) {
      case 0:
        return linalg::inv(a);
      case 1:
        return linalg::det(a);
      case 2:
        return linalg::svdvals(a);
      case 3:
        return linalg::eigvalsh(a, 'L');
      case 4:
        return linalg::matrix_exp(a);
      default:
        return linalg::solve(a, b, true);
    }
  }
  T fft(int which, const T& x, std::optional<std::int64_t> n, std::int64_t axis,
        const std::string& norm) const {
    switch (which) {
      case 0:
        return tenferro::fft::fft(x, n, axis, norm);
      case 1:
        return tenferro::fft::ifft(x, n, axis, norm);
      case 2:
        return tenferro::fft::rfft(x, n, axis, norm);
      default:
        return tenferro::fft::irfft(x, n, axis, norm);
    }
  }
};

using Eager = Ad<EagerTensor>;
using Traced = Ad<TracedTensor>;

// ---- the op table ---------------------------------------------------------------

inline constexpr int kOpKinds = 37;
inline constexpr std::size_t kOpBytes = 24;

struct OpSpec {
  int kind = 0;
  std::uint8_t bytes[kOpBytes] = {};
};

struct ProgramSpec {
  std::vector<InputSpec> inputs;
  std::vector<OpSpec> ops;
  std::uint8_t ad_seed = 0;
};

inline ProgramSpec decode(const std::uint8_t* data, std::size_t size) {
  Bytes in(data, size);
  ProgramSpec p;
  const std::int64_t n_inputs = 1 + in.pick(3);
  for (std::int64_t i = 0; i < n_inputs; ++i) p.inputs.push_back(decode_input(in));
  const std::int64_t n_ops = 1 + in.pick(8);
  p.ad_seed = in.u8();
  for (std::int64_t k = 0; k < n_ops; ++k) {
    OpSpec op;
    op.kind = static_cast<int>(in.pick(kOpKinds));
    for (auto& b : op.bytes) b = in.u8();
    p.ops.push_back(op);
  }
  return p;
}

template <class S>
std::string list(const S& xs) {
  std::ostringstream os;
  os << "{";
  for (std::size_t i = 0; i < xs.size(); ++i) os << (i ? ", " : "") << xs[i];
  os << "}";
  return os.str();
}

/// A subset of x's axes (in order), rarely with a repeated or invalid axis.
inline Axes axis_subset(Bytes& r, std::int64_t rank) {
  Axes axes;
  const std::uint8_t bits = r.u8();
  for (std::int64_t d = 0; d < rank; ++d)
    if (((bits >> d) & 1) != 0) axes.push_back(d);
  const std::uint8_t extra = r.u8();
  if (extra >= 240) axes.push_back(rank == 0 ? 0 : extra % (rank + 1));
  return axes;
}

/// An i64 constant of `shape` with entries in [lo, hi] (rarely extreme).
inline Tensor index_tensor(Bytes& r, const Shape& shape, std::int64_t lo, std::int64_t hi) {
  const std::int64_t n = shape_numel(shape, "fuzz");
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = hi < lo ? r.param(0, 0) : r.param(lo, hi);
  return Tensor::from_col_major(shape, v);
}

/// More elements than any program of the table makes from small inputs.
template <class Tier>
bool is_huge(const Tier& t, const typename Tier::V& x) {
  std::int64_t n = 1;
  for (std::int64_t d = 0; d < t.rank(x); ++d) {
    const std::int64_t e = t.dim(x, d);
    if (e == 0) return false;
    if (e > (std::int64_t{1} << 24) || n > (std::int64_t{1} << 24))
      n = std::int64_t{1} << 25;
    else
      n *= e;
  }
  return n > (std::int64_t{1} << 24);
}

/// Counts of what the checks saw (the test asserts the table is exercised).
struct Stats {
  std::uint64_t executions = 0;
  std::uint64_t ok = 0;            // every tier ran the whole program
  std::uint64_t typed_errors = 0;  // every tier raised the same kind
  std::uint64_t ad_checks = 0;     // jvp/vjp/grad compared
  std::uint64_t ops_ok[64] = {};   // per op kind, ops that ran in every tier
  std::uint64_t known_issue = 0;   // skipped: the open svdvals/eigvalsh finding
};
inline Stats& stats() {
  static Stats s;
  return s;
}

/// Whether the program runs svdvals or eigvalsh (see the open finding in
/// check_ad).
inline bool& uses_values_decomposition() {
  static bool used = false;
  return used;
}

/// Runs one op of the table in `tier` on the values so far; appends a line
/// describing it to `log` (the direct tier's run) before it runs.
template <class Tier>
typename Tier::V apply_op(const Tier& t, const std::vector<typename Tier::V>& vals,
                          const OpSpec& op, std::ostringstream* log) {
  using V = typename Tier::V;
  Bytes r(op.bytes, kOpBytes);
  const std::size_t ia = static_cast<std::size_t>(r.pick(static_cast<std::int64_t>(vals.size())));
  const std::size_t ib = static_cast<std::size_t>(r.pick(static_cast<std::int64_t>(vals.size())));
  const std::size_t ic = static_cast<std::size_t>(r.pick(static_cast<std::int64_t>(vals.size())));
  const V& a = vals[ia];
  const V& b = vals[ib];
  const std::int64_t ra = t.rank(a);
  Shape sa;
  for (std::int64_t d = 0; d < ra; ++d) sa.push_back(t.dim(a, d));
  // A huge operand (a broadcast view of 2^40 elements) only meets ops that
  // allocate a result of its size, which must fail with OutOfMemory: a
  // reduction over it would run for hours.
  int kind = op.kind;
  if (is_huge(t, a) || is_huge(t, b) || is_huge(t, vals[ic])) kind %= 2;
  std::ostringstream os;
  os << "%" << vals.size() << " = ";
  auto note = [&](auto&&... parts) {
    if (log != nullptr) {
      (os << ... << parts);
      *log << "  " << os.str() << "\n";
      if (std::getenv("OPSEQ_TRACE") != nullptr) std::fprintf(stderr, "  %s\n", os.str().c_str());
    }
  };
  const std::string va = "%" + std::to_string(ia), vb = "%" + std::to_string(ib);
  switch (kind) {
    case 0: {
      const auto u = static_cast<UnaryOp>(r.pick(kUnaryOpCount));
      note(name(u), "(", va, ")");
      return t.unary(u, a);
    }
    case 1: {
      const auto bo = static_cast<BinaryOp>(r.pick(kBinaryOpCount));
      note(name(bo), "(", va, ", ", vb, ")");
      return t.binary(bo, a, b);
    }
    case 2: {
      const std::int64_t n = r.param(0, 3);
      note("polygamma(", n, ", ", va, ")");
      return t.polygamma(n, a);
    }
    case 3:
      note("frexp(", va, ").mantissa");
      return t.frexp_mantissa(a);
    case 4: {
      std::optional<Scalar> lo, hi;
      if (r.pick(3) != 0) lo = Scalar(static_cast<double>(r.pick(5)) - 2.5);
      if (r.pick(3) != 0) hi = Scalar(static_cast<double>(r.pick(5)) - 1.5);
      note("clamp(", va, ", ", lo ? std::to_string(lo->to<double>()) : "none", ", ",
           hi ? std::to_string(hi->to<double>()) : "none", ")");
      return t.clamp(a, lo, hi);
    }
    case 5:
      note("where(%", ic, " != 0, ", va, ", ", vb, ")");
      return t.where(t.nonzero(vals[ic]), a, b);
    case 6: {
      const auto ro = static_cast<ReduceOp>(r.pick(8));
      const Axes axes = axis_subset(r, ra);
      const bool keep = r.pick(2) != 0;
      note("reduce ", name(ro), "(", va, ", axes=", list(axes), ", keepdim=", keep, ")");
      return t.reduce(ro, a, axes, keep);
    }
    case 7: {
      const Axes axes = axis_subset(r, ra);
      const double corr = static_cast<double>(r.pick(3));
      const bool keep = r.pick(2) != 0, sd = r.pick(2) != 0;
      note(sd ? "std" : "var", "(", va, ", axes=", list(axes), ", correction=", corr,
           ", keepdim=", keep, ")");
      return t.var(a, axes, corr, keep, sd);
    }
    case 8: {
      const bool mx = r.pick(2) != 0, keep = r.pick(2) != 0;
      const std::int64_t axis = r.axis(ra);
      note(mx ? "argmax(" : "argmin(", va, ", ", axis, ", keepdim=", keep, ")");
      return t.argreduce(mx, a, axis, keep);
    }
    case 9:
      note("matmul(", va, ", ", vb, ")");
      return t.matmul(a, b);
    case 10: {
      DotDims d;
      const std::int64_t nc = r.pick(2) + (r.u8() >= 250 ? 1 : 0);
      for (std::int64_t k = 0; k < nc; ++k) {
        d.lhs_contracting.push_back(r.axis(ra));
        d.rhs_contracting.push_back(r.axis(t.rank(b)));
      }
      note("dot_general(", va, ", ", vb, ", contract ", list(d.lhs_contracting), " with ",
           list(d.rhs_contracting), ")");
      return t.dot_general(a, b, d);
    }
    case 11: {
      Axes perm;
      const std::int64_t shift = r.pick(4);
      for (std::int64_t d = 0; d < ra; ++d) perm.push_back((d + shift) % ra);
      if (r.u8() >= 240 && ra > 0) perm[0] = perm[ra - 1];
      note("permute(", va, ", ", list(perm), ")");
      return t.permute(a, perm);
    }
    case 12: {
      const std::int64_t x = r.axis(ra), y = r.axis(ra);
      note("transpose(", va, ", ", x, ", ", y, ")");
      return t.transpose(a, x, y);
    }
    case 13: {
      Shape s;
      std::int64_t n = 1;
      for (auto e : sa) n *= e;
      switch (r.pick(6)) {
        case 0:
          s = {n};
          break;
        case 1:
          s = {-1};
          break;
        case 2:
          for (std::size_t i = sa.size(); i-- > 0;) s.push_back(sa[i]);
          break;
        case 3:
          s = {1, n};
          break;
        case 4:
          s = sa;
          if (!s.empty()) s[r.pick(static_cast<std::int64_t>(s.size()))] = -1;
          break;
        default: {
          const std::int64_t k = r.pick(4);
          for (std::int64_t d = 0; d < k; ++d) s.push_back(r.param(-1, 4));
        }
      }
      note("reshape(", va, ", ", list(s), ")");
      return t.reshape(a, s);
    }
    case 14: {
      Shape s = sa;
      const std::int64_t e = r.param(0, 3);
      if (r.pick(2) == 0 || s.empty()) {
        s.push_back(e);
      } else {
        s[r.pick(static_cast<std::int64_t>(s.size()))] = e;
      }
      if (r.pick(2) == 0) {
        // Right-aligned: the new axes lead (column-major).
        std::rotate(s.begin(), s.end() - 1, s.end());
        if (s.size() > sa.size()) {
          s = Shape{s[0]};
          for (auto x : sa) s.push_back(x);
        }
      }
      note("broadcast_to(", va, ", ", list(s), ")");
      return t.broadcast_to(a, s);
    }
    case 15: {
      Shape s;
      Axes dims;
      const std::int64_t at = r.pick(ra + 1);
      for (std::int64_t d = 0; d <= ra; ++d) {
        if (d == at) s.push_back(r.param(1, 3));
        if (d < ra) {
          dims.push_back(static_cast<std::int64_t>(s.size()));
          s.push_back(sa[d]);
        }
      }
      note("broadcast_in_dim(", va, ", ", list(s), ", dims=", list(dims), ")");
      return t.broadcast_in_dim(a, s, dims);
    }
    case 16: {
      Shape start, limit, step;
      for (std::int64_t d = 0; d < ra; ++d) {
        const std::int64_t s0 = r.param(0, sa[d]);
        start.push_back(s0);
        limit.push_back(s0 >= 0 && s0 <= sa[d] ? s0 + r.pick(sa[d] - s0 + 1) : r.param(0, 4));
        step.push_back(r.param(1, 3));
      }
      note("slice(", va, ", ", list(start), ", ", list(limit), ", ", list(step), ")");
      return t.slice(a, start, limit, step);
    }
    case 17: {
      Shape lo, hi, in;
      for (std::int64_t d = 0; d < ra; ++d) {
        lo.push_back(r.param(-1, 2));
        hi.push_back(r.param(-1, 2));
        in.push_back(r.pick(4) == 0 ? r.param(0, 1) : 0);
      }
      const double v = r.pick(2) == 0 ? 0.0 : 1.5;
      note("pad(", va, ", ", list(lo), ", ", list(hi), ", ", v, ", interior=", list(in), ")");
      return t.pad(a, lo, hi, Scalar(v), in);
    }
    case 18: {
      const std::int64_t axis = r.axis(ra);
      note("concatenate(", va, ", ", vb, ", ", axis, ")");
      return t.concatenate(a, b, axis);
    }
    case 19: {
      const std::int64_t axis = r.axis(ra, 1);
      note("stack(", va, ", ", vb, ", ", axis, ")");
      return t.stack(a, b, axis);
    }
    case 20: {
      const Axes axes = axis_subset(r, ra);
      note("flip(", va, ", ", list(axes), ")");
      return t.flip(a, axes);
    }
    case 21: {
      const std::int64_t o = r.param(-2, 2), x = r.axis(ra), y = r.axis(ra);
      note("diagonal(", va, ", ", o, ", ", x, ", ", y, ")");
      return t.diagonal(a, o, x, y);
    }
    case 22: {
      const std::int64_t o = r.param(-2, 2);
      note("diag_embed(", va, ", ", o, ")");
      return t.diag_embed(a, o);
    }
    case 23: {
      const bool lower = r.pick(2) != 0;
      const std::int64_t k = r.param(-2, 2);
      note(lower ? "tril(" : "triu(", va, ", ", k, ")");
      return t.tri(lower, a, k);
    }
    case 24: {
      const std::int64_t axis = r.axis(ra);
      const std::int64_t e = axis >= -ra && axis < ra ? sa[axis < 0 ? axis + ra : axis] : 1;
      const Tensor idx = index_tensor(r, {r.pick(4)}, -e, e - 1);
      note("index_select(", va, ", ", axis, ", ", list(idx.to_vector<std::int64_t>()), ")");
      return t.index_select(a, axis, t.constant(idx));
    }
    case 25: {
      const std::int64_t axis = r.axis(ra);
      const bool desc = r.pick(2) != 0;
      note("take_along_axis(", va, ", argsort(", va, ", ", axis, ", ", desc, "), ", axis, ")");
      return t.take_along_axis(a, t.argsort(a, axis, desc), axis);
    }
    case 26: {
      const std::int64_t axis = r.axis(ra);
      const std::int64_t e = axis >= -ra && axis < ra ? sa[axis < 0 ? axis + ra : axis] : 1;
      Shape sb;
      for (std::int64_t d = 0; d < t.rank(b); ++d) sb.push_back(t.dim(b, d));
      const Tensor idx = index_tensor(r, sb, 0, e - 1);
      note("scatter_add(", va, ", ", axis, ", ", list(idx.to_vector<std::int64_t>()), ", ", vb,
           ")");
      return t.scatter_add(a, axis, t.constant(idx), b);
    }
    case 27: {
      const DType d = kAllDTypes[r.pick(7)];
      const bool lossy = r.pick(3) != 0;
      note(lossy ? "cast(" : "convert(", va, ", ", name(d), ")");
      return t.convert(a, d, lossy);
    }
    case 28: {
      const bool prod = r.pick(2) != 0;
      const std::int64_t axis = r.axis(ra);
      note(prod ? "cumprod(" : "cumsum(", va, ", ", axis, ")");
      return t.cumulative(prod, a, axis);
    }
    case 29: {
      const int which = static_cast<int>(r.pick(3));
      const std::int64_t axis = r.axis(ra);
      const bool desc = r.pick(2) != 0;
      if (which == 0) {
        note("argsort(", va, ", ", axis, ", ", desc, ")");
        return t.argsort(a, axis, desc);
      }
      if (which == 1) {
        note("sort(", va, ", ", axis, ", ", desc, ").values");
        return t.sort(a, axis, desc);
      }
      const std::int64_t k = r.param(0, 3);
      note("topk(", va, ", ", k, ", ", axis, ", largest=", desc, ").values");
      return t.topk(a, k, axis, desc);
    }
    case 30:
      note("kron(", va, ", ", vb, ")");
      return t.kron(a, b);
    case 31: {
      const std::int64_t o = r.param(-2, 2), x = r.axis(ra), y = r.axis(ra);
      note("trace(", va, ", ", o, ", ", x, ", ", y, ")");
      return t.trace(a, o, x, y);
    }
    case 32: {
      if (r.pick(3) == 0) {
        const std::int64_t s = r.param(-5, 5);
        note("roll(", va, ", ", s, ")");
        return t.roll_flat(a, s);
      }
      Shape shifts;
      Axes axes;
      const std::int64_t n = 1 + r.pick(2);
      for (std::int64_t k = 0; k < n; ++k) {
        shifts.push_back(r.param(-5, 5));
        axes.push_back(r.axis(ra));
      }
      note("roll(", va, ", ", list(shifts), ", ", list(axes), ")");
      return t.roll(a, shifts, axes);
    }
    case 34: {
      // Labels from "ijkl" per axis (repeats make traces and diagonals), an
      // explicit output of some of them, rarely a label too many.
      const bool two = r.pick(2) != 0;
      auto term = [&](std::int64_t rank) {
        std::string t;
        for (std::int64_t d = 0; d < rank; ++d) t += static_cast<char>('i' + r.pick(4));
        if (r.u8() >= 248) t += 'm';
        return t;
      };
      std::string eq = term(ra);
      if (two) eq += "," + term(t.rank(b));
      if (r.pick(4) != 0) {
        const std::uint8_t bits = r.u8();
        std::string out;
        for (int l = 0; l < 4; ++l) {
          const char c = static_cast<char>('i' + l);
          if (((bits >> l) & 1) != 0 && eq.find(c) != std::string::npos) out += c;
        }
        if ((bits & 16) != 0) std::reverse(out.begin(), out.end());
        eq += "->" + out;
      }
      note("einsum(\"", eq, "\", ", va, two ? ", " + vb : std::string(), ")");
      return t.einsum(eq, two ? std::vector<V>{a, b} : std::vector<V>{a});
    }
    case 35: {
      static const char* kFft[4] = {"fft", "ifft", "rfft", "irfft"};
      static const char* kNorms[4] = {"backward", "ortho", "forward", "bad"};
      const int which = static_cast<int>(r.pick(4));
      std::optional<std::int64_t> n;
      if (r.pick(2) != 0) n = r.param(0, 5);
      const std::int64_t axis = r.axis(ra);
      const std::string norm = kNorms[r.u8() >= 248 ? 3 : r.pick(3)];
      note(kFft[which], "(", va, ", n=", n ? std::to_string(*n) : "none", ", axis=", axis,
           ", norm=", norm, ")");
      return t.fft(which, a, n, axis, norm);
    }
    case 36: {
      // Linear algebra on [n, n, batch...]; eigvalsh gets a + a^H (its
      // derivative, like PyTorch's, assumes a Hermitian input).
      static const char* kLinalg[6] = {"inv", "det", "svdvals", "eigvalsh", "matrix_exp", "solve"};
      const int which = static_cast<int>(r.pick(6));
      if (which == 2 || which == 3) uses_values_decomposition() = true;
      if (which == 3) {
        note("eigvalsh(", va, " + conj(transpose(", va, ")))");
        return t.linalg(3, t.binary(BinaryOp::Add, a, t.unary(UnaryOp::Conj, t.transpose(a, 0, 1))),
                        b);
      }
      note(kLinalg[which], "(", va, which == 5 ? ", " + vb : std::string(), ")");
      return t.linalg(which, a, b);
    }
    default: {
      const bool both = r.pick(2) != 0;
      note(both ? "where(%" : "complex(", both ? std::to_string(ic) : va, ", ", va, ", ", vb, ")");
      if (both) return t.where(t.nonzero(vals[ic]), b, a);
      return t.binary(BinaryOp::Complex, a, b);
    }
  }
}

// ---- running a program in each tier ---------------------------------------------

/// What one tier did: values, or a typed error, or something else (a finding).
struct Outcome {
  bool ok = false;
  bool typed = true;  // false: an exception that is not a tenferro::Error
  ErrorKind kind = ErrorKind::Internal;
  std::string what;
  std::vector<Tensor> values;
};

template <class F>
Outcome capture(F&& f) {
  Outcome o;
  try {
    o.values = f();
    o.ok = true;
  } catch (const Error& e) {
    o.kind = e.kind();
    o.what = e.what();
  } catch (const std::exception& e) {
    o.typed = false;
    o.what = std::string("std::exception: ") + e.what();
  }
  return o;
}

/// Every op's result, in order, given the inputs as values of the tier.
/// `at` (optional) holds the index of the op being built.
template <class Tier>
std::vector<typename Tier::V> build(const Tier& t, const ProgramSpec& p,
                                    std::vector<typename Tier::V> vals, std::ostringstream* log,
                                    std::size_t* at = nullptr) {
  const std::size_t n_inputs = vals.size();
  for (std::size_t k = 0; k < p.ops.size(); ++k) {
    if (at != nullptr) *at = k;
    vals.push_back(apply_op(t, vals, p.ops[k], log));
  }
  if (at != nullptr) *at = p.ops.size();
  vals.erase(vals.begin(), vals.begin() + static_cast<std::ptrdiff_t>(n_inputs));
  return vals;
}

inline std::vector<Tensor> make_inputs(const ProgramSpec& p, Backend& be) {
  std::vector<Tensor> in;
  for (const InputSpec& s : p.inputs) in.push_back(make_input(s, be));
  return in;
}

inline Shape input_shape(const InputSpec& s) {
  Shape shape = s.shape;
  if (s.huge != 0) shape[0] = s.huge;
  return shape;
}

/// The traced tier: placeholders, build, compile, prepare, run.
inline std::vector<Tensor> run_traced(Runtime& rt, const ProgramSpec& p,
                                      const std::vector<TracedTensor>& placeholders,
                                      const std::vector<TracedTensor>& outputs,
                                      const std::vector<Tensor>& inputs) {
  const Program prog = compile(outputs, placeholders);
  const PreparedProgram plan = prepare(rt, prog, InputSignature::of(inputs));
  (void)p;
  return run(rt, plan, inputs);
}

// ---- comparing values -----------------------------------------------------------

inline double tolerance(DType d) {
  return d == f32 || d == c64 ? 2e-4 : 1e-9;
}

/// "" when a and b agree (dtype, shape, elements), else what differs.
inline std::string compare(const Tensor& a, const Tensor& b, Backend& be, double rtol_scale = 1) {
  if (a.dtype() != b.dtype()) {
    return detail::cat("dtype ", name(a.dtype()), " vs ", name(b.dtype()));
  }
  if (a.shape() != b.shape()) {
    return detail::cat("shape ", shape_to_string(a.shape()), " vs ", shape_to_string(b.shape()));
  }
  if (a.dtype() == bool_ || a.dtype() == i32 || a.dtype() == i64) {
    const auto x = cast(a, i64, be).to_vector<std::int64_t>();
    const auto y = cast(b, i64, be).to_vector<std::int64_t>();
    for (std::size_t k = 0; k < x.size(); ++k)
      if (x[k] != y[k]) return detail::cat("element ", k, ": ", x[k], " vs ", y[k]);
    return {};
  }
  const auto x = cast(a, c128, be).to_vector<c128_t>();
  const auto y = cast(b, c128, be).to_vector<c128_t>();
  double scale = 1;
  for (const c128_t& v : x) {
    if (std::isfinite(v.real())) scale = std::max(scale, std::abs(v.real()));
    if (std::isfinite(v.imag())) scale = std::max(scale, std::abs(v.imag()));
  }
  const double tol = tolerance(a.dtype()) * rtol_scale * scale;
  auto same = [&](double u, double v) {
    if (std::isnan(u) || std::isnan(v)) return std::isnan(u) && std::isnan(v);
    if (std::isinf(u) || std::isinf(v)) return u == v;
    return std::abs(u - v) <= tol;
  };
  for (std::size_t k = 0; k < x.size(); ++k) {
    if (!same(x[k].real(), y[k].real()) || !same(x[k].imag(), y[k].imag())) {
      std::ostringstream os;
      os.precision(17);
      os << "element " << k << ": " << x[k] << " vs " << y[k];
      return os.str();
    }
  }
  return {};
}

inline bool all_finite(const Tensor& t, Backend& be) {
  if (!is_floating(t.dtype()) && !is_complex(t.dtype())) return true;
  for (const c128_t& v : cast(t, c128, be).to_vector<c128_t>())
    if (!std::isfinite(v.real()) || !std::isfinite(v.imag())) return false;
  return true;
}

/// Re(sum conj(a) b): the real inner product of the AD convention.
inline double inner(const Tensor& a, const Tensor& b, Backend& be) {
  const auto x = cast(a, c128, be).to_vector<c128_t>();
  const auto y = cast(b, c128, be).to_vector<c128_t>();
  double s = 0;
  for (std::size_t k = 0; k < x.size(); ++k) s += (std::conj(x[k]) * y[k]).real();
  return s;
}

inline double norm(const Tensor& a, Backend& be) {
  return std::sqrt(inner(a, a, be));
}

// ---- the check ------------------------------------------------------------------

struct State {
  RuntimePtr rt;
  EagerRuntimePtr ert;
  State() {
    rt = Runtime::builder()
             .backend(std::make_shared<CpuBackend>(CpuBackendOptions{.num_threads = 2}))
             .build();
    ert = EagerRuntime::make(rt);
  }
};

inline State& state() {
  static State s;
  return s;
}

[[noreturn]] inline void finding(const ProgramSpec& p, const std::string& log,
                                 const std::string& what) {
  std::fprintf(stderr, "op_sequence finding: %s\nprogram:\n", what.c_str());
  for (std::size_t i = 0; i < p.inputs.size(); ++i)
    std::fprintf(stderr, "  %%%zu = input %s\n", i, describe(p.inputs[i]).c_str());
  std::fprintf(stderr, "%s  (%zu ops decoded: kinds", log.c_str(), p.ops.size());
  for (const OpSpec& op : p.ops) std::fprintf(stderr, " %d", op.kind);
  std::fprintf(stderr, ")\n");
  std::fflush(stderr);
  __builtin_trap();
}

inline std::string describe(const Outcome& o) {
  if (o.ok) return detail::cat("ok (", o.values.size(), " values)");
  if (!o.typed) return o.what;
  return detail::cat(name(o.kind), ": ", o.what);
}

/// Checks that the runtime still computes after an error, in every tier.
inline void check_alive(State& s, const ProgramSpec& p, const std::string& log) {
  Backend& be = s.rt->backend();
  const Tensor one = ones({2});
  const std::string d = compare(add(one, one, be), full({2}, Scalar(2.0)), be);
  const std::string e =
      compare(add(s.ert->tensor(one), s.ert->tensor(one)).value(), full({2}, Scalar(2.0)), be);
  const TracedTensor x = placeholder(f64, {2});
  const std::string t =
      compare(run_compiled(*s.rt, compile({x + x}, {x}), {one})[0], full({2}, Scalar(2.0)), be);
  if (!d.empty() || !e.empty() || !t.empty()) {
    finding(p, log, "the runtime does not work after an error: " + d + e + t);
  }
}

/// The jvp/vjp/grad checks on the last value, with respect to input k.
inline void check_ad(State& s, const ProgramSpec& p, const std::vector<Tensor>& inputs,
                     const Tensor& y, std::size_t k, const std::string& log) {
  Backend& be = s.rt->backend();
  Generator gen(p.ad_seed);
  const Tensor xk = inputs[k];
  const Tensor v = randn(xk.shape(), xk.dtype(), gen);
  const Tensor u = randn(y.shape(), y.dtype(), gen);
  auto zero_if_none = [&](const auto& opt, const Tensor& like) {
    return opt ? opt->value() : zeros(like.shape(), like.dtype());
  };
  const Eager eager{s.ert};
  std::vector<EagerTensor> eager_in;
  for (const Tensor& t : inputs) eager_in.push_back(s.ert->tensor(t));
  const EagerFn f = [&](const EagerTensor& x) {
    std::vector<EagerTensor> in = eager_in;
    in[k] = x;
    return build(eager, p, in, nullptr).back();
  };
  const EagerFn loss = [&](const EagerTensor& x) {
    const EagerTensor fx = f(x);
    return sum(real(fx * conj(fx)));
  };
  const Outcome eo = capture([&] {
    const EagerTensor ex = s.ert->tensor(xk);
    const JvpResult j = jvp(f, ex, s.ert->tensor(v));
    const VjpResult c = vjp(f, ex, s.ert->tensor(u));
    const std::optional<EagerTensor> g = try_grad(loss, ex);
    return std::vector<Tensor>{zero_if_none(j.tangent, y), zero_if_none(c.cotangent, xk),
                               zero_if_none(g, xk)};
  });
  const Outcome to = capture([&] {
    const Traced traced{};
    const TracedTensor x = placeholder(xk.dtype(), to_sym_shape(xk.shape()), "x");
    const TracedTensor tv = placeholder(xk.dtype(), to_sym_shape(xk.shape()), "v");
    const TracedTensor tu = placeholder(y.dtype(), to_sym_shape(y.shape()), "u");
    std::vector<TracedTensor> in;
    for (const Tensor& t : inputs) in.push_back(constant(t));
    in[k] = x;
    const TracedTensor ty = build(traced, p, in, nullptr).back();
    const std::optional<TracedTensor> j = jvp(ty, x, tv);
    const std::optional<TracedTensor> c = vjp(ty, tu, x);
    const TracedTensor g = grad(sum(real(ty * conj(ty))), x, GradOptions{.allow_unused = true});
    const TracedTensor out[3] = {j ? *j : traced_full(to_sym_shape(y.shape()), 0.0, y.dtype()),
                                 c ? *c : traced_full(to_sym_shape(xk.shape()), 0.0, xk.dtype()),
                                 g};
    const Program prog = compile(out, {x, tv, tu});
    return run(*s.rt, prepare(*s.rt, prog, InputSignature::of(std::vector<Tensor>{xk, v, u})),
               {xk, v, u});
  });
  // Open finding (not fixed): a recorded eager svdvals / eigvalsh runs the
  // full decomposition so that its reverse pass reuses the vectors; its
  // forward mode then checks the vectors' tangents too, and raises
  // GaugeIllDefined at a zero singular value or a degenerate eigenvalue,
  // where the traced tier (values-only op, vectors never formed) returns the
  // values' tangent. OPSEQ_STRICT=1 reports it.
  if (!eo.ok && eo.typed && eo.kind == ErrorKind::GaugeIllDefined && to.ok &&
      uses_values_decomposition() && std::getenv("OPSEQ_STRICT") == nullptr) {
    ++stats().known_issue;
    return;
  }
  // The forward program ran in every tier, so its derivative may fail only
  // for a reason of its own (no rule, an ill-defined gauge, a singular
  // matrix, memory), never a validation error of an op a rule emitted.
  const auto ad_may_fail = [](ErrorKind k) {
    return category_of(k) != ErrorCategory::Validation && k != ErrorKind::Internal;
  };
  if (eo.typed && to.typed && !eo.ok && eo.kind == to.kind && !ad_may_fail(eo.kind)) {
    finding(p, log,
            "AD of a program that runs raises a validation error in both tiers: eager " +
                describe(eo) + " | traced " + describe(to));
  }
  if (!eo.typed || !to.typed || eo.ok != to.ok || (!eo.ok && eo.kind != to.kind)) {
    finding(p, log,
            "AD wrt input " + std::to_string(k) + ": eager " + describe(eo) + " | traced " +
                describe(to));
  }
  if (!eo.ok) return;
  ++stats().ad_checks;
  static const char* kWhat[3] = {"jvp", "vjp", "grad of sum |y|^2"};
  for (int i = 0; i < 3; ++i) {
    const std::string diff = compare(eo.values[i], to.values[i], be, 100);
    if (!diff.empty()) finding(p, log, std::string("eager vs traced ") + kWhat[i] + ": " + diff);
  }
  for (const Outcome* o : {&eo, &to}) {
    if (!all_finite(o->values[0], be) || !all_finite(o->values[1], be)) continue;
    const double lhs = inner(o->values[1], v, be), rhs = inner(u, o->values[0], be);
    // Cancellation (d(x / x) = 0) leaves rounding of the size of the
    // Jacobian's terms, not of the result: |u| |v| is a floor for the scale.
    const double scale = norm(o->values[1], be) * norm(v, be) +
                         norm(u, be) * norm(o->values[0], be) + norm(u, be) * norm(v, be);
    if (std::abs(lhs - rhs) > 100 * tolerance(y.dtype()) * scale) {
      finding(p, log,
              detail::cat(o == &eo ? "eager" : "traced", " adjoint: <vjp(u), v> = ", lhs,
                          " but <u, jvp(v)> = ", rhs));
    }
  }
}

inline void check(const std::uint8_t* data, std::size_t size) {
  State& s = state();
  Backend& be = s.rt->backend();
  const ProgramSpec p = decode(data, size);
  uses_values_decomposition() = false;
  std::ostringstream log;
  const Direct direct{&be};
  const Eager eager{s.ert};
  const Traced traced{};

  if (std::getenv("OPSEQ_TRACE") != nullptr) {
    std::fprintf(stderr, "program:\n");
    for (std::size_t i = 0; i < p.inputs.size(); ++i)
      std::fprintf(stderr, "  %%%zu = input %s\n", i, describe(p.inputs[i]).c_str());
  }
  std::size_t direct_at = 0;
  const Outcome d = capture([&] { return build(direct, p, make_inputs(p, be), &log, &direct_at); });
  if (std::getenv("OPSEQ_TRACE") != nullptr) {
    std::fprintf(stderr, "  (direct: %s)\n", describe(d).c_str());
  }
  const Outcome e = capture([&] {
    std::vector<EagerTensor> in;
    for (const Tensor& t : make_inputs(p, be)) in.push_back(s.ert->tensor(t));
    std::vector<Tensor> out;
    for (const EagerTensor& v : build(eager, p, in, nullptr)) out.push_back(v.value());
    return out;
  });
  std::size_t traced_at = 0;
  auto run_traced_tier = [&](const ProgramSpec& q) {
    return capture([&] {
      std::vector<TracedTensor> ph;
      for (const InputSpec& spec : q.inputs)
        ph.push_back(placeholder(spec.dtype, to_sym_shape(input_shape(spec))));
      const std::vector<TracedTensor> outputs = build(traced, q, ph, nullptr, &traced_at);
      return run_traced(*s.rt, q, ph, outputs, make_inputs(q, be));
    });
  };
  Outcome t = run_traced_tier(p);
  if (!d.ok && !t.ok && t.typed && traced_at < p.ops.size() && traced_at > direct_at) {
    // The traced tier builds every op before it runs any, so an op after the
    // one that failed in the direct tier can fail first (at build time): the
    // program up to the direct tier's failing op must fail as it did.
    ProgramSpec prefix = p;
    prefix.ops.resize(direct_at + 1);
    t = run_traced_tier(prefix);
  }
  const std::string text = log.str();
  // Out of memory is a resource outcome, not a semantic one: a tier that
  // needs no buffer for a result (the traced tier folds conj(x) = x for real
  // x, leaving a 2^40-element view) succeeds where another cannot allocate.
  const auto oom = [](const Outcome& o) {
    return !o.ok && o.typed && o.kind == ErrorKind::OutOfMemory;
  };
  if (oom(d) || oom(e) || oom(t)) {
    const bool all_typed = d.typed && e.typed && t.typed;
    const auto ok_or_oom = [&](const Outcome& o) { return o.ok || oom(o); };
    if (all_typed && ok_or_oom(d) && ok_or_oom(e) && ok_or_oom(t)) {
      ++stats().executions;
      ++stats().typed_errors;
      check_alive(s, p, text);
      return;
    }
  }
  if (!d.typed || !e.typed || !t.typed || d.ok != e.ok || d.ok != t.ok ||
      (!d.ok && (d.kind != e.kind || d.kind != t.kind))) {
    finding(p, text,
            "tiers disagree: direct " + describe(d) + " | eager " + describe(e) + " | traced " +
                describe(t));
  }
  ++stats().executions;
  if (!d.ok) {
    ++stats().typed_errors;
    check_alive(s, p, text);
    return;
  }
  ++stats().ok;
  for (const OpSpec& op : p.ops) ++stats().ops_ok[op.kind];
  for (std::size_t j = 0; j < d.values.size(); ++j) {
    const std::string de = compare(d.values[j], e.values[j], be);
    const std::string dt = compare(d.values[j], t.values[j], be);
    if (!de.empty() || !dt.empty()) {
      finding(p, text,
              detail::cat("value %", p.inputs.size() + j,
                          ": direct vs eager: ", de.empty() ? "same" : de,
                          "; direct vs traced: ", dt.empty() ? "same" : dt));
    }
  }
  // AD: a floating last value, a floating input, nothing huge or non-finite.
  const Tensor& y = d.values.back();
  if ((!is_floating(y.dtype()) && !is_complex(y.dtype())) || y.numel() > 4096 ||
      !all_finite(y, be)) {
    return;
  }
  for (const InputSpec& spec : p.inputs)
    if (spec.huge != 0) return;
  const std::vector<Tensor> inputs = make_inputs(p, be);
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const std::size_t i = (k + p.ad_seed) % inputs.size();
    const InputSpec& spec = p.inputs[i];
    if ((is_floating(spec.dtype) || is_complex(spec.dtype)) && all_finite(inputs[i], be)) {
      check_ad(s, p, inputs, y, i, text);
      return;
    }
  }
}

}  // namespace opseq

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  opseq::check(data, size);
  return 0;
}
