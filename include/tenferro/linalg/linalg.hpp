#pragma once
// tenferro::linalg: dense linear algebra on LAPACK with AD (docs/linalg.md).
//
// Every function exists in three tiers with one meaning:
//   EagerTensor  L = linalg::cholesky(a_eager);       // runs now, records for AD
//   TracedTensor L = linalg::cholesky(a_traced);      // builds a graph node
//   Tensor       L = linalg::cholesky(a, false, cpu); // direct, on a backend
// Matrices are column-major with batch axes last: [m, n, batch...]. The
// family installs itself (module and AD rules) on a runtime's first call;
// nothing to set up. Semantics follow torch.linalg; docs/linalg.md lists
// every difference.

#include "tenferro/linalg/composite.hpp"
#include "tenferro/linalg/factor.hpp"
#include "tenferro/linalg/gauge.hpp"
#include "tenferro/linalg/spectral.hpp"
#include "tenferro/linalg/triangular.hpp"
#include "tenferro/linalg/truncated.hpp"
