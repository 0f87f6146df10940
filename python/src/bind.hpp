#pragma once
// Shared pieces of the Python module: the process's default runtime, dtype and
// axis conversions, how a Python object becomes a tensor, and the dispatch
// between the eager tier (tenferro.Tensor) and the traced tier
// (tenferro.TracedTensor, inside tenferro.jit).
//
// Axis convention. A Python tensor of shape (s0, ..., s{r-1}) is the C++
// tensor of shape [s{r-1}, ..., s0] on the same memory: NumPy's C order is the
// library's column-major order read backwards. So a C-contiguous NumPy array
// is a compact C++ tensor, the library's compact results are C-contiguous
// arrays, and Python axis d is C++ axis r - 1 - d. Every binding converts axis
// numbers, shapes and batch conventions (the C++ tier puts batch axes last,
// NumPy first) at the boundary; storage is never converted.
//
// Tiers. Every operation is written once as a template over the tensor type
// (the C++ surface is: ad/ops.hpp) and dispatched by `dispatch`: traced when
// any operand is a TracedTensor (other operands become constants), eager
// otherwise, with the GIL released around eager kernels (MaybeRelease).

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <tenferro/tenferro.hpp>

namespace tenferro::python {

namespace py = pybind11;

/// The runtime every tensor made from Python belongs to: a CPU runtime with
/// one thread per core, made on first use and kept for the process.
const EagerRuntimePtr& runtime();

DType dtype_from(const py::handle& h);
py::dtype numpy_dtype(DType d);
const char* dtype_name(DType d);

/// Python shape of a C++ shape (reversed); symbolic extents print as strings.
py::tuple py_shape(const Shape& s);
py::tuple py_shape(const SymShape& s);
/// C++ shape of a Python shape (a sequence or an int), reversed.
Shape cpp_shape(const py::handle& shape);
/// The same with named sizes: strings become SymDim::var.
SymShape cpp_sym_shape(const py::handle& shape);
/// Python axis d of a rank-r tensor as a C++ axis (IndexError-typed
/// AxisOutOfBounds when out of range).
std::int64_t cpp_axis(std::int64_t d, std::int64_t r, const char* op);
/// An axis argument (None, int or sequence) as C++ axes; None gives nullopt.
std::optional<Axes> cpp_axes(const py::handle& axis, std::int64_t r, const char* op);

/// A tensor from a Tensor, a NumPy array (shared when its dtype is one of
/// ours), a Python scalar or a nested sequence (copied, NumPy's rules).
EagerTensor as_tensor(const py::handle& h, std::optional<DType> dtype = std::nullopt);
/// External memory as a tensor without a copy: `first` is element (0, ...,
/// 0), shape and strides (in elements, any sign) in NumPy's order.
EagerTensor wrap_strided(void* first, DType dt, std::span<const std::int64_t> shape,
                         std::span<const std::int64_t> strides, std::shared_ptr<void> keepalive);
/// The NumPy array's memory as a tensor, without a copy.
EagerTensor from_numpy(const py::array& a);
/// A NumPy array viewing the tensor's memory (the array keeps it alive).
py::array to_numpy(const EagerTensor& t);

inline bool is_traced(const py::handle& h) {
  return py::isinstance<TracedTensor>(h);
}

// Fast paths for the hottest conversions: pybind11's generic cast looks the
// C++ type up by name on every call (a fifth of a 4-element add's time).
/// pybind11's record of tenferro.Tensor (registered by init_tensor).
inline const py::detail::type_info* tensor_type_info() {
  static const py::detail::type_info* ti = py::detail::get_type_info(typeid(EagerTensor));
  return ti;
}
/// Exactly a tenferro.Tensor (subclasses take the generic path).
inline bool is_tensor_exact(const py::handle& h) {
  return Py_TYPE(h.ptr()) == tensor_type_info()->type;
}
/// The tensor of an exact tenferro.Tensor (pybind11's simple layout, [value*]
/// [holder], read directly), or nullptr for anything else (a subclass, or an
/// object whose __init__ never ran).
inline const EagerTensor* exact_tensor(const py::handle& h) {
  if (!is_tensor_exact(h)) return nullptr;
  const auto* inst = reinterpret_cast<const py::detail::instance*>(h.ptr());
  if (!inst->simple_layout) return nullptr;
  return static_cast<const EagerTensor*>(inst->simple_value_holder[0]);
}
/// A new tenferro.Tensor owning t. Its value lives inside the Python object
/// (one allocation, no entry in pybind11's instance registry); see
/// tensor_object.cpp.
py::object tensor_to_py(EagerTensor&& t);
/// Installs tenferro.Tensor's deallocator for those objects (init_tensor).
void init_tensor_objects(const py::handle& cls);
inline bool is_py_scalar(const py::handle& h) {
  return py::isinstance<py::bool_>(h) || py::isinstance<py::int_>(h) ||
         py::isinstance<py::float_>(h) || PyComplex_Check(h.ptr());
}
Scalar scalar_of(const py::handle& h);

/// `h` as a tensor of tier T: a traced value as it is, anything else through
/// as_tensor (a constant of the program when T is TracedTensor).
template <class T>
T to(const py::handle& h, std::optional<DType> dtype = std::nullopt) {
  if constexpr (std::is_same_v<T, EagerTensor>) {
    if (is_traced(h)) {
      throw Error(ErrorKind::ContextMismatch, "tensor",
                  "a traced value cannot be used outside the function being traced (return it "
                  "from the function instead)");
    }
    return as_tensor(h, dtype);
  } else {
    if (is_traced(h)) {
      const auto& t = h.cast<const TracedTensor&>();
      if (dtype && *dtype != t.dtype()) return cast(t, *dtype);
      return t;
    }
    return constant(as_tensor(h, dtype).value());
  }
}

/// Releases the GIL for an eager computation; nothing for tracing.
template <class T>
struct MaybeRelease {
  py::gil_scoped_release release;
};
/// Releases the GIL for an eager elementwise op on many elements. Ops on
/// fewer than kSmallOp elements run on the calling thread (below the CPU
/// backend's parallel threshold), where releasing and retaking the GIL would
/// cost more than the op; the storage they free is freed on this thread,
/// which holds the GIL, so no deleter waits for it.
inline constexpr std::int64_t kSmallOp = 4096;
template <class T>
struct MaybeReleaseLarge {
  explicit MaybeReleaseLarge(std::int64_t numel) {
    if (numel >= kSmallOp) release.emplace();
  }
  std::optional<py::gil_scoped_release> release;
};
template <>
struct MaybeRelease<TracedTensor> {
  MaybeRelease() {}   // NOLINT: user-provided, so that an unused guard
  ~MaybeRelease() {}  // NOLINT: is not a warning
};
template <>
struct MaybeReleaseLarge<TracedTensor> {
  explicit MaybeReleaseLarge(std::int64_t) {}
  ~MaybeReleaseLarge() {}  // NOLINT: see MaybeRelease
};

/// Calls f.template operator()<T>() with T the tier of the operands.
template <class F>
py::object dispatch(bool traced, F&& f) {
  if (traced) return py::cast(f.template operator()<TracedTensor>());
  return py::cast(f.template operator()<EagerTensor>());
}
template <class... H>
bool any_traced(const H&... h) {
  return (is_traced(h) || ...);
}

/// Whether the tensor takes part in AD (requires grad, or has history); a
/// traced value always goes through recorded ops.
inline bool tracked(const EagerTensor& t) {
  return t.requires_grad();
}
inline bool tracked(const TracedTensor&) {
  return true;
}
/// An untracked tensor for a view of the value (no copy).
inline EagerTensor wrap_view(Tensor v) {
  return runtime()->tensor(std::move(v));
}

/// The shape of a tensor of either tier as symbolic sizes.
inline SymShape sym_shape(const EagerTensor& t) {
  return SymShape(t.shape().begin(), t.shape().end());
}
inline SymShape sym_shape(const TracedTensor& t) {
  return t.shape();
}
/// A constant extent (Unsupported when symbolic: `what` says what needs it).
std::int64_t const_extent(const SymDim& d, const char* op, const char* what);

/// C++ axes 0 and 1 swapped (Python's last two axes): a view when untracked,
/// the recorded transpose otherwise.
template <class T>
T swap01(const T& x) {
  if constexpr (std::is_same_v<T, EagerTensor>) {
    if (!tracked(x)) return wrap_view(x.value().transpose(0, 1));
  }
  return transpose(x, 0, 1);
}
/// Python's transpose of every matrix in a batch (x.mT); rank < 2 unchanged.
template <class T>
T mT(const T& x) {
  return x.rank() < 2 ? x : swap01(x);
}
/// x with `n` trailing extent-1 C++ axes appended (leading in Python).
template <class T>
T pad_rank(const T& x, std::int64_t n) {
  if (n <= 0) return x;
  if constexpr (std::is_same_v<T, EagerTensor>) {
    if (!tracked(x)) {
      Shape s = x.shape();
      for (std::int64_t i = 0; i < n; ++i) s.push_back(1);
      return wrap_view(x.value().reshape(s));
    }
  }
  SymShape s = sym_shape(x);
  for (std::int64_t i = 0; i < n; ++i) s.push_back(SymDim(1));
  return reshape(x, s);
}

/// NumPy's result type of two arrays: the C++ lattice, except that an
/// integer with float32 (complex64) gives float64 (complex128).
inline DType numpy_array_promote(DType a, DType b) {
  const DType d = promote_types(a, b);
  if (is_integral(a) || is_integral(b)) {
    if (d == DType::F32) return DType::F64;
    if (d == DType::C64) return DType::C128;
  }
  return d;
}

/// NumPy's promotion for two tensor operands, applied before the C++ lattice
/// (which is PyTorch's): a 0-d operand next to an n-d one acts like a Python
/// scalar of its kind (NumPy's value-based casting: float32 array + float64
/// 0-d is float32); between arrays an integer with float32 (complex64) gives
/// float64 (complex128), where PyTorch keeps float32.
template <class T>
void numpy_promote(T& x, T& y) {
  const DType a = x.dtype(), b = y.dtype();
  if (a == b) return;
  const bool xs = x.rank() == 0, ys = y.rank() == 0;
  if (xs != ys) {
    T& s = xs ? x : y;
    const DType array = xs ? b : a;
    // A float or complex 0-d next to an integer array promotes as arrays do.
    const DType d = is_integral(array) && is_inexact(s.dtype())
                        ? numpy_array_promote(array, s.dtype())
                        : scalar_operand_dtype(array, s.dtype());
    if (d != s.dtype()) s = cast(s, d);
    return;
  }
  const DType d = numpy_array_promote(a, b);
  if (d != promote_types(a, b)) {
    // The C++ lattice would stop at single precision: widen the float side.
    if (!is_integral(a)) x = convert(x, d);
    if (!is_integral(b)) y = convert(y, d);
  }
}

/// a op b with NumPy broadcasting; a or b may be a Python scalar or array.
py::object binary_py(BinaryOp op, const py::handle& a, const py::handle& b);
py::object unary_py(UnaryOp op, const py::handle& a);

/// Applies an extension op (eager: install-ensure of `module`, then the
/// recorded call; traced: extension::apply with `module` ensured on the
/// default runtime). One output, or a tuple.
py::object apply_extension(const ExtensionOpPtr& op, const ExtensionModulePtr& module,
                           const py::args& args);

/// Sets the Python exception of a tenferro error (the module's translator).
void translate(const Error& e);

void init_tensor(py::module_& m);
void init_ops(py::module_& m);
void init_autograd(py::module_& m);
void init_traced(py::module_& m);
void init_control_flow(py::module_& m);
void init_linalg(py::module_& m);
void init_fft(py::module_& m);
void init_einsum(py::module_& m);
void init_extension(py::module_& m);
void init_composite(py::module_& m);
void init_library(py::module_& m);
void init_optim(py::module_& m);

}  // namespace tenferro::python
