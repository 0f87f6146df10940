#pragma once
// The direct tier of functions composed of other operations (a family's
// norms, truncations, FFT shifts): the composition runs on the untracked
// eager runtime attached to the caller's backend (EagerRuntime::attached), so
// installed modules and plan caches persist across direct calls. Any backend:
// an operation whose kernel the backend lacks raises Unsupported naming it.

#include "tenferro/ad/eager.hpp"
#include "tenferro/core/report_as.hpp"

namespace tenferro::detail {

/// Runs `f(EagerRuntime&)` on the eager runtime attached to `backend`; errors
/// of the inner operations are reported about `op`, the function called.
template <class F>
auto on_backend(Backend& backend, const char* op, F&& f) {
  EagerRuntime& rt = *EagerRuntime::attached(backend);
  return report_as(op, [&] { return f(rt); });
}

}  // namespace tenferro::detail
