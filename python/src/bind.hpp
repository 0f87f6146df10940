#pragma once
// Shared pieces of the Python module: the process's default runtime, dtype and
// axis conversions, and how a Python object becomes a tensor.
//
// Axis convention. A Python tensor of shape (s0, ..., s{r-1}) is the C++
// tensor of shape [s{r-1}, ..., s0] on the same memory: NumPy's C order is the
// library's column-major order read backwards. So a C-contiguous NumPy array
// is a compact C++ tensor, the library's compact results are C-contiguous
// arrays, and Python axis d is C++ axis r - 1 - d. Every binding converts axis
// numbers, shapes and batch conventions (the C++ tier puts batch axes last,
// NumPy first) at the boundary; storage is never converted.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
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

/// Python shape of a C++ shape (reversed).
py::tuple py_shape(const Shape& s);
/// C++ shape of a Python shape (a sequence or an int), reversed.
Shape cpp_shape(const py::handle& shape);
/// Python axis d of a rank-r tensor as a C++ axis (IndexError-typed
/// AxisOutOfBounds when out of range).
std::int64_t cpp_axis(std::int64_t d, std::int64_t r, const char* op);
/// An axis argument (None, int or sequence) as C++ axes; None gives nullopt.
std::optional<Axes> cpp_axes(const py::handle& axis, std::int64_t r, const char* op);

/// A tensor from a Tensor, a NumPy array (shared when its dtype is one of
/// ours), a Python scalar or a nested sequence (copied, NumPy's rules).
EagerTensor as_tensor(const py::handle& h, std::optional<DType> dtype = std::nullopt);
/// The NumPy array's memory as a tensor, without a copy.
EagerTensor from_numpy(const py::array& a);
/// A NumPy array viewing the tensor's memory (the array keeps it alive).
py::array to_numpy(const EagerTensor& t);

/// Whether the tensor takes part in AD (requires grad, or has history).
inline bool tracked(const EagerTensor& t) {
  return t.requires_grad();
}
/// An untracked tensor for a view of the value (no copy).
inline EagerTensor wrap_view(Tensor v) {
  return runtime()->tensor(std::move(v));
}

/// C++ axes 0 and 1 swapped (Python's last two axes): a view when untracked,
/// the recorded transpose otherwise.
EagerTensor swap01(const EagerTensor& x);
/// Python's transpose of every matrix in a batch (x.mT); rank < 2 unchanged.
inline EagerTensor mT(const EagerTensor& x) {
  return x.rank() < 2 ? x : swap01(x);
}
/// x with `n` trailing extent-1 C++ axes appended (leading in Python).
EagerTensor pad_rank(const EagerTensor& x, std::int64_t n);

void init_tensor(py::module_& m);
void init_ops(py::module_& m);
void init_autograd(py::module_& m);
void init_linalg(py::module_& m);
void init_fft(py::module_& m);
void init_einsum(py::module_& m);

}  // namespace tenferro::python

namespace tenferro::python {
/// a op b with NumPy broadcasting; a or b may be a Python scalar or array.
EagerTensor binary_py(BinaryOp op, const py::handle& a, const py::handle& b);
EagerTensor unary_py(UnaryOp op, const py::handle& a);
}  // namespace tenferro::python
