// tenferro.load_library(path): families compiled in C++ as a loadable family
// library (tenferro/runtime/family_library.hpp), called from Python.

#include <dlfcn.h>

#include <tenferro/runtime/family_library.hpp>

#include "bind.hpp"

namespace tenferro::python {

namespace {

struct LoadedEntry {
  FamilyEntry entry;
};

struct LoadedLibrary {
  std::string path;
  std::vector<std::string> names;
};

FamilyParams params_of(const py::kwargs& kwargs, const std::string& name) {
  FamilyParams p;
  if (!kwargs) return p;
  for (auto [k, v] : kwargs) {
    if (!py::isinstance<py::float_>(v) && !py::isinstance<py::int_>(v)) {
      throw Error(ErrorKind::InvalidArgument, name,
                  "parameter '" + std::string(py::str(k)) + "' must be a number");
    }
    p[py::str(k)] = v.cast<double>();
  }
  return p;
}

/// The process's copy of tenferro (this module) made visible to libraries
/// loaded later, which link against it instead of carrying their own.
void export_own_symbols() {
  static const bool done = [] {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&export_own_symbols), &info) == 0 || !info.dli_fname) {
      throw Error(ErrorKind::Internal, "load_library", "cannot locate the tenferro module itself");
    }
    if (dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL) == nullptr) {
      throw Error(ErrorKind::Internal, "load_library",
                  std::string("cannot export the tenferro module's symbols: ") + dlerror());
    }
    return true;
  }();
  (void)done;
}

}  // namespace

void init_library(py::module_& m) {
  py::class_<LoadedEntry>(m, "CompiledFamily",
                          "A family of a compiled family library (tenferro.load_library).")
      .def(
          "__call__",
          [](const LoadedEntry& e, const py::args& args, const py::kwargs& kwargs) {
            ExtensionOpPtr op = e.entry.make_op(params_of(kwargs, e.entry.name));
            if (!op) {
              throw Error(ErrorKind::ExtensionContract, e.entry.name, "the library built no op");
            }
            return apply_extension(op, e.entry.module, args);
          },
          "Applies the family to tensors (C++ axis conventions: see docs/python.md); keyword "
          "arguments are its numeric parameters.")
      .def_property_readonly("name", [](const LoadedEntry& e) { return e.entry.name; })
      .def_property_readonly("__doc__", [](const LoadedEntry& e) { return e.entry.doc; })
      .def("__repr__",
           [](const LoadedEntry& e) { return "CompiledFamily('" + e.entry.name + "')"; });

  m.def(
      "_load_library",
      [](const std::string& path) {
        export_own_symbols();
        void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle == nullptr) {
          throw Error(ErrorKind::InvalidArgument, "load_library",
                      "cannot load '" + path + "': " + dlerror());
        }
        // Never unloaded: ops, modules and rules made by its code live on in
        // runtimes and caches.
        auto* abi = reinterpret_cast<int (*)()>(dlsym(handle, "tenferro_family_library_abi"));
        auto* describe =
            reinterpret_cast<void (*)(FamilyLibrary&)>(dlsym(handle, "tenferro_family_library"));
        if (abi == nullptr || describe == nullptr) {
          throw Error(ErrorKind::InvalidArgument, "load_library",
                      "'" + path +
                          "' is not a family library (no TENFERRO_FAMILY_LIBRARY entry "
                          "points; see tenferro/runtime/family_library.hpp)");
        }
        if (abi() != kFamilyLibraryAbi) {
          throw Error(ErrorKind::InvalidArgument, "load_library",
                      "'" + path + "' was built for family-library ABI " + std::to_string(abi()) +
                          ", this tenferro has " + std::to_string(kFamilyLibraryAbi) +
                          "; rebuild it");
        }
        FamilyLibrary lib;
        describe(lib);
        py::dict out;
        for (auto& e : lib.entries) {
          if (!e.make_op || !e.module) {
            throw Error(ErrorKind::ExtensionContract, "load_library",
                        "entry '" + e.name + "' of '" + path + "' has no op factory or no module");
          }
          std::string name = e.name;
          out[py::str(name)] = LoadedEntry{std::move(e)};
        }
        return out;
      },
      py::arg("path"));
}

}  // namespace tenferro::python
