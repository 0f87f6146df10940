#pragma once
// Argument checks shared by the composite operators (composite_*.cpp).

#include "tenferro/core/error.hpp"

namespace tenferro::detail {

template <class T>
void require_defined(const T& x, const char* op, const char* which = "input") {
  if (!x.defined()) fail(ErrorKind::InvalidArgument, op, which, " is undefined; pass a tensor");
}

}  // namespace tenferro::detail
