#pragma once
// Options of grad(), shared by the eager and traced tiers.

namespace tenferro {

/// Options of grad(f, x) (eager) and grad(y, x) (traced).
struct GradOptions {
  /// PyTorch's allow_unused. A gradient with respect to an input the result
  /// does not depend on is InvalidArgument (false, the default, in both
  /// tiers) or zeros of the input's shape and dtype (true). try_grad and
  /// grad_many report "no dependence" as nullopt instead.
  bool allow_unused = false;
};

}  // namespace tenferro
