// tenferro.Tensor and tenferro.TracedTensor: tensors of the eager and traced
// tiers seen with NumPy's axis order (bind.hpp), NumPy and DLPack exchange,
// views and operators.

#include <dlpack/dlpack.h>

#include <algorithm>
#include <numeric>

#include "bind.hpp"

namespace tenferro::python {

namespace {

py::object item_of(const EagerTensor& t) {
  Scalar s;
  {
    py::gil_scoped_release r;
    s = t.item();
  }
  switch (t.dtype()) {
    case DType::Bool:
      return py::bool_(s.to_int() != 0);
    case DType::I32:
    case DType::I64:
      return py::int_(s.to_int());
    case DType::F32:
    case DType::F64:
      return py::float_(s.real());
    default:
      return py::cast(std::complex<double>(s.real(), s.imag()));
  }
}

}  // namespace

namespace {
/// Elements of the broadcast result of x and y (NumPy's alignment).
std::int64_t result_numel(const Shape& a, const Shape& b) {
  std::int64_t n = 1;
  const std::size_t r = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < r; ++i) {
    const std::int64_t ea = i < a.size() ? a[i] : 1, eb = i < b.size() ? b[i] : 1;
    n *= std::max(ea, eb);
  }
  return n;
}

template <class T>
std::int64_t numel_of(const T& t) {
  if constexpr (std::is_same_v<T, EagerTensor>) {
    return t.numel();
  } else {
    return 0;
  }
}
}  // namespace

py::object binary_py(BinaryOp op, const py::handle& a, const py::handle& b) {
  // The common eager case without the generic conversions.
  if (const EagerTensor* xp = exact_tensor(a)) {
    const EagerTensor& x = *xp;
    if (const EagerTensor* yp = exact_tensor(b)) {
      const EagerTensor& y = *yp;
      // The values' metadata is inline (one call each instead of one per field).
      const Tensor &xv = x.value(), &yv = y.value();
      if (xv.rank() == yv.rank() && xv.dtype() == yv.dtype()) {
        EagerTensor out;
        {
          MaybeReleaseLarge<EagerTensor> r(result_numel(xv.shape(), yv.shape()));
          out = binary(op, x, y);
        }
        return tensor_to_py(std::move(out));
      }
    } else if (is_py_scalar(b)) {
      const Scalar s = scalar_of(b);
      EagerTensor out;
      {
        MaybeReleaseLarge<EagerTensor> r(x.numel());
        out = binary(op, x, scalar_like(x, s));
      }
      return tensor_to_py(std::move(out));
    }
  }
  return dispatch(any_traced(a, b), [&]<class T>() -> T {
    if (is_py_scalar(b) && !is_py_scalar(a)) {
      const T x = to<T>(a);
      const Scalar s = scalar_of(b);
      MaybeReleaseLarge<T> r(numel_of(x));
      return binary(op, x, scalar_like(x, s));
    }
    if (is_py_scalar(a) && !is_py_scalar(b)) {
      const T y = to<T>(b);
      const Scalar s = scalar_of(a);
      MaybeReleaseLarge<T> r(numel_of(y));
      return binary(op, scalar_like(y, s), y);
    }
    T x = to<T>(a), y = to<T>(b);
    MaybeRelease<T> r;
    numpy_promote(x, y);
    const auto ra = x.rank(), rb = y.rank();
    if (ra < rb) x = pad_rank(x, rb - ra);
    if (rb < ra) y = pad_rank(y, ra - rb);
    return binary(op, x, y);
  });
}

py::object unary_py(UnaryOp op, const py::handle& a) {
  if (const EagerTensor* xp = exact_tensor(a)) {
    EagerTensor out;
    {
      MaybeReleaseLarge<EagerTensor> r(xp->numel());
      out = unary(op, *xp);
    }
    return tensor_to_py(std::move(out));
  }
  return dispatch(is_traced(a), [&]<class T>() -> T {
    const T x = to<T>(a);
    MaybeReleaseLarge<T> r(numel_of(x));
    return unary(op, x);
  });
}

namespace {

// ---- views, in Python axis numbers (no copy for untracked eager tensors) ----------

std::vector<std::int64_t> reversed_perm(std::int64_t r) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(r));
  for (std::int64_t i = 0; i < r; ++i) p[static_cast<std::size_t>(i)] = r - 1 - i;
  return p;
}

template <class T>
T permute_cpp(const T& x, const std::vector<std::int64_t>& perm) {
  if constexpr (std::is_same_v<T, EagerTensor>) {
    if (!tracked(x)) return wrap_view(x.value().permute(perm));
  }
  return permute(x, Axes(perm.begin(), perm.end()));
}

template <class T>
T permute_py(const T& x, const std::vector<std::int64_t>& py_perm) {
  const auto r = x.rank();
  if (static_cast<std::int64_t>(py_perm.size()) != r) {
    throw Error(ErrorKind::RankMismatch, "permute",
                std::to_string(py_perm.size()) + " axes given for a tensor of dimension " +
                    std::to_string(r));
  }
  std::vector<std::int64_t> perm(static_cast<std::size_t>(r));
  for (std::int64_t j = 0; j < r; ++j) {
    const auto d = py_perm[static_cast<std::size_t>(r - 1 - j)];
    perm[static_cast<std::size_t>(j)] = cpp_axis(d, r, "permute");
  }
  return permute_cpp(x, perm);
}

template <class T>
T reshape_cpp(const T& x, const SymShape& s) {
  if constexpr (std::is_same_v<T, EagerTensor>) {
    if (!tracked(x)) {
      Shape c;
      for (const auto& d : s) c.push_back(d.constant());
      return wrap_view(x.value().reshape_copy(c));
    }
  }
  return reshape(x, s);
}

template <class T>
T reshape_py(const T& x, const py::handle& shape, const std::string& order) {
  SymShape s = cpp_sym_shape(shape);
  if (order == "C" || order == "A") return reshape_cpp(x, s);
  if (order != "F") {
    throw Error(ErrorKind::InvalidArgument, "reshape",
                "order must be 'C' or 'F', got '" + order + "'");
  }
  // F order in Python is C++ order on the axes as Python lists them.
  std::reverse(s.begin(), s.end());
  auto y = reshape_cpp(permute_cpp(x, reversed_perm(x.rank())), s);
  return permute_cpp(y, reversed_perm(y.rank()));
}

template <class T>
T slice_py(const T& x, std::int64_t axis, std::optional<std::int64_t> start,
           std::optional<std::int64_t> stop, std::int64_t step) {
  const auto r = x.rank();
  const auto a = cpp_axis(axis, r, "slice");
  if constexpr (std::is_same_v<T, EagerTensor>) {
    if (!tracked(x)) return wrap_view(x.value().slice(a, start, stop, step));
  }
  if (step == 0) throw Error(ErrorKind::InvalidArgument, "slice", "slice step cannot be zero");
  const SymShape shape = sym_shape(x);
  if (!start && !stop && step == 1) return x;
  // Python's slice rules, then the recorded slice (positive steps) with a
  // flip for negative ones.
  const auto n = const_extent(shape[static_cast<std::size_t>(a)], "slice", "slicing an axis");
  py::ssize_t b = 0, e = 0, st = 0, len = 0;
  auto opt = [](std::optional<std::int64_t> v) -> py::object {
    return v ? py::object(py::int_(*v)) : py::object(py::none());
  };
  py::slice sl(opt(start), opt(stop), py::int_(step));
  if (!sl.compute(static_cast<py::ssize_t>(n), &b, &e, &st, &len)) throw py::error_already_set();
  T src = x;
  std::int64_t first = b;
  if (st < 0) {
    src = flip(x, Axes{a});
    first = n - 1 - b;
    st = -st;
  }
  Shape lo(static_cast<std::size_t>(r), 0), hi(static_cast<std::size_t>(r)),
      stride(static_cast<std::size_t>(r), 1);
  for (std::int64_t d = 0; d < r; ++d) {
    hi[static_cast<std::size_t>(d)] =
        d == a ? 0 : const_extent(shape[static_cast<std::size_t>(d)], "slice", "slicing a tensor");
  }
  lo[static_cast<std::size_t>(a)] = first;
  hi[static_cast<std::size_t>(a)] = len == 0 ? first : first + (len - 1) * st + 1;
  stride[static_cast<std::size_t>(a)] = st;
  return slice(src, lo, hi, stride);
}

template <class T>
T select_py(const T& x, std::int64_t axis, std::int64_t index) {
  const auto r = x.rank();
  const auto a = cpp_axis(axis, r, "select");
  const auto n =
      const_extent(sym_shape(x)[static_cast<std::size_t>(a)], "index", "indexing an axis");
  if (index < -n || index >= n) {
    throw Error(ErrorKind::AxisOutOfBounds, "index",
                "index " + std::to_string(index) + " is out of bounds for axis " +
                    std::to_string(axis) + " with size " + std::to_string(n));
  }
  if (index < 0) index += n;
  if constexpr (std::is_same_v<T, EagerTensor>) {
    if (!tracked(x)) return wrap_view(x.value().select(a, index));
  }
  auto y = slice_py(x, axis, index, index + 1, 1);
  SymShape s = sym_shape(y);
  s.erase(s.begin() + a);
  return reshape(y, s);
}

template <class T>
T unsqueeze_py(const T& x, std::int64_t axis) {
  const auto r = x.rank() + 1;
  const auto a = cpp_axis(axis, r, "unsqueeze");
  if constexpr (std::is_same_v<T, EagerTensor>) {
    if (!tracked(x)) return wrap_view(x.value().unsqueeze(a));
  }
  SymShape s = sym_shape(x);
  s.insert(s.begin() + a, SymDim(1));
  return reshape(x, s);
}

template <class T>
T squeeze_py(const T& x, const py::object& axis) {
  const auto r = x.rank();
  const SymShape shape = sym_shape(x);
  SymShape s;
  auto is_one = [](const SymDim& d) { return d.try_constant() == std::optional<std::int64_t>(1); };
  if (axis.is_none()) {
    for (const auto& e : shape) {
      if (!is_one(e)) s.push_back(e);
    }
  } else {
    auto axes = *cpp_axes(axis, r, "squeeze");
    for (auto a : axes) {
      if (!is_one(shape[static_cast<std::size_t>(a)])) {
        throw Error(ErrorKind::ShapeMismatch, "squeeze",
                    "cannot select an axis to squeeze out which has size not equal to one");
      }
    }
    for (std::int64_t d = 0; d < r; ++d) {
      if (std::find(axes.begin(), axes.end(), d) == axes.end()) {
        s.push_back(shape[static_cast<std::size_t>(d)]);
      }
    }
  }
  return reshape_cpp(x, s);
}

template <class T>
T broadcast_to_py(const T& x, const py::handle& shape) {
  SymShape s = cpp_sym_shape(shape);
  const auto pad = static_cast<std::int64_t>(s.size()) - x.rank();
  if (pad < 0) {
    throw Error(ErrorKind::ShapeMismatch, "broadcast_to",
                "cannot broadcast a tensor of dimension " + std::to_string(x.rank()) +
                    " to a shape of dimension " + std::to_string(s.size()));
  }
  auto y = pad_rank(x, pad);
  if constexpr (std::is_same_v<T, EagerTensor>) {
    if (!tracked(y)) {
      Shape c;
      for (const auto& d : s) c.push_back(d.constant());
      return wrap_view(y.value().broadcast_to(c));
    }
  }
  return broadcast_to(y, s);
}

template <class T>
T index_select_py(const T& x, std::int64_t axis, const py::handle& index) {
  const auto a = cpp_axis(axis, x.rank(), "take");
  const auto n =
      const_extent(sym_shape(x)[static_cast<std::size_t>(a)], "take", "indexing an axis");
  // NumPy's negative indices, resolved on the index values (a constant).
  EagerTensor idx = as_tensor(index);
  if (idx.dtype() != DType::I64) idx = cast(idx, DType::I64);
  if (idx.numel() > 0) {
    idx = where(lt(idx, scalar_like(idx, std::int64_t{0})), add(idx, scalar_like(idx, n)), idx);
  }
  if constexpr (std::is_same_v<T, EagerTensor>) {
    py::gil_scoped_release r;
    return index_select(x, a, idx);
  } else {
    return index_select(x, a, constant(idx.value()));
  }
}

template <class T>
T diagonal_py(const T& x, std::int64_t offset, std::int64_t axis1, std::int64_t axis2) {
  const auto r = x.rank();
  const auto a1 = cpp_axis(axis1, r, "diagonal"), a2 = cpp_axis(axis2, r, "diagonal");
  // NumPy: the diagonal is the last axis; in C++ it comes first (last in Python).
  if constexpr (std::is_same_v<T, EagerTensor>) {
    if (!tracked(x)) return wrap_view(x.value().diagonal(offset, a1, a2));
  }
  return diagonal(x, offset, a1, a2);
}

// ---- DLPack --------------------------------------------------------------------------

struct DlpackHolder {
  Tensor value;
  std::vector<std::int64_t> shape, strides;
  DLManagedTensor managed{};
};

DLDataType dl_dtype(DType d) {
  switch (d) {
    case DType::I32:
      return {kDLInt, 32, 1};
    case DType::I64:
      return {kDLInt, 64, 1};
    case DType::F32:
      return {kDLFloat, 32, 1};
    case DType::F64:
      return {kDLFloat, 64, 1};
    case DType::C64:
      return {kDLComplex, 64, 1};
    case DType::C128:
      return {kDLComplex, 128, 1};
    default:
      throw Error(ErrorKind::DTypeMismatch, "__dlpack__",
                  "bool tensors cannot be exchanged through DLPack 0.6 (it has no "
                  "bool type); exchange them through NumPy (t.numpy())");
  }
}

DType dtype_of_dl(DLDataType t) {
  if (t.lanes == 1) {
    if (t.code == kDLInt && t.bits == 32) return DType::I32;
    if (t.code == kDLInt && t.bits == 64) return DType::I64;
    if (t.code == kDLFloat && t.bits == 32) return DType::F32;
    if (t.code == kDLFloat && t.bits == 64) return DType::F64;
    if (t.code == kDLComplex && t.bits == 64) return DType::C64;
    if (t.code == kDLComplex && t.bits == 128) return DType::C128;
    if (t.code == 6 && t.bits == 8) return DType::Bool;  // kDLBool (DLPack >= 0.8)
  }
  throw Error(ErrorKind::DTypeMismatch, "from_dlpack",
              "DLPack type (code " + std::to_string(t.code) + ", " + std::to_string(t.bits) +
                  " bits, " + std::to_string(t.lanes) +
                  " lanes) has no tenferro counterpart; convert it to int32, int64, float32, "
                  "float64, complex64 or complex128 first");
}

py::capsule to_dlpack(const EagerTensor& t) {
  if (tracked(t)) {
    throw Error(ErrorKind::RuntimeState, "__dlpack__",
                "the tensor requires grad; export t.detach() instead");
  }
  const Tensor& v = t.value();
  auto* h = new DlpackHolder{v, {}, {}, {}};
  const auto r = static_cast<std::size_t>(v.rank());
  h->shape.resize(r);
  h->strides.resize(r);
  for (std::size_t i = 0; i < r; ++i) {
    h->shape[i] = v.shape()[r - 1 - i];
    h->strides[i] = v.strides()[r - 1 - i];
  }
  DLTensor& d = h->managed.dl_tensor;
  try {
    d.dtype = dl_dtype(v.dtype());
  } catch (...) {
    delete h;
    throw;
  }
  d.data = v.numel() == 0 ? nullptr : v.raw_data();
  d.device = {kDLCPU, 0};
  d.ndim = static_cast<int>(r);
  d.shape = h->shape.data();
  d.strides = h->strides.data();
  d.byte_offset = 0;
  h->managed.manager_ctx = h;
  h->managed.deleter = [](DLManagedTensor* m) {
    delete static_cast<DlpackHolder*>(m->manager_ctx);
  };
  return py::capsule(&h->managed, "dltensor", [](PyObject* cap) {
    // A capsule nobody consumed still owns the tensor.
    if (PyCapsule_IsValid(cap, "dltensor")) {
      auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
      if (m && m->deleter) m->deleter(m);
    }
  });
}

EagerTensor from_dlpack(const py::object& obj) {
  py::object cap_obj = obj;
  if (py::hasattr(obj, "__dlpack__")) {
    if (py::hasattr(obj, "__dlpack_device__")) {
      auto dev = obj.attr("__dlpack_device__")().cast<py::tuple>();
      if (dev[0].cast<int>() != kDLCPU) {
        throw Error(
            ErrorKind::ContextMismatch, "from_dlpack",
            "the tensor lives on DLPack device type " + std::to_string(dev[0].cast<int>()) +
                "; tenferro's Python package runs on the CPU: copy it to host memory first");
      }
    }
    cap_obj = obj.attr("__dlpack__")();
  }
  if (!PyCapsule_IsValid(cap_obj.ptr(), "dltensor")) {
    throw Error(ErrorKind::InvalidArgument, "from_dlpack",
                "expected an object with __dlpack__ or an unused 'dltensor' capsule");
  }
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap_obj.ptr(), "dltensor"));
  const DLTensor& d = m->dl_tensor;
  if (d.device.device_type != kDLCPU) {
    throw Error(ErrorKind::ContextMismatch, "from_dlpack",
                "the tensor is not in CPU memory; copy it to host memory first");
  }
  const DType dt = dtype_of_dl(d.dtype);
  const auto r = static_cast<std::size_t>(d.ndim);
  std::vector<std::int64_t> shape(r), strides(r);
  std::int64_t acc = 1;
  for (std::size_t k = r; k-- > 0;) {
    shape[k] = d.shape[k];
    strides[k] = d.strides ? d.strides[k] : acc;  // no strides: C-contiguous
    acc *= d.shape[k];
  }
  void* first = static_cast<char*>(d.data) + d.byte_offset;
  PyCapsule_SetName(cap_obj.ptr(), "used_dltensor");
  auto keep = std::shared_ptr<void>(m, [](void* p) {
    auto* mt = static_cast<DLManagedTensor*>(p);
    if (mt->deleter) mt->deleter(mt);
  });
  return wrap_strided(first, dt, shape, strides, std::move(keep));
}

py::array numpy_view(const EagerTensor& t) {
  if (tracked(t)) {
    throw Error(ErrorKind::RuntimeState, "numpy",
                "can't call numpy() on a tensor that requires grad; use "
                "t.detach().numpy() instead");
  }
  return to_numpy(t);
}

// The arithmetic operators of tenferro.Tensor as CPython number slots: a + b
// calls them directly instead of going through pybind11's method dispatch
// (about 150 ns of a 4-element add). They follow the protocol: CPython calls
// the slot of either operand's type with the operands in order.
template <BinaryOp Op>
PyObject* nb_binary(PyObject* a, PyObject* b) noexcept {
  try {
    return binary_py(Op, py::handle(a), py::handle(b)).release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const Error& e) {
    translate(e);
  } catch (const std::bad_alloc&) {
    PyErr_SetString(PyExc_MemoryError, "tenferro: out of memory");
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

void install_number_slots(const py::handle& cls) {
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  PyNumberMethods* nb = type->tp_as_number;
  if (nb == nullptr) return;  // not a heap type: the dict methods still work
  nb->nb_add = &nb_binary<BinaryOp::Add>;
  nb->nb_subtract = &nb_binary<BinaryOp::Sub>;
  nb->nb_multiply = &nb_binary<BinaryOp::Mul>;
  nb->nb_true_divide = &nb_binary<BinaryOp::Div>;
  PyType_Modified(type);
}

// The methods both tiers share: metadata, views and operators.
template <class T>
void def_common(py::class_<T>& cls) {
  cls.def_property_readonly(
         "shape", [](const T& t) { return py_shape(t.shape()); },
         "The extents, in NumPy's order (named sizes of a traced value as strings).")
      .def_property_readonly("ndim", [](const T& t) { return t.rank(); })
      .def_property_readonly("dtype", [](const T& t) { return t.dtype(); })
      .def("_permute", &permute_py<T>)
      .def("_reshape", &reshape_py<T>)
      .def("_slice", &slice_py<T>)
      .def("_select", &select_py<T>)
      .def("_unsqueeze", &unsqueeze_py<T>)
      .def("_index_select", &index_select_py<T>)
      .def("squeeze", &squeeze_py<T>, py::arg("axis") = py::none(), "Removes axes of extent one.")
      .def("broadcast_to", &broadcast_to_py<T>, py::arg("shape"))
      .def("diagonal", &diagonal_py<T>, py::arg("offset") = 0, py::arg("axis1") = 0,
           py::arg("axis2") = 1, "The diagonal as the last axis (NumPy's np.diagonal).")
      .def_property_readonly(
          "T", [](const T& t) { return permute_cpp(t, reversed_perm(t.rank())); },
          "All axes reversed (a view).")
      .def_property_readonly(
          "mT",
          [](const T& t) {
            if (t.rank() < 2) {
              throw Error(ErrorKind::RankMismatch, "mT", "needs a tensor of dimension 2 or more");
            }
            return swap01(t);
          },
          "The last two axes swapped (a view).")
      .def_property_readonly("real",
                             [](const T& t) {
                               if constexpr (std::is_same_v<T, EagerTensor>) {
                                 if (!tracked(t)) return wrap_view(t.value().real());
                               }
                               return real(t);
                             })
      .def_property_readonly("imag", [](const T& t) {
        if constexpr (std::is_same_v<T, EagerTensor>) {
          if (!tracked(t)) return wrap_view(t.value().imag());
        }
        return imag(t);
      });

  auto binop = [&](const char* name, const char* rname, BinaryOp op) {
    cls.def(
        name, [op](const py::object& a, const py::object& b) { return binary_py(op, a, b); },
        py::is_operator());
    if (rname) {
      cls.def(
          rname, [op](const py::object& a, const py::object& b) { return binary_py(op, b, a); },
          py::is_operator());
    }
  };
  binop("__add__", "__radd__", BinaryOp::Add);
  binop("__sub__", "__rsub__", BinaryOp::Sub);
  binop("__mul__", "__rmul__", BinaryOp::Mul);
  binop("__truediv__", "__rtruediv__", BinaryOp::Div);
  binop("__pow__", "__rpow__", BinaryOp::Pow);
  binop("__mod__", "__rmod__", BinaryOp::Remainder);
  binop("__eq__", nullptr, BinaryOp::Eq);
  binop("__ne__", nullptr, BinaryOp::Ne);
  binop("__lt__", nullptr, BinaryOp::Lt);
  binop("__le__", nullptr, BinaryOp::Le);
  binop("__gt__", nullptr, BinaryOp::Gt);
  binop("__ge__", nullptr, BinaryOp::Ge);
  binop("__and__", "__rand__", BinaryOp::LogicalAnd);
  binop("__or__", "__ror__", BinaryOp::LogicalOr);
  cls.def("__neg__", [](const py::object& x) { return unary_py(UnaryOp::Neg, x); });
  cls.def("__pos__", [](const py::object& x) { return x; });
  cls.def("__abs__", [](const py::object& x) { return unary_py(UnaryOp::Abs, x); });
  cls.def("__invert__", [](const T& x) {
    if (x.dtype() != DType::Bool) {
      throw Error(ErrorKind::DTypeMismatch, "invert",
                  "~ is defined for bool tensors only (bitwise operations on integers are not "
                  "supported)");
    }
    MaybeRelease<T> r;
    return logical_not(x);
  });
  cls.attr("__hash__") = py::none();
}

}  // namespace

void init_tensor(py::module_& m) {
  py::class_<EagerTensor> cls(m, "Tensor", R"doc(
A tensor with NumPy's semantics: shape, axis numbers, broadcasting and C-order
reshape behave as in NumPy. Its memory is shared with NumPy arrays and DLPack
producers without copies; ops return C-contiguous results.
Make one with tenferro.tensor(data), tenferro.asarray(a), tenferro.from_numpy(a)
or the factories (zeros, ones, arange, ...).)doc");
  def_common(cls);
  install_number_slots(cls);
  init_tensor_objects(cls);
  cls.def_property_readonly("size", &EagerTensor::numel)
      .def_property_readonly(
          "strides",
          [](const EagerTensor& t) {
            const auto& s = t.value().strides();
            py::tuple out(s.size());
            const auto item = static_cast<std::int64_t>(itemsize(t.dtype()));
            for (std::size_t i = 0; i < s.size(); ++i)
              out[i] = py::int_(s[s.size() - 1 - i] * item);
            return out;
          },
          "Byte strides, in NumPy's order (as ndarray.strides).")
      .def(
          "data_ptr",
          [](const EagerTensor& t) {
            return reinterpret_cast<std::uintptr_t>(t.value().raw_data());
          },
          "Address of the first element.")
      .def("__len__",
           [](const EagerTensor& t) {
             if (t.rank() == 0) throw py::type_error("len() of a 0-d tensor");
             return t.shape()[static_cast<std::size_t>(t.rank() - 1)];
           })
      .def("numpy", &numpy_view, "A NumPy array sharing this tensor's memory.")
      .def(
          "__array__",
          [](const EagerTensor& t, py::object dtype) {
            py::array a = numpy_view(t);
            if (dtype.is_none()) return a;
            return py::reinterpret_borrow<py::array>(
                a.attr("astype")(dtype, py::arg("copy") = false));
          },
          py::arg("dtype") = py::none())
      .def(
          "__dlpack__", [](const EagerTensor& t, py::object) { return to_dlpack(t); },
          py::arg("stream") = py::none(), "A DLPack capsule sharing this tensor's memory.")
      .def("__dlpack_device__", [](const EagerTensor&) { return py::make_tuple(int(kDLCPU), 0); })
      .def("item", &item_of, "The value of a one-element tensor as a Python number.")
      .def("__float__", [](const EagerTensor& t) { return item_of(t).cast<py::float_>(); })
      .def("__int__", [](const EagerTensor& t) { return py::int_(item_of(t)); })
      .def("__complex__",
           [](const EagerTensor& t) {
             py::object c = py::module_::import("builtins").attr("complex");
             return c(item_of(t));
           })
      .def("__bool__",
           [](const EagerTensor& t) {
             if (t.numel() != 1) {
               throw Error(ErrorKind::ShapeMismatch, "bool",
                           "the truth value of a tensor with more than one element is "
                           "ambiguous; use .any() or .all()");
             }
             return py::bool_(item_of(t));
           })
      .def("__index__",
           [](const EagerTensor& t) {
             if (t.dtype() != DType::I32 && t.dtype() != DType::I64) {
               throw py::type_error("only integer tensors can be used as an index");
             }
             return item_of(t).cast<py::int_>();
           })
      .def(
          "copy",
          [](const EagerTensor& t) {
            if (!tracked(t)) return wrap_view(t.value().clone());
            return mul(t, scalar_like(t, 1));
          },
          "A copy with its own memory (C-contiguous).")
      .def(
          "is_contiguous", [](const EagerTensor& t) { return t.value().is_contiguous(); },
          "Whether the memory is C-contiguous (NumPy's order).");

  py::class_<TracedTensor> traced(m, "TracedTensor", R"doc(
A value of a traced program (inside tenferro.jit): the same operations as
Tensor build graph nodes instead of computing. Extents may be named sizes
(strings), bound when the program runs.)doc");
  def_common(traced);
  traced.def("__repr__", [](const TracedTensor& t) {
    return "TracedTensor(shape=" + std::string(py::str(py_shape(t.shape()))) +
           ", dtype=" + dtype_name(t.dtype()) + ")";
  });
  traced.def("__bool__", [](const TracedTensor&) -> bool {
    throw Error(ErrorKind::Unsupported, "bool",
                "a traced value has no truth value while the program is built (Python control "
                "flow cannot depend on it); use tenferro.where");
  });

  m.def(
      "from_numpy", [](const py::array& a) { return from_numpy(a); }, py::arg("a"),
      "A tensor sharing the array's memory (any strides); the array stays alive as long as "
      "the tensor or any view of it.");
  m.def("from_dlpack", &from_dlpack, py::arg("x"),
        "A tensor sharing the memory of a DLPack producer (torch, NumPy) without a copy.");
  m.def(
      "asarray",
      [](const py::object& data, const py::object& dtype) -> py::object {
        std::optional<DType> dt;
        if (!dtype.is_none()) dt = dtype_from(dtype);
        if (is_traced(data)) return py::cast(to<TracedTensor>(data, dt));
        return py::cast(as_tensor(data, dt));
      },
      py::arg("data"), py::arg("dtype") = py::none(),
      "A tensor of data, sharing memory with arrays, tensors and DLPack producers when the "
      "dtype matches, else a copy.");
}

}  // namespace tenferro::python
