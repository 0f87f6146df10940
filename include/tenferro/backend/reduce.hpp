#pragma once
// The reductions' vocabulary: ReduceOp, its descriptors and dtype rules,
// shared by the kernels, the primitives and the operation surface
// (tenferro/ad/ops.hpp: sum(x, axes, backend), sum(x, axes), ...). There
// `axes` may hold negative axes; duplicates are a DuplicateAxis error. An
// empty axis list reduces nothing (the result equals the input, dtype rules
// applied); the overloads without axes reduce every axis. With keepdim the
// reduced axes stay with extent 1.
//
// Dtypes: sum and prod of bool/i32 give i64; mean, var, std and logsumexp of
// bool/integers give f64; var/std of complex give the real dtype; max/min, logsumexp and
// argmax/argmin reject complex; all/any give bool; argmax/argmin give i64.

#include <iterator>
#include <span>
#include <string_view>

#include "tenferro/backend/backend.hpp"

namespace tenferro {

enum class ReduceOp : unsigned char { Sum, Prod, Mean, Max, Min, All, Any, LogSumExp };

/// How a reduction's result dtype follows from the input's.
enum class ReduceResult : unsigned char {
  Accumulate,  // bool and integers accumulate in i64, others keep their dtype
  Inexact,     // bool and integers give f64, others keep their dtype
  Same,        // the input dtype
  Bool,        // bool (each element's truth value)
};

/// One reduction's facts; every dtype rule, name and identity check reads them.
struct ReduceDescriptor {
  std::string_view name;
  ReduceResult result;
  /// Empty when complex input is accepted, else the advice the DTypeMismatch gives.
  std::string_view complex_advice;
  /// Without an identity an empty reduction is InvalidArgument.
  bool has_identity;
};

/// Indexed by ReduceOp.
inline constexpr ReduceDescriptor kReduceOps[] = {
    {"sum", ReduceResult::Accumulate, "", true},
    {"prod", ReduceResult::Accumulate, "", true},
    {"mean", ReduceResult::Inexact, "", true},
    {"max", ReduceResult::Same, "complex numbers are not ordered; reduce abs() or real()", false},
    {"min", ReduceResult::Same, "complex numbers are not ordered; reduce abs() or real()", false},
    {"all", ReduceResult::Bool, "", true},
    {"any", ReduceResult::Bool, "", true},
    {"logsumexp", ReduceResult::Inexact,
     "logsumexp is defined for real input; pass real() or abs()", true},
};
static_assert(std::size(kReduceOps) == static_cast<std::size_t>(ReduceOp::LogSumExp) + 1);

constexpr const ReduceDescriptor& descriptor(ReduceOp op) {
  return kReduceOps[static_cast<std::size_t>(op)];
}
std::string_view name(ReduceOp op);
/// The result dtype of `op` on x (DTypeMismatch naming the op when refused);
/// the kernels compute in it too.
DType reduce_result_dtype(ReduceOp op, DType x);
/// var and std: the real dtype of x's floating dtype (bool and integers give f64).
DType variance_result_dtype(DType x);

}  // namespace tenferro
