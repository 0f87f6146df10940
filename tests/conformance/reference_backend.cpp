#include "conformance/reference_backend.hpp"

#include <array>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../../src/tensor/dispatch.hpp"
#include "tenferro/backend/elementwise.hpp"
#include "tenferro/backend/reduce.hpp"

namespace tftest {

using namespace tenferro;
using detail::convert_value;
using detail::dispatch_dtype;
using detail::is_complex_v;
using detail::real_of_t;

namespace {

// Memory of the reference device (host memory underneath, marked as its own).
class ReferenceStorage final : public Storage {
 public:
  explicit ReferenceStorage(std::size_t nbytes)
      : Storage(std::calloc(nbytes == 0 ? 1 : nbytes, 1), nbytes, Placement{"reference", 0}) {}
  ~ReferenceStorage() override { std::free(data()); }
};

// Calls f(i, offsets) for every element of `shape` in column-major order,
// with the element offset of each tensor (strides in elements).
template <std::size_t N, class F>
void each_element(const Shape& shape, const std::array<const Strides*, N>& strides, F&& f) {
  const std::int64_t count = shape_numel(shape);
  std::vector<std::int64_t> index(shape.size(), 0);
  std::array<std::int64_t, N> at{};
  for (std::int64_t i = 0; i < count; ++i) {
    f(at);
    for (std::size_t d = 0; d < shape.size(); ++d) {
      for (std::size_t t = 0; t < N; ++t) at[t] += (*strides[t])[d];
      if (++index[d] < shape[d]) break;
      for (std::size_t t = 0; t < N; ++t) at[t] -= (*strides[t])[d] * shape[d];
      index[d] = 0;
    }
  }
}

template <class T>
T* ptr(const Tensor& t) {
  return static_cast<T*>(t.raw_data());
}

// The real number a value stands for (complex: its real part).
template <class T>
double as_real(const T& v) {
  if constexpr (is_complex_v<T>) {
    return static_cast<double>(v.real());
  } else {
    return static_cast<double>(v);
  }
}

template <class T>
T apply_unary(UnaryOp op, const T& x) {
  using std::abs, std::cos, std::exp, std::log, std::sin, std::sqrt, std::tanh;
  if constexpr (std::is_same_v<T, bool> || std::is_integral_v<T>) {
    if (op == UnaryOp::Neg) return static_cast<T>(-x);
    if (op == UnaryOp::Square) return static_cast<T>(x * x);
    return x;  // Conj, Real of a real value
  } else {
    switch (op) {
      case UnaryOp::Neg:
        return -x;
      case UnaryOp::Conj:
        if constexpr (is_complex_v<T>) return std::conj(x);
        return x;
      case UnaryOp::Exp:
        return exp(x);
      case UnaryOp::Log:
        return log(x);
      case UnaryOp::Sqrt:
        return sqrt(x);
      case UnaryOp::Sin:
        return sin(x);
      case UnaryOp::Cos:
        return cos(x);
      case UnaryOp::Tanh:
        return tanh(x);
      case UnaryOp::Square:
        return x * x;
      default:
        return x;
    }
  }
}

template <class T>
bool compare(BinaryOp op, const T& a, const T& b) {
  if (op == BinaryOp::Eq) return a == b;
  if (op == BinaryOp::Ne) return a != b;
  const double x = as_real(a), y = as_real(b);
  switch (op) {
    case BinaryOp::Lt:
      return x < y;
    case BinaryOp::Le:
      return x <= y;
    case BinaryOp::Gt:
      return x > y;
    default:
      return x >= y;
  }
}

template <class T>
T arithmetic(BinaryOp op, const T& a, const T& b) {
  switch (op) {
    case BinaryOp::Add:
      return static_cast<T>(a + b);
    case BinaryOp::Sub:
      return static_cast<T>(a - b);
    case BinaryOp::Mul:
      return static_cast<T>(a * b);
    case BinaryOp::Div:
      return static_cast<T>(a / b);
    case BinaryOp::Maximum:
      if constexpr (!is_complex_v<T>) {
        if (std::isnan(as_real(a)) || std::isnan(as_real(b)))
          return as_real(a) != as_real(a) ? a : b;
        return a < b ? b : a;
      }
      return a;
    case BinaryOp::Minimum:
      if constexpr (!is_complex_v<T>) {
        if (std::isnan(as_real(a)) || std::isnan(as_real(b)))
          return as_real(a) != as_real(a) ? a : b;
        return b < a ? b : a;
      }
      return a;
    default:
      return a;
  }
}

// One element converted with cast()'s rules: float -> integer truncates.
template <class To, class From>
To cast_value(const From& v) {
  if constexpr (std::is_integral_v<To> && !std::is_same_v<To, bool> && !is_complex_v<From> &&
                std::is_floating_point_v<From>) {
    return static_cast<To>(std::trunc(v));
  } else {
    return convert_value<To>(v);
  }
}

}  // namespace

struct ReferenceBackend::Counter {
  std::atomic<std::size_t> kernels{0};
};

ReferenceBackend::ReferenceBackend() : counter_(std::make_unique<Counter>()) {}
ReferenceBackend::~ReferenceBackend() {
  release_attachments();
}

std::size_t ReferenceBackend::kernels_run() const {
  return counter_->kernels.load();
}

Tensor ReferenceBackend::empty(std::span<const std::int64_t> shape, DType dtype) {
  const std::int64_t n = shape_numel(Shape(shape), "empty");
  auto storage = std::make_shared<ReferenceStorage>(static_cast<std::size_t>(n) * itemsize(dtype));
  Strides strides;
  std::int64_t step = 1;
  for (const std::int64_t e : shape) {
    strides.push_back(step);
    step *= e;
  }
  return Tensor::from_storage(std::move(storage), dtype, Shape(shape), std::move(strides), 0);
}

void ReferenceBackend::copy(const Tensor& src, const Tensor& dst) {
  ++counter_->kernels;
  dispatch_dtype(src.dtype(), [&](auto s) {
    using S = typename decltype(s)::type;
    dispatch_dtype(dst.dtype(), [&](auto d) {
      using D = typename decltype(d)::type;
      each_element<2>(dst.shape(), {&src.strides(), &dst.strides()}, [&](const auto& at) {
        ptr<D>(dst)[at[1]] = convert_value<D>(ptr<S>(src)[at[0]]);
      });
    });
  });
}

void ReferenceBackend::cast(const Tensor& src, const Tensor& dst) {
  ++counter_->kernels;
  dispatch_dtype(src.dtype(), [&](auto s) {
    using S = typename decltype(s)::type;
    dispatch_dtype(dst.dtype(), [&](auto d) {
      using D = typename decltype(d)::type;
      each_element<2>(dst.shape(), {&src.strides(), &dst.strides()}, [&](const auto& at) {
        ptr<D>(dst)[at[1]] = cast_value<D>(ptr<S>(src)[at[0]]);
      });
    });
  });
}

void ReferenceBackend::fill(const Tensor& dst, Scalar value) {
  ++counter_->kernels;
  dispatch_dtype(dst.dtype(), [&](auto d) {
    using D = typename decltype(d)::type;
    D v{};
    if constexpr (is_complex_v<D>) {
      v = D(static_cast<typename D::value_type>(value.real()),
            static_cast<typename D::value_type>(value.imag()));
    } else if constexpr (std::is_same_v<D, bool>) {
      v = value.real() != 0.0 || value.imag() != 0.0 || value.to_int() != 0;
    } else if constexpr (std::is_integral_v<D>) {
      v = static_cast<D>(is_inexact(value.dtype()) ? value.real() : value.to_int());
    } else {
      v = static_cast<D>(value.real());
    }
    each_element<1>(dst.shape(), {&dst.strides()}, [&](const auto& at) { ptr<D>(dst)[at[0]] = v; });
  });
}

bool ReferenceBackend::implements(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
    case UnaryOp::Conj:
    case UnaryOp::Exp:
    case UnaryOp::Log:
    case UnaryOp::Sqrt:
    case UnaryOp::Sin:
    case UnaryOp::Cos:
    case UnaryOp::Tanh:
    case UnaryOp::Square:
    case UnaryOp::Abs:
    case UnaryOp::Real:
    case UnaryOp::Imag:
      return true;
    default:
      return false;
  }
}

bool ReferenceBackend::implements(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Maximum:
    case BinaryOp::Minimum:
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
    case BinaryOp::Complex:
      return true;
    default:
      return false;
  }
}

bool ReferenceBackend::implements(ReduceOp op) {
  return op == ReduceOp::Sum || op == ReduceOp::Mean || op == ReduceOp::Max || op == ReduceOp::Min;
}

void ReferenceBackend::unary(UnaryOp op, const Tensor& x, const Tensor& out) {
  if (!implements(op)) no_kernel(name(op), "unary");
  ++counter_->kernels;
  dispatch_dtype(x.dtype(), [&](auto xt) {
    using X = typename decltype(xt)::type;
    dispatch_dtype(out.dtype(), [&](auto ot) {
      using O = typename decltype(ot)::type;
      each_element<2>(out.shape(), {&x.strides(), &out.strides()}, [&](const auto& at) {
        const X v = ptr<X>(x)[at[0]];
        O r{};
        if (op == UnaryOp::Abs) {
          if constexpr (is_complex_v<X> || std::is_floating_point_v<X>) {
            r = convert_value<O>(std::abs(v));
          } else if constexpr (std::is_same_v<X, bool>) {
            r = convert_value<O>(v);
          } else {
            r = convert_value<O>(v < 0 ? -v : v);
          }
        } else if (op == UnaryOp::Real) {
          r = convert_value<O>(as_real(v));
        } else if (op == UnaryOp::Imag) {
          if constexpr (is_complex_v<X>) {
            r = convert_value<O>(v.imag());
          }
        } else {
          r = convert_value<O>(apply_unary(op, v));
        }
        ptr<O>(out)[at[1]] = r;
      });
    });
  });
}

void ReferenceBackend::binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (!implements(op)) no_kernel(name(op), "binary");
  ++counter_->kernels;
  dispatch_dtype(a.dtype(), [&](auto at_) {
    using T = typename decltype(at_)::type;
    dispatch_dtype(out.dtype(), [&](auto ot) {
      using O = typename decltype(ot)::type;
      each_element<3>(out.shape(), {&a.strides(), &b.strides(), &out.strides()},
                      [&](const auto& at) {
                        const T x = ptr<T>(a)[at[0]], y = ptr<T>(b)[at[1]];
                        O r{};
                        if (op == BinaryOp::Complex) {
                          if constexpr (is_complex_v<O>) {
                            using R = typename O::value_type;
                            r = O(static_cast<R>(as_real(x)), static_cast<R>(as_real(y)));
                          }
                        } else if (descriptor(op).result == ResultRule::Bool) {
                          r = convert_value<O>(compare(op, x, y));
                        } else {
                          r = convert_value<O>(arithmetic(op, x, y));
                        }
                        ptr<O>(out)[at[2]] = r;
                      });
    });
  });
}

void ReferenceBackend::where(const Tensor& cond, const Tensor& a, const Tensor& b,
                             const Tensor& out) {
  ++counter_->kernels;
  dispatch_dtype(out.dtype(), [&](auto ot) {
    using O = typename decltype(ot)::type;
    each_element<4>(out.shape(), {&cond.strides(), &a.strides(), &b.strides(), &out.strides()},
                    [&](const auto& at) {
                      ptr<O>(out)[at[3]] =
                          ptr<bool>(cond)[at[0]] ? ptr<O>(a)[at[1]] : ptr<O>(b)[at[2]];
                    });
  });
}

void ReferenceBackend::reduce(ReduceOp op, const Tensor& x, std::span<const bool> reduced,
                              const Tensor& out) {
  if (!implements(op)) no_kernel(name(op), "reduce");
  ++counter_->kernels;
  // Each element of x accumulates into the out element its kept axes name.
  Strides into(x.shape().size(), 0);
  std::size_t o = 0;
  const bool keepdim = out.rank() == x.rank();
  for (std::size_t d = 0; d < x.shape().size(); ++d) {
    if (!reduced[d]) {
      into[d] = out.strides()[keepdim ? d : o];
      ++o;
    } else if (keepdim) {
      ++o;
    }
  }
  std::int64_t count = 1;
  for (std::size_t d = 0; d < reduced.size(); ++d)
    if (reduced[d]) count *= x.shape()[d];
  dispatch_dtype(x.dtype(), [&](auto xt) {
    using T = typename decltype(xt)::type;
    std::vector<T> acc(static_cast<std::size_t>(shape_numel(out.shape())));
    std::vector<bool> seen(acc.size(), false);
    // out's elements are compact in this backend: map an offset to a slot.
    each_element<2>(x.shape(), {&x.strides(), &into}, [&](const auto& at) {
      const auto slot = static_cast<std::size_t>(at[1]);
      const T v = ptr<T>(x)[at[0]];
      if (!seen[slot]) {
        acc[slot] = v;
        seen[slot] = true;
      } else if (op == ReduceOp::Sum || op == ReduceOp::Mean) {
        acc[slot] = static_cast<T>(acc[slot] + v);
      } else if constexpr (!is_complex_v<T>) {
        const bool nan = v != v;
        if (op == ReduceOp::Max && (nan || v > acc[slot])) acc[slot] = v;
        if (op == ReduceOp::Min && (nan || v < acc[slot])) acc[slot] = v;
      }
    });
    for (std::size_t k = 0; k < acc.size(); ++k) {
      if (!seen[k]) acc[k] = T{};
      if constexpr (!std::is_same_v<T, bool> && !std::is_integral_v<T>) {
        if (op == ReduceOp::Mean) acc[k] = acc[k] / static_cast<real_of_t<T>>(count);
      }
    }
    each_element<1>(out.shape(), {&out.strides()}, [&](const auto& at) {
      // Compact out: offset == slot.
      ptr<T>(out)[at[0]] = acc[static_cast<std::size_t>(at[0])];
    });
  });
}

void ReferenceBackend::gemm(DType dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                            const GemmOperand& a, const GemmOperand& b, void* c,
                            const Shape& batch_shape) {
  ++counter_->kernels;
  dispatch_dtype(dtype, [&](auto tt) {
    using T = typename decltype(tt)::type;
    if constexpr (std::is_same_v<T, bool>) {
      no_kernel("dot_general", "gemm");
    } else {
      const auto* A = static_cast<const T*>(a.data);
      const auto* B = static_cast<const T*>(b.data);
      auto* C = static_cast<T*>(c);
      const std::int64_t batches = shape_numel(batch_shape);
      std::vector<std::int64_t> index(batch_shape.size(), 0);
      for (std::int64_t p = 0; p < batches; ++p) {
        std::int64_t oa = 0, ob = 0;
        for (std::size_t d = 0; d < batch_shape.size(); ++d) {
          oa += index[d] * a.batch_strides[d];
          ob += index[d] * b.batch_strides[d];
        }
        for (std::int64_t j = 0; j < n; ++j) {
          for (std::int64_t i = 0; i < m; ++i) {
            T s{};
            for (std::int64_t l = 0; l < k; ++l) {
              const T x = a.trans ? A[oa + l + i * a.ld] : A[oa + i + l * a.ld];
              const T y = b.trans ? B[ob + j + l * b.ld] : B[ob + l + j * b.ld];
              s = static_cast<T>(s + x * y);
            }
            C[p * m * n + i + j * m] = s;
          }
        }
        for (std::size_t d = 0; d < batch_shape.size(); ++d) {
          if (++index[d] < batch_shape[d]) break;
          index[d] = 0;
        }
      }
    }
  });
}

void ReferenceBackend::read(const Tensor& src, void* dst) {
  ++counter_->kernels;
  dispatch_dtype(src.dtype(), [&](auto tt) {
    using T = typename decltype(tt)::type;
    Strides compact;
    std::int64_t step = 1;
    for (const std::int64_t e : src.shape()) {
      compact.push_back(step);
      step *= e;
    }
    each_element<2>(src.shape(), {&src.strides(), &compact},
                    [&](const auto& at) { static_cast<T*>(dst)[at[1]] = ptr<T>(src)[at[0]]; });
  });
}

void ReferenceBackend::write(const void* src, const Tensor& dst) {
  ++counter_->kernels;
  dispatch_dtype(dst.dtype(), [&](auto tt) {
    using T = typename decltype(tt)::type;
    Strides compact;
    std::int64_t step = 1;
    for (const std::int64_t e : dst.shape()) {
      compact.push_back(step);
      step *= e;
    }
    each_element<2>(dst.shape(), {&compact, &dst.strides()}, [&](const auto& at) {
      ptr<T>(dst)[at[1]] = static_cast<const T*>(src)[at[0]];
    });
  });
}

Tensor to_reference(const Tensor& host, ReferenceBackend& backend) {
  const Tensor compact = host.contiguous();
  Tensor out = backend.empty(host.shape(), host.dtype());
  std::memcpy(out.raw_data(), compact.raw_data(),
              static_cast<std::size_t>(host.numel()) * itemsize(host.dtype()));
  return out;
}

Tensor to_host(const Tensor& t) {
  if (t.placement().is_host()) return t.contiguous();
  if (t.placement().device != "reference") {
    throw Error(ErrorKind::Unsupported, "to_host", "not a reference tensor");
  }
  Tensor out = zeros(t.shape(), t.dtype());
  dispatch_dtype(t.dtype(), [&](auto tt) {
    using T = typename decltype(tt)::type;
    Strides compact;
    std::int64_t step = 1;
    for (const std::int64_t e : t.shape()) {
      compact.push_back(step);
      step *= e;
    }
    each_element<2>(t.shape(), {&t.strides(), &compact}, [&](const auto& at) {
      static_cast<T*>(out.raw_data())[at[1]] = ptr<T>(t)[at[0]];
    });
  });
  return out;
}

bool reference_lacks_kernel(const Error& e) {
  return e.kind() == ErrorKind::Unsupported &&
         std::string(e.what()).find("the reference backend has no ") != std::string::npos;
}

}  // namespace tftest
