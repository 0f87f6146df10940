#pragma once
// Operand checks shared by the direct ops of this layer. Not installed.

#include "tenferro/backend/backend.hpp"

namespace tenferro::detail {

/// `x` is defined and readable by `backend` (InvalidArgument /
/// ContextMismatch naming `op` and `what`).
inline void require_operand(const Tensor& x, const Backend& backend, const char* op,
                            const char* what = "input") {
  if (!x.defined()) {
    fail(ErrorKind::InvalidArgument, op, what,
         " is undefined (default-constructed); pass a tensor");
  }
  if (!backend.accepts(x.placement())) {
    fail(ErrorKind::ContextMismatch, op, what, " lives on ", to_string(x.placement()),
         " but the backend works on ", to_string(backend.placement()),
         "; transfer it to the backend first");
  }
}

}  // namespace tenferro::detail
