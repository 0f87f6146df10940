// The semiring GEMM's kernels for AVX2 (32-byte vectors)
// (semiring_kernel.inc; the driver picks them in semiring_gemm.cpp).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "einsum/semiring_kernel.hpp"

#if TENFERRO_SEMIRING_X86
#pragma GCC target("avx2")

namespace tenferro::einsum_detail::semiring::avx2 {

constexpr int kBytes = 32;

#include "einsum/semiring_kernel.inc"

#define TENFERRO_INSTANTIATE(R, M) \
  template void columns<R, M>(const Job&, std::int64_t, std::int64_t);
TENFERRO_SEMIRING_KERNELS(TENFERRO_INSTANTIATE)
#undef TENFERRO_INSTANTIATE

}  // namespace tenferro::einsum_detail::semiring::avx2
#endif  // TENFERRO_SEMIRING_X86
