#pragma once
// A family library for dynamic loading: named entry points that build an
// extension op from named parameters, each with the module that runs it (and
// carries its AD rules, ad::with_rules). The Python package loads such a
// shared library with tenferro.load_library(path) and exposes every entry as
// a function; see docs/python.md, "Compiled families".
//
//   void describe(tenferro::FamilyLibrary& lib) {
//     lib.add({"scale_by", "y = k x",
//              [](const tenferro::FamilyParams& p) { return std::make_shared<ScaleBy>(p.at("k"));
//              }, make_module()});
//   }
//   TENFERRO_FAMILY_LIBRARY(describe)
//
// The library is built against tenferro's headers without linking its
// libraries (a shared MODULE library): the loader resolves tenferro's symbols
// to the copy already in the process, so ops, tensors and rules are shared.
// The entries receive tensors in the C++ tier's conventions (column-major
// shapes); Python hands over its tensors with their axes reversed (the same
// memory), so a family written for [m, k] x [k, n] sees a Python (m, k)
// operand as [k, m].

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tenferro/ops/extension_op.hpp"
#include "tenferro/runtime/module.hpp"

namespace tenferro {

/// Named scalar parameters of a call (Python keyword arguments).
using FamilyParams = std::map<std::string, double, std::less<>>;

struct FamilyEntry {
  /// The function name the loader exposes ("softsquare").
  std::string name;
  /// One line for help().
  std::string doc;
  /// Builds the op of one call; unknown or missing parameters should raise
  /// InvalidArgument naming them.
  std::function<ExtensionOpPtr(const FamilyParams&)> make_op;
  /// The module that registers the family's engine (and carries its rules).
  ExtensionModulePtr module;
};

struct FamilyLibrary {
  std::vector<FamilyEntry> entries;
  FamilyLibrary& add(FamilyEntry entry) {
    entries.push_back(std::move(entry));
    return *this;
  }
};

/// Bumped when FamilyLibrary or FamilyEntry change layout; the loader refuses
/// a library built against another version.
inline constexpr int kFamilyLibraryAbi = 1;

}  // namespace tenferro

/// Defines the entry points a loader looks for; `describe` fills the library.
#define TENFERRO_FAMILY_LIBRARY(describe)                                               \
  extern "C" __attribute__((visibility("default"))) int tenferro_family_library_abi() { \
    return tenferro::kFamilyLibraryAbi;                                                 \
  }                                                                                     \
  extern "C" __attribute__((visibility("default"))) void tenferro_family_library(       \
      tenferro::FamilyLibrary& library) {                                               \
    describe(library);                                                                  \
  }
