// (the factor part of the linalg family)

#include "tenferro/linalg/factor.hpp"

#include "linalg/common.hpp"

namespace tenferro::linalg::detail {

void register_factor(Registry&) {}

}  // namespace tenferro::linalg::detail
