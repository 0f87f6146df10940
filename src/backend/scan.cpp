#include "tenferro/backend/scan.hpp"

namespace tenferro {

DType cumulative_result_dtype(DType dtype) {
  return is_integral(dtype) || dtype == DType::Bool ? DType::I64 : dtype;
}

}  // namespace tenferro
