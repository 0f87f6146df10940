#pragma once
// Tracing the functions of ops with bodies (checkpoint, cond, while_loop,
// scan, fixed_point) into sub-programs that hold no tensor data.

#include <functional>
#include <span>
#include <vector>

#include "tenferro/ad/program.hpp"

namespace tenferro::detail {

/// A traced function as a body: `program` takes the function's parameters,
/// then one input per value the function captured from outside (values that
/// depend on no parameter, constants included), listed in `captured`; the
/// node calling the body passes them after its own operands.
struct TracedBody {
  Program program;
  std::vector<TracedTensor> captured;
};

/// The body computing `outs` from the placeholders `params` (fills that
/// depend on nothing stay inside the body; other outside values are lifted).
TracedBody lift_body(std::span<const TracedTensor> params, std::span<const TracedTensor> outs);

/// Traces `fn` on fresh placeholders with the metadata `metas` and lifts it.
/// An empty function or an undefined result is InvalidArgument naming `op`.
TracedBody trace_body(
    std::span<const TensorMeta> metas,
    const std::function<std::vector<TracedTensor>(std::span<const TracedTensor>)>& fn,
    const char* op);

/// The metadata of each value.
std::vector<TensorMeta> metas_of(std::span<const TracedTensor> values);

}  // namespace tenferro::detail
