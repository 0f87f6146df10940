#pragma once
// report_as: errors of inner operations reported about the function called.

#include <string>
#include <string_view>

#include "tenferro/core/error.hpp"

namespace tenferro {

/// The name users call an op by, for messages: the families of the library
/// lose their namespace and version ("tenferro.linalg_lu_factor.v1" is
/// "lu_factor", "tenferro.einsum.v1" "einsum"); other names are unchanged.
std::string user_op_name(std::string_view op);

/// Runs `f()`; an Error that an inner operation raises is reported about
/// `op` instead (same kind and phase, the inner error kept as the cause), so
/// a composite's message names what the caller called: "[nansum] axis 2 is
/// out of range ... caused by: [sum] ...". Errors already about `op` pass.
template <class F>
decltype(auto) report_as(std::string_view op, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    if (e.op() == op) throw;
    rethrow_with_context(e, e.phase(), std::string(op), e.message());
  }
}

}  // namespace tenferro
