// (the spectral part of the linalg family)

#include "tenferro/linalg/spectral.hpp"

#include "linalg/common.hpp"

namespace tenferro::linalg::detail {

void register_spectral(Registry&) {}

}  // namespace tenferro::linalg::detail
