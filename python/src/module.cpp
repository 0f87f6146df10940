// The module tenferro._tenferro: errors, dtypes, the default runtime and the
// conversions every binding shares (bind.hpp).

#include <Python.h>

#include <mutex>

#include "bind.hpp"

namespace tenferro::python {

const EagerRuntimePtr& runtime() {
  // Made on first use and never destroyed: tensors released while the
  // interpreter shuts down may still reach it.
  static const EagerRuntimePtr* rt = new EagerRuntimePtr(EagerRuntime::make_cpu());
  return *rt;
}

namespace {

struct DTypeName {
  DType dtype;
  const char* name;
};
constexpr DTypeName kDTypeNames[] = {
    {DType::Bool, "bool"},       {DType::I32, "int32"},   {DType::I64, "int64"},
    {DType::F32, "float32"},     {DType::F64, "float64"}, {DType::C64, "complex64"},
    {DType::C128, "complex128"},
};

}  // namespace

const char* dtype_name(DType d) {
  for (const auto& n : kDTypeNames) {
    if (n.dtype == d) return n.name;
  }
  return "?";
}

py::dtype numpy_dtype(DType d) {
  return py::dtype(dtype_name(d));
}

DType dtype_from(const py::handle& h) {
  if (py::isinstance<DType>(h)) return h.cast<DType>();
  // Python types and strings go through NumPy's own parser (float -> float64,
  // "f4", np.float32...).
  py::dtype dt;
  try {
    dt = py::dtype::from_args(py::reinterpret_borrow<py::object>(h));
  } catch (py::error_already_set&) {
    throw Error(ErrorKind::DTypeMismatch, "dtype",
                "" + std::string(py::str(py::repr(h))) +
                    " is not a dtype; use tenferro.float64 ..., a NumPy dtype or a Python type");
  }
  if (dt.kind() == 'b') return DType::Bool;
  const auto size = dt.itemsize();
  if (dt.kind() == 'i' && size == 4) return DType::I32;
  if (dt.kind() == 'i' && size == 8) return DType::I64;
  if (dt.kind() == 'f' && size == 4) return DType::F32;
  if (dt.kind() == 'f' && size == 8) return DType::F64;
  if (dt.kind() == 'c' && size == 8) return DType::C64;
  if (dt.kind() == 'c' && size == 16) return DType::C128;
  throw Error(ErrorKind::DTypeMismatch, "dtype",
              "NumPy dtype " + std::string(py::str(dt)) +
                  " has no tenferro counterpart; tenferro has bool, int32, int64, float32, "
                  "float64, complex64 and complex128 (convert with .astype first)");
}

py::tuple py_shape(const Shape& s) {
  py::tuple t(s.size());
  const auto r = s.size();
  for (std::size_t i = 0; i < r; ++i) t[i] = py::int_(s[r - 1 - i]);
  return t;
}

py::tuple py_shape(const SymShape& s) {
  py::tuple t(s.size());
  const auto r = s.size();
  for (std::size_t i = 0; i < r; ++i) {
    const auto& d = s[r - 1 - i];
    if (auto c = d.try_constant()) {
      t[i] = py::int_(*c);
    } else {
      t[i] = py::str(d.to_string());
    }
  }
  return t;
}

SymShape cpp_sym_shape(const py::handle& shape) {
  if (py::isinstance<py::int_>(shape) || py::isinstance<py::str>(shape)) {
    return cpp_sym_shape(py::make_tuple(shape));
  }
  auto seq = py::reinterpret_borrow<py::sequence>(shape);
  const auto n = seq.size();
  SymShape out(n);
  for (std::size_t i = 0; i < n; ++i) {
    py::object e = seq[i];
    out[n - 1 - i] = py::isinstance<py::str>(e) ? SymDim::var(e.cast<std::string>())
                                                : SymDim(e.cast<std::int64_t>());
  }
  return out;
}

Shape cpp_shape(const py::handle& shape) {
  Shape out;
  if (py::isinstance<py::int_>(shape)) {
    out.push_back(shape.cast<std::int64_t>());
    return out;
  }
  if (!py::isinstance<py::sequence>(shape)) {
    throw Error(ErrorKind::InvalidArgument, "shape",
                "expected an int or a sequence of ints, got " +
                    std::string(py::str(py::type::of(shape).attr("__name__"))));
  }
  auto seq = py::reinterpret_borrow<py::sequence>(shape);
  const auto n = seq.size();
  out.resize(n);
  for (std::size_t i = 0; i < n; ++i) out[n - 1 - i] = seq[i].cast<std::int64_t>();
  return out;
}

std::int64_t cpp_axis(std::int64_t d, std::int64_t r, const char* op) {
  if (d < -r || d >= r) {
    throw Error(ErrorKind::AxisOutOfBounds, op,
                "axis " + std::to_string(d) + " is out of bounds for a tensor of dimension " +
                    std::to_string(r));
  }
  if (d < 0) d += r;
  return r - 1 - d;
}

std::optional<Axes> cpp_axes(const py::handle& axis, std::int64_t r, const char* op) {
  if (axis.is_none()) return std::nullopt;
  Axes out;
  if (py::isinstance<py::int_>(axis)) {
    out.push_back(cpp_axis(axis.cast<std::int64_t>(), r, op));
    return out;
  }
  for (auto a : py::reinterpret_borrow<py::iterable>(axis)) {
    out.push_back(cpp_axis(a.cast<std::int64_t>(), r, op));
  }
  return out;
}

EagerTensor from_numpy(const py::array& a) {
  const DType dt = dtype_from(a.dtype());
  if (!a.dtype().attr("isnative").cast<bool>()) {
    throw Error(ErrorKind::DTypeMismatch, "from_numpy",
                "the array is not in native byte order; convert it with "
                "a.astype(a.dtype.newbyteorder('='))");
  }
  const auto r = static_cast<std::size_t>(a.ndim());
  const auto item = static_cast<std::int64_t>(itemsize(dt));
  std::vector<std::int64_t> shape(r), strides(r);
  for (std::size_t i = 0; i < r; ++i) {
    const auto bytes = static_cast<std::int64_t>(a.strides(static_cast<py::ssize_t>(i)));
    if (bytes % item != 0) {
      throw Error(ErrorKind::InvalidArgument, "from_numpy",
                  "a stride of " + std::to_string(bytes) +
                      " bytes is not a multiple of the item size " + std::to_string(item) +
                      "; pass a copy (np.ascontiguousarray(a))");
    }
    shape[i] = static_cast<std::int64_t>(a.shape(static_cast<py::ssize_t>(i)));
    strides[i] = bytes / item;
  }
  py::object owner = a;
  auto keep = std::shared_ptr<void>(owner.release().ptr(), [](void* p) {
    if (!Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject*>(p));
  });
  return wrap_strided(const_cast<void*>(a.data()), dt, shape, strides, std::move(keep));
}

EagerTensor wrap_strided(void* first, DType dt, std::span<const std::int64_t> py_shape_,
                         std::span<const std::int64_t> py_strides,
                         std::shared_ptr<void> keepalive) {
  const auto r = py_shape_.size();
  const auto item = static_cast<std::int64_t>(itemsize(dt));
  Shape shape(r);
  Strides strides(r);
  std::int64_t lo = 0, hi = 0;
  bool empty = false;
  for (std::size_t i = 0; i < r; ++i) {
    const std::int64_t extent = py_shape_[i], stride = py_strides[i];
    shape[r - 1 - i] = extent;
    strides[r - 1 - i] = stride;
    if (extent == 0) empty = true;
    if (extent > 0) (stride < 0 ? lo : hi) += (extent - 1) * stride;
  }
  // The storage starts at the lowest element address, so negative strides
  // stay inside it; element (0, ..., 0) sits at offset -lo.
  char* base = empty ? static_cast<char*>(first) : static_cast<char*>(first) + lo * item;
  const std::size_t nbytes = empty ? 0 : static_cast<std::size_t>((hi - lo + 1) * item);
  auto storage = wrap_storage(base, nbytes, Placement{}, std::move(keepalive));
  return runtime()->tensor(
      Tensor::from_storage(std::move(storage), dt, std::move(shape), std::move(strides), -lo));
}

py::array to_numpy(const EagerTensor& t) {
  const Tensor& v = t.value();
  const auto r = static_cast<std::size_t>(v.rank());
  const auto item = static_cast<py::ssize_t>(itemsize(v.dtype()));
  std::vector<py::ssize_t> shape(r), strides(r);
  for (std::size_t i = 0; i < r; ++i) {
    shape[i] = static_cast<py::ssize_t>(v.shape()[r - 1 - i]);
    strides[i] = static_cast<py::ssize_t>(v.strides()[r - 1 - i]) * item;
  }
  auto* hold = new Tensor(v);
  py::capsule base(hold, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(numpy_dtype(v.dtype()), std::move(shape), std::move(strides), v.raw_data(),
                   base);
}

EagerTensor as_tensor(const py::handle& h, std::optional<DType> dtype) {
  if (py::isinstance<EagerTensor>(h)) {
    const auto& t = h.cast<const EagerTensor&>();
    if (!dtype || *dtype == t.dtype()) return t;
    return cast(t, *dtype);
  }
  if (is_py_scalar(h)) {
    const Scalar v = scalar_of(h);
    return runtime()->tensor(dtype ? Tensor::scalar(v, *dtype) : Tensor::scalar(v));
  }
  if (!py::isinstance<py::array>(h) && py::hasattr(h, "__dlpack__") &&
      !py::hasattr(h, "__array_interface__")) {
    return py::module_::import("tenferro._tenferro").attr("from_dlpack")(h).cast<EagerTensor>();
  }
  py::object arr = py::module_::import("numpy").attr("asarray")(h);
  auto a = py::reinterpret_borrow<py::array>(arr);
  if (a.dtype().kind() == 'O' || a.dtype().kind() == 'U' || a.dtype().kind() == 'S') {
    throw Error(ErrorKind::DTypeMismatch, "tensor",
                "cannot make a tensor from " +
                    std::string(py::str(py::type::of(h).attr("__name__"))) +
                    " (NumPy reads it as dtype " + std::string(py::str(a.dtype())) +
                    "); pass numbers, nested lists of numbers or arrays");
  }
  // Python ints and floats become int64 and float64 as in NumPy; other NumPy
  // dtypes without a counterpart (uint8, float16...) convert when asked to.
  if (dtype) {
    a = py::reinterpret_borrow<py::array>(
        a.attr("astype")(numpy_dtype(*dtype), py::arg("copy") = false));
  } else {
    const char k = a.dtype().kind();
    const auto size = a.dtype().itemsize();
    const bool ours = k == 'b' || (k == 'i' && (size == 4 || size == 8)) ||
                      (k == 'f' && (size == 4 || size == 8)) ||
                      (k == 'c' && (size == 8 || size == 16));
    if (!ours) {
      throw Error(ErrorKind::DTypeMismatch, "tensor",
                  "NumPy dtype " + std::string(py::str(a.dtype())) +
                      " has no tenferro counterpart; pass dtype=... or convert with .astype");
    }
  }
  return from_numpy(a);
}

std::int64_t const_extent(const SymDim& d, const char* op, const char* what) {
  if (auto c = d.try_constant()) return *c;
  throw Error(ErrorKind::Unsupported, op,
              std::string(what) + " needs a constant extent, but this axis has the named size " +
                  d.to_string() +
                  " in the traced program; bind it to a number in the Spec, or "
                  "work on whole axes");
}

Scalar scalar_of(const py::handle& h) {
  if (py::isinstance<py::bool_>(h)) return Scalar(h.cast<bool>());
  if (py::isinstance<py::int_>(h)) return Scalar(h.cast<std::int64_t>());
  if (py::isinstance<py::float_>(h)) return Scalar(h.cast<double>());
  return Scalar(h.cast<std::complex<double>>());
}

// Python exception classes live in tenferro/errors.py; the translator looks
// them up on first use.
void translate(const Error& e) {
  const std::string kind(name(e.kind()));
  py::object cls;
  try {
    cls = py::module_::import("tenferro.errors").attr("class_for")(kind);
  } catch (py::error_already_set&) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return;
  }
  py::object exc = cls(e.what());
  exc.attr("kind") = kind;
  exc.attr("phase") = std::string(name(e.phase()));
  exc.attr("op") = e.op();
  PyErr_SetObject(cls.ptr(), exc.ptr());
}

}  // namespace tenferro::python

PYBIND11_MODULE(_tenferro, m) {
  using namespace tenferro;
  using namespace tenferro::python;
  m.doc() = "tenferro's compiled core; import the package `tenferro` instead.";

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      translate(e);
    } catch (const std::bad_alloc&) {
      PyErr_SetString(PyExc_MemoryError, "tenferro: out of memory");
    }
  });

  py::enum_<DType>(m, "dtype", "A tenferro element type (tenferro.float64, ...).")
      .value("bool", DType::Bool)
      .value("int32", DType::I32)
      .value("int64", DType::I64)
      .value("float32", DType::F32)
      .value("float64", DType::F64)
      .value("complex64", DType::C64)
      .value("complex128", DType::C128)
      .def_property_readonly("itemsize", [](DType d) { return itemsize(d); })
      .def_property_readonly("is_complex", [](DType d) { return is_complex(d); })
      .def_property_readonly("is_floating_point",
                             [](DType d) { return d == DType::F32 || d == DType::F64; })
      .def_property_readonly(
          "numpy", [](DType d) { return numpy_dtype(d); }, "The NumPy dtype of the same name.")
      .def("__str__", [](DType d) { return std::string(dtype_name(d)); })
      .def("__repr__", [](DType d) { return "tenferro." + std::string(dtype_name(d)); });
  m.def(
      "as_dtype", [](const py::object& o) { return dtype_from(o); },
      "The tenferro dtype of a dtype-like object (tenferro.float64, np.float32, float, 'c16').");
  m.def(
      "result_type", [](DType a, DType b) { return promote_types(a, b); },
      "The dtype a binary op gives for operands of dtypes a and b.");

  m.def(
      "set_num_threads",
      [](int n) { dynamic_cast<CpuBackend&>(runtime()->backend()).set_num_threads(n); },
      py::arg("n"), "Threads of the CPU backend and OpenBLAS (0: one per core).");
  m.def(
      "get_num_threads",
      [] { return dynamic_cast<CpuBackend&>(runtime()->backend()).num_threads(); },
      "Threads of the CPU backend.");

  init_tensor(m);
  init_ops(m);
  init_composite(m);
  init_autograd(m);
  init_traced(m);
  init_control_flow(m);
  init_extension(m);
  init_library(m);
  auto linalg = m.def_submodule("linalg", "Dense linear algebra (LAPACK) with AD.");
  init_linalg(linalg);
  auto fft = m.def_submodule("fft", "Fast Fourier transforms (FFTW) with AD.");
  init_fft(fft);
  init_einsum(m);
  auto optim = m.def_submodule("optim", "Optimisers.");
  init_optim(optim);
}
