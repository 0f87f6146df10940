// Compile-time probe (case 14): the libtorch counterpart of
// bench/cases/compile_tu_tenferro.cpp: include torch/torch.h, one matmul.
#include <torch/torch.h>

torch::Tensor user_matmul(const torch::Tensor& a, const torch::Tensor& b) {
  return torch::matmul(a, b);
}
