// Module functions: the elementwise ops generated from the op lists
// (backend/op_list.hpp), reductions, matmul, factories and structural ops, all
// with NumPy's axis numbers and broadcasting.

#include "bind.hpp"

namespace tenferro::python {

namespace {

constexpr std::pair<const char*, ReduceOp> kReductions[] = {
    {"sum", ReduceOp::Sum},   {"prod", ReduceOp::Prod},
    {"mean", ReduceOp::Mean}, {"max", ReduceOp::Max},
    {"min", ReduceOp::Min},   {"all", ReduceOp::All},
    {"any", ReduceOp::Any},   {"logsumexp", ReduceOp::LogSumExp},
};

template <class T>
T unsqueeze_last(const T& x) {
  SymShape s = sym_shape(x);
  s.push_back(SymDim(1));
  return reshape(x, s);
}
template <class T>
T unsqueeze_first(const T& x) {
  SymShape s = sym_shape(x);
  s.insert(s.begin(), SymDim(1));
  return reshape(x, s);
}

ReduceOp reduce_op(const std::string& name) {
  for (const auto& [n, op] : kReductions) {
    if (name == n) return op;
  }
  throw Error(ErrorKind::InvalidArgument, "reduce", "unknown reduction '" + name + "'");
}

template <class T>
T flatten(const T& t) {
  // C order flattening in Python is C++ column-major flattening.
  if constexpr (std::is_same_v<T, EagerTensor>) {
    if (!tracked(t)) return wrap_view(t.value().reshape_copy(Shape{t.numel()}));
    return reshape(t, Shape{t.numel()});
  } else {
    SymDim n(1);
    for (const auto& d : t.shape()) n = n * d;
    return reshape(t, SymShape{n});
  }
}

py::object reduce_py(const std::string& name, const py::object& x, const py::object& axis,
                     bool keepdims) {
  const auto op = reduce_op(name);
  return dispatch(is_traced(x), [&]<class T>() -> T {
    const T t = to<T>(x);
    auto axes = cpp_axes(axis, t.rank(), name.c_str());
    MaybeRelease<T> r;
    if (!axes) return reduce(op, t, every_axis(t), keepdims);
    return reduce(op, t, *axes, keepdims);
  });
}

py::object var_py(const py::object& x, const py::object& axis, double ddof, bool keepdims,
                  bool take_sqrt) {
  return dispatch(is_traced(x), [&]<class T>() -> T {
    const T t = to<T>(x);
    auto axes = cpp_axes(axis, t.rank(), take_sqrt ? "std" : "var");
    MaybeRelease<T> r;
    const Axes ax = axes ? *axes : every_axis(t);
    return take_sqrt ? std_dev(t, ax, ddof, keepdims) : var(t, ax, ddof, keepdims);
  });
}

py::object arg_py(bool is_max, const py::object& x, const py::object& axis, bool keepdims) {
  const char* op = is_max ? "argmax" : "argmin";
  return dispatch(is_traced(x), [&]<class T>() -> T {
    const T t = to<T>(x);
    if (axis.is_none()) {
      auto f = flatten(t);
      T out;
      {
        MaybeRelease<T> r;
        out = is_max ? argmax(f, 0, false) : argmin(f, 0, false);
      }
      if (keepdims) out = pad_rank(out, t.rank());
      return out;
    }
    const auto a = cpp_axis(axis.cast<std::int64_t>(), t.rank(), op);
    MaybeRelease<T> r;
    return is_max ? argmax(t, a, keepdims) : argmin(t, a, keepdims);
  });
}

py::object matmul_py(const py::object& pa, const py::object& pb) {
  return dispatch(any_traced(pa, pb), [&]<class T>() -> T {
    T a = to<T>(pa), b = to<T>(pb);
    if (a.rank() == 0 || b.rank() == 0) {
      throw Error(ErrorKind::RankMismatch, "matmul",
                  "operands must have dimension 1 or more (use * for scalars)");
    }
    MaybeRelease<T> r;
    numpy_promote(a, b);
    const bool va = a.rank() == 1, vb = b.rank() == 1;
    // Python (k,) @ M is (1, k) @ M with the axis dropped; M @ (k,) is M @ (k, 1).
    if (va) a = unsqueeze_last(a);
    if (vb) b = unsqueeze_first(b);
    // Python a @ b is C++ matmul(b, a) on the same memory (each matrix seen
    // transposed). NumPy aligns batch axes on the right of its shapes, the
    // C++ tier on the right of its own (NumPy's left): give the operand with
    // fewer batch axes the missing ones where NumPy would.
    const auto ba = a.rank() - 2, bb = b.rank() - 2;
    if (ba < bb) a = pad_rank(a, bb - ba);
    if (bb < ba) b = pad_rank(b, ba - bb);
    T c = matmul(b, a);
    if (va || vb) {
      SymShape s = sym_shape(c);
      if (vb) s.erase(s.begin());  // C++ axis 0 is Python's last (n = 1)
      if (va) s.erase(s.begin() + (vb ? 0 : 1));
      c = reshape(c, s);
    }
    return c;
  });
}

EagerTensor make_factory(Tensor value, bool requires_grad) {
  auto t = runtime()->tensor(std::move(value));
  if (requires_grad) t.requires_grad_();
  return t;
}

DType dtype_or(const py::object& dtype, DType fallback) {
  return dtype.is_none() ? fallback : dtype_from(dtype);
}

bool any_traced_in(const py::iterable& xs) {
  for (auto x : xs) {
    if (is_traced(x)) return true;
  }
  return false;
}
template <class T>
std::vector<T> tensors_of(const py::iterable& xs) {
  std::vector<T> out;
  for (auto x : xs) out.push_back(to<T>(x));
  return out;
}

}  // namespace

void init_ops(py::module_& m) {
  // Elementwise: one function per public op of the lists.
#define TENFERRO_PY_UNARY(Enum, function, compute, result, complex_, boolean, api)               \
  if (std::string_view(#api) == "Api") {                                                         \
    m.def(                                                                                       \
        #function, [](const py::object& x) { return unary_py(UnaryOp::Enum, x); }, py::arg("x"), \
        "Elementwise " #function " (NumPy/PyTorch semantics; see docs/operators.md).");          \
  }
  TENFERRO_UNARY_OPS(TENFERRO_PY_UNARY)
#undef TENFERRO_PY_UNARY
#define TENFERRO_PY_BINARY(Enum, function, compute, result, complex_, boolean, api)               \
  if (std::string_view(#api) == "Api") {                                                          \
    m.def(                                                                                        \
        #function,                                                                                \
        [](const py::object& a, const py::object& b) { return binary_py(BinaryOp::Enum, a, b); }, \
        py::arg("a"), py::arg("b"),                                                               \
        "Elementwise " #function " with NumPy broadcasting (see docs/operators.md).");            \
  }
  TENFERRO_BINARY_OPS(TENFERRO_PY_BINARY)
#undef TENFERRO_PY_BINARY

  m.def("_reduce", &reduce_py, py::arg("op"), py::arg("x"), py::arg("axis") = py::none(),
        py::arg("keepdims") = false);
  m.def("_var", &var_py, py::arg("x"), py::arg("axis"), py::arg("ddof"), py::arg("keepdims"),
        py::arg("sqrt"));
  m.def(
      "argmax",
      [](const py::object& x, const py::object& axis, bool keepdims) {
        return arg_py(true, x, axis, keepdims);
      },
      py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdims") = false);
  m.def(
      "argmin",
      [](const py::object& x, const py::object& axis, bool keepdims) {
        return arg_py(false, x, axis, keepdims);
      },
      py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdims") = false);
  m.def("matmul", &matmul_py, py::arg("a"), py::arg("b"),
        "Matrix product with NumPy's rules (batch axes first and broadcast, 1-D operands as "
        "vectors).");

  m.def(
      "where",
      [](const py::object& c, const py::object& a, const py::object& b) {
        return dispatch(any_traced(c, a, b), [&]<class T>() -> T {
          const T tc = to<T>(c);
          // Python scalars take the other operand's dtype, as in the binary ops.
          T ta, tb;
          if (is_py_scalar(a) && !is_py_scalar(b)) {
            tb = to<T>(b);
            ta = to<T>(a, tb.dtype());
          } else if (is_py_scalar(b) && !is_py_scalar(a)) {
            ta = to<T>(a);
            tb = to<T>(b, ta.dtype());
          } else {
            ta = to<T>(a);
            tb = to<T>(b);
          }
          MaybeRelease<T> r;
          numpy_promote(ta, tb);
          const auto rank = std::max({tc.rank(), ta.rank(), tb.rank()});
          return where(pad_rank(tc, rank - tc.rank()), pad_rank(ta, rank - ta.rank()),
                       pad_rank(tb, rank - tb.rank()));
        });
      },
      py::arg("condition"), py::arg("x"), py::arg("y"), "x where condition holds, else y.");
  m.def(
      "clip",
      [](const py::object& x, std::optional<double> lo, std::optional<double> hi) {
        return dispatch(is_traced(x), [&]<class T>() -> T {
          const T t = to<T>(x);
          MaybeRelease<T> r;
          return clamp(t, lo ? std::optional<Scalar>(*lo) : std::nullopt,
                       hi ? std::optional<Scalar>(*hi) : std::nullopt);
        });
      },
      py::arg("x"), py::arg("a_min") = py::none(), py::arg("a_max") = py::none());
  m.def(
      "astype",
      [](const py::object& x, const py::object& dtype) {
        const DType d = dtype_from(dtype);
        return dispatch(is_traced(x), [&]<class T>() -> T {
          const T t = to<T>(x);
          if (d == t.dtype()) return t;
          MaybeRelease<T> r;
          return cast(t, d);
        });
      },
      py::arg("x"), py::arg("dtype"),
      "A copy converted to dtype (NumPy's astype; lossy casts allowed).");
  // Ops over a list of tensors and one axis.
  auto list_op = [&m](const char* name, bool new_axis, auto fn) {
    m.def(
        name,
        [name, new_axis, fn](const py::iterable& xs, std::int64_t axis) {
          return dispatch(any_traced_in(xs), [&]<class T>() -> T {
            auto ts = tensors_of<T>(xs);
            if (ts.empty()) {
              throw Error(ErrorKind::InvalidArgument, name, "need at least one tensor");
            }
            const auto a = cpp_axis(axis, ts[0].rank() + (new_axis ? 1 : 0), name);
            MaybeRelease<T> r;
            return fn(ts, a);
          });
        },
        py::arg("tensors"), py::arg("axis") = 0);
  };
  list_op("concatenate", false, [](const auto& ts, std::int64_t a) { return concatenate(ts, a); });
  list_op("stack", true, [](const auto& ts, std::int64_t a) { return stack(ts, a); });
  // Ops over one axis.
  auto axis_op = [&m](const char* name, std::int64_t default_axis, const char* flag, auto fn) {
    m.def(
        name,
        [name, fn](const py::object& x, std::int64_t axis, bool descending) {
          return dispatch(is_traced(x), [&]<class T>() -> T {
            const T t = to<T>(x);
            const auto a = cpp_axis(axis, t.rank(), name);
            MaybeRelease<T> r;
            return fn(t, a, descending);
          });
        },
        py::arg("x"), py::arg("axis") = default_axis, py::arg(flag) = false);
  };
  axis_op("cumsum", 0, "reverse",
          [](const auto& t, std::int64_t a, bool rev) { return cumsum(t, a, rev); });
  axis_op("cumprod", 0, "reverse",
          [](const auto& t, std::int64_t a, bool rev) { return cumprod(t, a, rev); });
  axis_op("sort", -1, "descending",
          [](const auto& t, std::int64_t a, bool d) { return sort(t, a, d).first; });
  axis_op("argsort", -1, "descending",
          [](const auto& t, std::int64_t a, bool d) { return argsort(t, a, d); });
  m.def(
      "flip",
      [](const py::object& x, const py::object& axis) {
        return dispatch(is_traced(x), [&]<class T>() -> T {
          const T t = to<T>(x);
          auto axes = cpp_axes(axis, t.rank(), "flip");
          MaybeRelease<T> r;
          return flip(t, axes ? *axes : every_axis(t));
        });
      },
      py::arg("x"), py::arg("axis") = py::none());
  // Python's tril of the last two axes keeps j <= i + k; on the stored
  // (transposed) matrices that is triu with -k, and triu is tril with -k.
  m.def(
      "tril",
      [](const py::object& x, std::int64_t k) {
        return dispatch(is_traced(x), [&]<class T>() -> T {
          const T t = to<T>(x);
          MaybeRelease<T> r;
          return triu(t, -k);
        });
      },
      py::arg("x"), py::arg("k") = 0);
  m.def(
      "triu",
      [](const py::object& x, std::int64_t k) {
        return dispatch(is_traced(x), [&]<class T>() -> T {
          const T t = to<T>(x);
          MaybeRelease<T> r;
          return tril(t, -k);
        });
      },
      py::arg("x"), py::arg("k") = 0);
  m.def(
      "trace",
      [](const py::object& x, std::int64_t offset, std::int64_t axis1, std::int64_t axis2) {
        return dispatch(is_traced(x), [&]<class T>() -> T {
          const T t = to<T>(x);
          const auto a1 = cpp_axis(axis1, t.rank(), "trace"),
                     a2 = cpp_axis(axis2, t.rank(), "trace");
          MaybeRelease<T> r;
          return trace(t, offset, a1, a2);
        });
      },
      py::arg("x"), py::arg("offset") = 0, py::arg("axis1") = 0, py::arg("axis2") = 1,
      "numpy.trace: sums along the diagonal of axes (axis1, axis2).");
  m.def(
      "kron",
      [](const py::object& a, const py::object& b) {
        // The Kronecker product is defined axis by axis (out[i * nb + j] =
        // a[i] b[j]), so it reads the same on the reversed axes; NumPy pads
        // the operand of lower dimension with leading axes.
        return dispatch(any_traced(a, b), [&]<class T>() -> T {
          const T ta = to<T>(a), tb = to<T>(b);
          MaybeRelease<T> r;
          const auto rank = std::max(ta.rank(), tb.rank());
          return kron(pad_rank(ta, rank - ta.rank()), pad_rank(tb, rank - tb.rank()));
        });
      },
      py::arg("a"), py::arg("b"));

  // Factories (shapes in NumPy's order).
  m.def(
      "zeros",
      [](const py::object& shape, const py::object& dtype, bool rg) {
        return make_factory(zeros(cpp_shape(shape), dtype_or(dtype, DType::F64)), rg);
      },
      py::arg("shape"), py::arg("dtype") = py::none(), py::arg("requires_grad") = false);
  m.def(
      "ones",
      [](const py::object& shape, const py::object& dtype, bool rg) {
        return make_factory(ones(cpp_shape(shape), dtype_or(dtype, DType::F64)), rg);
      },
      py::arg("shape"), py::arg("dtype") = py::none(), py::arg("requires_grad") = false);
  m.def(
      "empty",
      [](const py::object& shape, const py::object& dtype, bool rg) {
        return make_factory(zeros(cpp_shape(shape), dtype_or(dtype, DType::F64)), rg);
      },
      py::arg("shape"), py::arg("dtype") = py::none(), py::arg("requires_grad") = false,
      "Like zeros (tenferro never hands out uninitialised memory).");
  m.def(
      "full",
      [](const py::object& shape, const py::object& value, const py::object& dtype, bool rg) {
        EagerTensor v = as_tensor(value);
        const DType d = dtype_or(dtype, v.dtype());
        return make_factory(full(cpp_shape(shape), v.value().item(), d), rg);
      },
      py::arg("shape"), py::arg("fill_value"), py::arg("dtype") = py::none(),
      py::arg("requires_grad") = false);
  m.def(
      "eye",
      [](std::int64_t n, std::optional<std::int64_t> mcols, const py::object& dtype) {
        return make_factory(eye(mcols.value_or(n), n, dtype_or(dtype, DType::F64)), false);
      },
      py::arg("N"), py::arg("M") = py::none(), py::arg("dtype") = py::none());
  m.def(
      "arange",
      [](double start, std::optional<double> stop, double step, const py::object& dtype,
         bool ints) {
        double lo = start, hi = 0;
        if (stop) {
          hi = *stop;
        } else {
          lo = 0;
          hi = start;
        }
        const DType d = dtype_or(dtype, ints ? DType::I64 : DType::F64);
        return make_factory(arange(lo, hi, step, d), false);
      },
      py::arg("start"), py::arg("stop") = py::none(), py::arg("step") = 1.0,
      py::arg("dtype") = py::none(), py::arg("_ints") = false);
  m.def(
      "linspace",
      [](double start, double stop, std::int64_t num, const py::object& dtype) {
        return make_factory(linspace(start, stop, num, dtype_or(dtype, DType::F64)), false);
      },
      py::arg("start"), py::arg("stop"), py::arg("num") = 50, py::arg("dtype") = py::none());

  py::class_<Generator>(m, "Generator",
                        "A seeded random generator (explicit state; no global generator).")
      .def(py::init<std::uint64_t>(), py::arg("seed") = 0)
      .def_property_readonly("seed", &Generator::seed)
      .def(
          "random",
          [](Generator& g, const py::object& shape, const py::object& dtype) {
            return make_factory(rand(cpp_shape(shape), dtype_or(dtype, DType::F64), g), false);
          },
          py::arg("size"), py::arg("dtype") = py::none(), "Uniform on [0, 1).")
      .def(
          "standard_normal",
          [](Generator& g, const py::object& shape, const py::object& dtype) {
            return make_factory(randn(cpp_shape(shape), dtype_or(dtype, DType::F64), g), false);
          },
          py::arg("size"), py::arg("dtype") = py::none(),
          "Standard normal (complex dtypes: E|z|^2 = 1).");
}

}  // namespace tenferro::python
