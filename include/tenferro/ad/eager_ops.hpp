#pragma once
// Every operation on EagerTensor, with AD rules: the templates of
// tenferro/ad/ops.hpp, written once for the eager and the traced tier.
// Semantics (dtypes, broadcasting, errors) are those of the direct ops in
// tenferro/backend/*.hpp; the eager forms run on the tensors' own runtime and
// record when an input is tracked.

#include "tenferro/ad/eager.hpp"
#include "tenferro/ad/ops.hpp"
#include "tenferro/backend/contract.hpp"
#include "tenferro/backend/elementwise.hpp"
#include "tenferro/backend/reduce.hpp"
