// Compile-time probe (case 14): a user translation unit that includes the
// umbrella header and does one matmul. The driver times `g++ -std=c++20 -O2 -c`
// of this file against bench/peers/compile_tu_torch.cpp.
#include "tenferro/tenferro.hpp"

tenferro::Tensor user_matmul(const tenferro::Tensor& a, const tenferro::Tensor& b) {
  tenferro::CpuBackend cpu;
  return tenferro::matmul(a, b, cpu);
}
