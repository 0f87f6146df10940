// Module functions: the elementwise ops generated from the op lists
// (backend/op_list.hpp), reductions, matmul, factories and structural ops, all
// with NumPy's axis numbers and broadcasting.

#include "bind.hpp"

namespace tenferro::python {

namespace {

using Release = py::gil_scoped_release;

constexpr std::pair<const char*, ReduceOp> kReductions[] = {
    {"sum", ReduceOp::Sum},   {"prod", ReduceOp::Prod},
    {"mean", ReduceOp::Mean}, {"max", ReduceOp::Max},
    {"min", ReduceOp::Min},   {"all", ReduceOp::All},
    {"any", ReduceOp::Any},   {"logsumexp", ReduceOp::LogSumExp},
};

ReduceOp reduce_op(const std::string& name) {
  for (const auto& [n, op] : kReductions) {
    if (name == n) return op;
  }
  throw Error(ErrorKind::InvalidArgument, "reduce", "unknown reduction '" + name + "'");
}

EagerTensor reduce_py(const std::string& name, const py::object& x, const py::object& axis,
                      bool keepdims) {
  EagerTensor t = as_tensor(x);
  const auto op = reduce_op(name);
  auto axes = cpp_axes(axis, t.rank(), name.c_str());
  Release r;
  if (!axes) return reduce(op, t, every_axis(t), keepdims);
  return reduce(op, t, *axes, keepdims);
}

EagerTensor var_py(const py::object& x, const py::object& axis, double ddof, bool keepdims,
                   bool take_sqrt) {
  EagerTensor t = as_tensor(x);
  auto axes = cpp_axes(axis, t.rank(), take_sqrt ? "std" : "var");
  Release r;
  const Axes ax = axes ? *axes : every_axis(t);
  return take_sqrt ? std_dev(t, ax, ddof, keepdims) : var(t, ax, ddof, keepdims);
}

// C order flattening in Python is C++ column-major flattening.
EagerTensor flatten(const EagerTensor& t) {
  const Shape s{t.numel()};
  if (!tracked(t)) return wrap_view(t.value().reshape_copy(s));
  return reshape(t, s);
}

EagerTensor arg_py(bool is_max, const py::object& x, const py::object& axis, bool keepdims) {
  EagerTensor t = as_tensor(x);
  const char* op = is_max ? "argmax" : "argmin";
  if (axis.is_none()) {
    auto f = flatten(t);
    Release r;
    auto out = is_max ? argmax(f, 0, false) : argmin(f, 0, false);
    if (keepdims) {
      Shape s(static_cast<std::size_t>(t.rank()), 1);
      out = wrap_view(out.value().reshape_copy(s));
    }
    return out;
  }
  const auto a = cpp_axis(axis.cast<std::int64_t>(), t.rank(), op);
  Release r;
  return is_max ? argmax(t, a, keepdims) : argmin(t, a, keepdims);
}

EagerTensor matmul_py(const py::object& pa, const py::object& pb) {
  EagerTensor a = as_tensor(pa), b = as_tensor(pb);
  if (a.rank() == 0 || b.rank() == 0) {
    throw Error(ErrorKind::RankMismatch, "matmul",
                "operands must have dimension 1 or more (use * for scalars)");
  }
  Release r;
  const bool va = a.rank() == 1, vb = b.rank() == 1;
  // Python (k,) @ M is (1, k) @ M with the axis dropped; M @ (k,) is M @ (k, 1).
  if (va) a = reshape(a, Shape{a.shape()[0], 1});
  if (vb) b = reshape(b, Shape{1, b.shape()[0]});
  // Python a @ b is C++ matmul(b, a) on the same memory (each matrix seen
  // transposed). NumPy aligns batch axes on the right of its shapes, the
  // C++ tier on the right of its own (NumPy's left): give the operand with
  // fewer batch axes the missing ones where NumPy would.
  const auto ba = a.rank() - 2, bb = b.rank() - 2;
  if (ba < bb) a = pad_rank(a, bb - ba);
  if (bb < ba) b = pad_rank(b, ba - bb);
  EagerTensor c = matmul(b, a);
  if (va || vb) {
    Shape s = c.shape();
    if (vb) s.erase(s.begin());  // C++ axis 0 is Python's last (n = 1)
    if (va) s.erase(s.begin() + (vb ? 0 : 1));
    c = reshape(c, s);
  }
  return c;
}

EagerTensor make_factory(Tensor value, bool requires_grad) {
  auto t = runtime()->tensor(std::move(value));
  if (requires_grad) t.requires_grad_();
  return t;
}

DType dtype_or(const py::object& dtype, DType fallback) {
  return dtype.is_none() ? fallback : dtype_from(dtype);
}

std::vector<EagerTensor> tensors_of(const py::iterable& xs) {
  std::vector<EagerTensor> out;
  for (auto x : xs) out.push_back(as_tensor(x));
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
        EagerTensor tc = as_tensor(c);
        // Scalars take the other operand's dtype, as in the binary ops.
        EagerTensor ta, tb;
        const bool sa = !py::isinstance<EagerTensor>(a) && !py::isinstance<py::array>(a) &&
                        (py::isinstance<py::float_>(a) || py::isinstance<py::int_>(a));
        const bool sb = !py::isinstance<EagerTensor>(b) && !py::isinstance<py::array>(b) &&
                        (py::isinstance<py::float_>(b) || py::isinstance<py::int_>(b));
        if (sa && !sb) {
          tb = as_tensor(b);
          ta = as_tensor(a, tb.dtype());
        } else if (sb && !sa) {
          ta = as_tensor(a);
          tb = as_tensor(b, ta.dtype());
        } else {
          ta = as_tensor(a);
          tb = as_tensor(b);
        }
        Release r;
        const auto rank = std::max({tc.rank(), ta.rank(), tb.rank()});
        return where(pad_rank(tc, rank - tc.rank()), pad_rank(ta, rank - ta.rank()),
                     pad_rank(tb, rank - tb.rank()));
      },
      py::arg("condition"), py::arg("x"), py::arg("y"), "x where condition holds, else y.");
  m.def(
      "clip",
      [](const py::object& x, std::optional<double> lo, std::optional<double> hi) {
        EagerTensor t = as_tensor(x);
        Release r;
        return clamp(t, lo ? std::optional<Scalar>(*lo) : std::nullopt,
                     hi ? std::optional<Scalar>(*hi) : std::nullopt);
      },
      py::arg("x"), py::arg("a_min") = py::none(), py::arg("a_max") = py::none());
  m.def(
      "astype",
      [](const py::object& x, const py::object& dtype) {
        EagerTensor t = as_tensor(x);
        const DType d = dtype_from(dtype);
        if (d == t.dtype()) return t;
        Release r;
        return cast(t, d);
      },
      py::arg("x"), py::arg("dtype"),
      "A copy converted to dtype (NumPy's astype; lossy casts allowed).");
  m.def(
      "concatenate",
      [](const py::iterable& xs, std::int64_t axis) {
        auto ts = tensors_of(xs);
        if (ts.empty())
          throw Error(ErrorKind::InvalidArgument, "concatenate", "need at least one tensor");
        const auto a = cpp_axis(axis, ts[0].rank(), "concatenate");
        Release r;
        return concatenate(ts, a);
      },
      py::arg("tensors"), py::arg("axis") = 0);
  m.def(
      "stack",
      [](const py::iterable& xs, std::int64_t axis) {
        auto ts = tensors_of(xs);
        if (ts.empty())
          throw Error(ErrorKind::InvalidArgument, "stack", "need at least one tensor");
        const auto a = cpp_axis(axis, ts[0].rank() + 1, "stack");
        Release r;
        return stack(ts, a);
      },
      py::arg("tensors"), py::arg("axis") = 0);
  m.def(
      "cumsum",
      [](const py::object& x, std::int64_t axis) {
        EagerTensor t = as_tensor(x);
        const auto a = cpp_axis(axis, t.rank(), "cumsum");
        Release r;
        return cumsum(t, a);
      },
      py::arg("x"), py::arg("axis"));
  m.def(
      "cumprod",
      [](const py::object& x, std::int64_t axis) {
        EagerTensor t = as_tensor(x);
        const auto a = cpp_axis(axis, t.rank(), "cumprod");
        Release r;
        return cumprod(t, a);
      },
      py::arg("x"), py::arg("axis"));
  m.def(
      "sort",
      [](const py::object& x, std::int64_t axis, bool descending) {
        EagerTensor t = as_tensor(x);
        const auto a = cpp_axis(axis, t.rank(), "sort");
        Release r;
        return sort(t, a, descending).first;
      },
      py::arg("x"), py::arg("axis") = -1, py::arg("descending") = false);
  m.def(
      "argsort",
      [](const py::object& x, std::int64_t axis, bool descending) {
        EagerTensor t = as_tensor(x);
        const auto a = cpp_axis(axis, t.rank(), "argsort");
        Release r;
        return argsort(t, a, descending);
      },
      py::arg("x"), py::arg("axis") = -1, py::arg("descending") = false);
  m.def(
      "flip",
      [](const py::object& x, const py::object& axis) {
        EagerTensor t = as_tensor(x);
        auto axes = cpp_axes(axis, t.rank(), "flip");
        Release r;
        return flip(t, axes ? *axes : every_axis(t));
      },
      py::arg("x"), py::arg("axis") = py::none());
  m.def(
      "tril",
      [](const py::object& x, std::int64_t k) {
        // Python's tril of the last two axes is triu of the transposed C++ matrices.
        EagerTensor t = as_tensor(x);
        Release r;
        return triu(t, -k);
      },
      py::arg("x"), py::arg("k") = 0);
  m.def(
      "triu",
      [](const py::object& x, std::int64_t k) {
        EagerTensor t = as_tensor(x);
        Release r;
        return tril(t, -k);
      },
      py::arg("x"), py::arg("k") = 0);
  m.def(
      "trace",
      [](const py::object& x) {
        EagerTensor t = as_tensor(x);
        Release r;
        return trace(t);
      },
      py::arg("x"), "Sum of the diagonal of a matrix.");
  m.def(
      "kron",
      [](const py::object& a, const py::object& b) {
        // The Kronecker product is defined axis by axis (out[i * nb + j] =
        // a[i] b[j]), so it reads the same on the reversed axes; NumPy pads
        // the operand of lower dimension with leading axes.
        EagerTensor ta = as_tensor(a), tb = as_tensor(b);
        Release r;
        const auto rank = std::max(ta.rank(), tb.rank());
        return kron(pad_rank(ta, rank - ta.rank()), pad_rank(tb, rank - tb.rank()));
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
