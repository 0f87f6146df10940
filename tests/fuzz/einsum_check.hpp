#pragma once
// The einsum targets' common part: operands of given shapes with small
// integer values (every contraction order then gives bit-identical f64
// sums), and the checks every parsed equation goes through.

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fuzz_input.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"
#include "tenferro/einsum/einsum.hpp"

namespace tenferro_fuzz {

/// Operands larger than this are not made (see check_einsum).
inline constexpr double kMaxOperandElements = 1 << 14;

/// Extents for the labels of one input: each new label draws 0..3 from the
/// bytes (2 once they ran out) while the product of the extents (zeros counted as 1) stays within
/// a budget that keeps every contraction cheap; later labels get extent 1.
class ExtentBudget {
 public:
  explicit ExtentBudget(double budget) : left_(budget) {}
  std::int64_t draw(FuzzInput& in) {
    std::int64_t e = (in.byte() + 2) % 4;
    if (e > 1 && e > left_) e = 1;
    if (e > 1) left_ /= static_cast<double>(e);
    return e;
  }

 private:
  double left_;
};

inline std::vector<tenferro::Tensor> make_operands(const std::vector<tenferro::Shape>& shapes) {
  std::vector<tenferro::Tensor> ops;
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    std::int64_t n = 1;
    for (std::int64_t e : shapes[k]) n *= e;
    std::vector<double> v(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < v.size(); ++i) {
      v[i] = static_cast<double>(static_cast<std::int64_t>((i * 7 + k * 3) % 5) - 2);
    }
    ops.push_back(tenferro::Tensor::from_col_major(shapes[k], v));
  }
  return ops;
}

inline bool identical(const tenferro::Tensor& a, const tenferro::Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  return a.contiguous().to_vector<double>() == b.contiguous().to_vector<double>();
}

/// Runs `equation` (a string or tenferro::EinsumLabels) on operands of these
/// shapes. A tenferro::Error from the first run is the expected outcome for
/// a bad equation or mismatched shapes; once it runs, a prepared plan with an
/// explicit left-to-right path must give the same values, and so must a run
/// under a memory limit (which may refuse only with InvalidArgument).
template <class Equation>
void check_einsum(const Equation& equation, const std::vector<tenferro::Shape>& shapes,
                  FuzzInput& in) {
  static tenferro::CpuBackend cpu(tenferro::CpuBackendOptions{.num_threads = 1});
  tenferro::EinsumOptions options;
  // Beyond 12 operands Auto anneals for up to 2 s: too slow per input.
  if (shapes.size() > 12) options.strategy = tenferro::EinsumStrategy::Greedy;
  // A label repeated within an operand multiplies its size (the extent
  // budget counts each label once): large operands are only parsed,
  // checked and planned, never filled.
  for (const tenferro::Shape& shape : shapes) {
    double numel = 1;
    for (std::int64_t e : shape) numel *= static_cast<double>(e);
    if (numel > kMaxOperandElements) {
      try {
        (void)tenferro::einsum_path(equation, shapes, options);
      } catch (const tenferro::Error&) {
      }
      return;
    }
  }
  const std::vector<tenferro::Tensor> ops = make_operands(shapes);
  tenferro::Tensor reference;
  try {
    reference = tenferro::einsum(equation, ops, cpu, options);
  } catch (const tenferro::Error&) {
    return;
  }
  tenferro::EinsumOptions ordered;
  ordered.path = tenferro::EinsumPath();
  for (std::size_t k = 1; k < shapes.size(); ++k) ordered.path->emplace_back(0, 1);
  const auto plan = tenferro::EinsumPlan::prepare(equation, tenferro::DType::F64, shapes, ordered);
  if (!identical(plan.run(ops, cpu), reference)) {
    finding("a prepared plan with a left-to-right path gives other values than einsum()");
  }
  if (in.flag()) {
    tenferro::EinsumOptions limited = options;
    limited.memory_limit = 8.0 * static_cast<double>(1 + in.range(0, 15));
    tenferro::Tensor sliced;
    try {
      sliced = tenferro::einsum(equation, ops, cpu, limited);
    } catch (const tenferro::Error& e) {
      if (e.kind() != tenferro::ErrorKind::InvalidArgument) {
        finding(std::string("a memory limit fails with another kind than InvalidArgument: ") +
                e.what());
      }
      return;
    }
    if (!identical(sliced, reference)) finding("a sliced einsum gives other values than einsum()");
  }
}

}  // namespace tenferro_fuzz
