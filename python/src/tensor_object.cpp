// The result objects of the operators' fast path: tenferro.Tensor objects
// that hold their tensor handle inside the Python object.

#include <cstring>
#include <memory>
#include <new>

#include "bind.hpp"

namespace tenferro::python {

// pybind11 makes a result object in three allocations and two hash-table
// updates: the Python object, a heap copy of the tensor handle, and entries
// in its type and instance registries (looked up again, and removed, when the
// object dies): about 1,800 instructions of a 4-element add, more than the
// add itself. The fast path's objects (tensor_to_py) hold the handle inside
// the Python object instead, after pybind11's instance header, as a
// non-owning view (owned and holder_constructed unset) whose value pointer
// points into the object itself; tenferro.Tensor's tp_dealloc destroys such
// a handle, then frees the object as pybind11 does. pybind11 sees an
// ordinary instance of simple layout: casts to EagerTensor& read the value
// pointer, and objects made by pybind11 itself are untouched. They are not
// in pybind11's instance registry, which only serves to find the existing
// Python object of a C++ pointer that a binding returns by reference (none
// returns a result object's tensor so; requires_grad_ returns self).

namespace {

struct InlineLayout {
  PyTypeObject* type = nullptr;  // tenferro.Tensor, when its layout allows it
  destructor base_dealloc = nullptr;
};
InlineLayout g_inline;

constexpr std::size_t kInlineOffset = (sizeof(py::detail::instance) + alignof(EagerTensor) - 1) /
                                      alignof(EagerTensor) * alignof(EagerTensor);

EagerTensor* inline_slot(PyObject* self) {
  return reinterpret_cast<EagerTensor*>(reinterpret_cast<char*>(self) + kInlineOffset);
}

extern "C" void tensor_dealloc(PyObject* self) {
  auto* inst = reinterpret_cast<py::detail::instance*>(self);
  if (inst->simple_layout && inst->simple_value_holder[0] == inline_slot(self)) {
    if (PyErr_Occurred() == nullptr) {
      std::destroy_at(inline_slot(self));
    } else {
      // As pybind11's dealloc: a pending Python error must not be seen by
      // what the release runs (a NumPy array's deleter).
      py::error_scope scope;
      std::destroy_at(inline_slot(self));
    }
    inst->simple_value_holder[0] = nullptr;
    if (inst->weakrefs == nullptr && !inst->has_patients) {
      PyTypeObject* type = Py_TYPE(self);
      type->tp_free(self);
      Py_DECREF(type);
      return;
    }
  }
  g_inline.base_dealloc(self);
}

}  // namespace

// Installs tensor_dealloc when tenferro.Tensor's objects are what the fast
// path assumes (pybind11's simple layout, no GC, no instance dict, freed by
// PyObject_Free); otherwise tensor_to_py takes pybind11's generic path.
void init_tensor_objects(const py::handle& cls) {
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  const py::detail::type_info* ti = tensor_type_info();
  const bool fits = ti != nullptr && ti->type == type &&
                    ti->holder_size_in_ptrs <= py::detail::instance_simple_holder_in_ptrs() &&
                    py::detail::all_type_info(type).size() == 1 &&
                    !PyType_HasFeature(type, Py_TPFLAGS_HAVE_GC) && type->tp_dictoffset == 0 &&
                    type->tp_itemsize == 0 &&
                    type->tp_basicsize == static_cast<Py_ssize_t>(sizeof(py::detail::instance)) &&
                    type->tp_free == PyObject_Free && type->tp_dealloc != nullptr;
  if (!fits) return;
  g_inline.base_dealloc = type->tp_dealloc;
  type->tp_dealloc = &tensor_dealloc;
  PyType_Modified(type);
  g_inline.type = type;
}

py::object tensor_to_py(EagerTensor&& t) {
  PyTypeObject* type = g_inline.type;
  if (type == nullptr) {
    return py::reinterpret_steal<py::object>(py::detail::type_caster_generic::cast(
        &t, py::return_value_policy::move, py::handle(), tensor_type_info(), nullptr,
        [](const void* p) -> void* {
          return new EagerTensor(
              std::move(*const_cast<EagerTensor*>(static_cast<const EagerTensor*>(p))));
        }));
  }
  void* mem = PyObject_Malloc(kInlineOffset + sizeof(EagerTensor));
  if (mem == nullptr) throw std::bad_alloc();
  std::memset(mem, 0, kInlineOffset);
  PyObject* self = PyObject_Init(static_cast<PyObject*>(mem), type);  // a reference to type
  auto* inst = reinterpret_cast<py::detail::instance*>(self);
  inst->simple_layout = true;
  inst->owned = false;  // freed by tensor_dealloc, not by pybind11
  inst->simple_holder_constructed = false;
  inst->simple_instance_registered = false;
  inst->has_patients = false;
  inst->simple_value_holder[0] = new (inline_slot(self)) EagerTensor(std::move(t));
  return py::reinterpret_steal<py::object>(self);
}

}  // namespace tenferro::python
