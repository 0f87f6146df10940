#pragma once
// execute_primitive over pointers to the input tensors (src/ops/
// primitive_execute.cpp), for callers whose inputs are not in one array
// (the eager tier's handles): no copy of each Tensor. Not installed.

#include <span>

#include "tenferro/ops/primitives.hpp"

namespace tenferro::detail {

/// execute_primitive(op, inputs, backend) with no dimension bindings.
Tensor execute_primitive_refs(const PrimitiveOp& op, std::span<const Tensor* const> inputs,
                              Backend& backend);

}  // namespace tenferro::detail
