#pragma once
// A checked fused pass run without its per-call checks (src/backend/
// fused.cpp), for a caller that already guarantees them: the traced tier's
// prepared programs of static shapes, whose fused groups read inputs the run
// validated against the prepared signature and intermediates of the shapes
// inference gave. Not installed.

#include <cstdint>
#include <span>

#include "tenferro/backend/fused.hpp"

namespace tenferro::detail {

/// CheckedFusedPass::run(externals, shape, backend, block) without checking
/// what run() checks per call: the externals' count, dtypes, shapes and
/// placement, and `block`. The caller guarantees all of them.
Tensor run_fused_prevalidated(const CheckedFusedPass& pass, std::span<const Tensor> externals,
                              std::span<const std::int64_t> shape, Backend& backend,
                              std::int64_t block);

}  // namespace tenferro::detail
