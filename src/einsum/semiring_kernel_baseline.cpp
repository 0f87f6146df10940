// The semiring GEMM's kernels for the baseline instruction set (SSE2 on x86-64: 16-byte vectors)
// (semiring_kernel.inc; the driver picks them in semiring_gemm.cpp).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "einsum/semiring_kernel.hpp"

namespace tenferro::einsum_detail::semiring::baseline {

constexpr int kBytes = 16;

#include "einsum/semiring_kernel.inc"

#define TENFERRO_INSTANTIATE(R, M) \
  template void columns<R, M>(const Job&, std::int64_t, std::int64_t);
TENFERRO_SEMIRING_KERNELS(TENFERRO_INSTANTIATE)
#undef TENFERRO_INSTANTIATE

}  // namespace tenferro::einsum_detail::semiring::baseline
