// The two custom families as a loadable family library
// (tenferro/runtime/family_library.hpp): Python loads it with
// tenferro.load_library(path) and calls lib.softsquare(x) and
// lib.maxplus_matmul(a, b). Build it as a shared MODULE library against
// tenferro's headers without linking tenferro's libraries (python/CMakeLists.txt
// does, as custom_families_library).

#include "tenferro/runtime/family_library.hpp"
#include "custom_families.hpp"

namespace {

void check_no_params(const tenferro::FamilyParams& p, const char* family) {
  if (!p.empty()) {
    tenferro::fail(tenferro::ErrorKind::InvalidArgument, family, "takes no parameters, got '",
                   p.begin()->first, "'");
  }
}

void describe(tenferro::FamilyLibrary& lib) {
  lib.add({"softsquare", "y = log(1 + x^2), elementwise (custom.softsquare.v1)",
           [](const tenferro::FamilyParams& p) -> tenferro::ExtensionOpPtr {
             check_no_params(p, "custom.softsquare.v1");
             return std::make_shared<const custom::SoftSquare>();
           },
           custom::make_module()});
  lib.add({"maxplus_matmul",
           "C[i, j] = max_k A[i, k] + B[k, j] on column-major [m, k] x [k, n] "
           "(custom.maxplus_matmul.v1)",
           [](const tenferro::FamilyParams& p) -> tenferro::ExtensionOpPtr {
             check_no_params(p, "custom.maxplus_matmul.v1");
             return std::make_shared<const custom::MaxPlusMatmul>();
           },
           custom::make_module()});
}

}  // namespace

TENFERRO_FAMILY_LIBRARY(describe)
