// Compile-time probe (case 14): a user translation unit that includes the
// umbrella header (which has the eager AD tier) and differentiates one matmul. The
// driver times `g++ -std=c++20 -O2 -c` of this file against
// bench/peers/compile_tu_torch.cpp.
#include "tenferro/tenferro.hpp"

tenferro::Tensor user_grad_matmul(const tenferro::Tensor& a, const tenferro::Tensor& b) {
  auto rt = tenferro::EagerRuntime::make_cpu();
  auto x = rt->variable(a);
  auto loss = tenferro::sum(tenferro::matmul(x, rt->tensor(b)));
  loss.backward();
  return x.grad().value();
}
