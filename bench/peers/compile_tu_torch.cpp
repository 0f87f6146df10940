// Compile-time probe (case 14): the libtorch counterpart of
// bench/cases/compile_tu_tenferro.cpp: include torch/torch.h and differentiate
// one matmul.
#include <torch/torch.h>

torch::Tensor user_grad_matmul(const torch::Tensor& a, const torch::Tensor& b) {
  auto x = a.detach().requires_grad_(true);
  auto loss = torch::matmul(x, b).sum();
  loss.backward();
  return x.grad();
}
