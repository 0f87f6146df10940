#pragma once
// A public gradient checker for any function of eager tensors (extension ops
// included), real or complex: finite differences against jvp, and adjoint
// consistency between jvp and vjp, Re<c, J t> == Re<J^T c, t>.

#include <string>

#include "tenferro/ad/eager.hpp"
#include "tenferro/core/list_ref.hpp"

namespace tenferro {

struct GradCheckOptions {
  double eps = 1e-6;  // finite-difference step along the tangent
  double atol = 1e-6;
  double rtol = 1e-4;
  int probes = 2;  // random (tangent, cotangent) pairs
  std::uint64_t seed = 1234;
};

struct GradCheckResult {
  bool ok = true;
  double max_fd_error = 0;       // |J t - finite difference|, relative where large
  double max_adjoint_error = 0;  // |Re<c, J t> - Re<J^T c, t>|, relative
  std::string detail;            // what failed, for test messages
};

/// Checks f at `inputs` (floating/complex inputs get random directions).
GradCheckResult check_gradients(const EagerFnN& f, ListRef<EagerTensor> inputs,
                                GradCheckOptions options = {});

}  // namespace tenferro
