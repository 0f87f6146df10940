#include "tenferro/core/dtype.hpp"

namespace tenferro {

std::string_view name(DType t) {
  switch (t) {
    case DType::Bool:
      return "bool";
    case DType::I32:
      return "i32";
    case DType::I64:
      return "i64";
    case DType::F32:
      return "f32";
    case DType::F64:
      return "f64";
    case DType::C64:
      return "c64";
    case DType::C128:
      return "c128";
  }
  return "?";
}

namespace {
// Rank of the category (bool < int < float < complex) and precision inside it.
int category(DType t) {
  if (t == DType::Bool) return 0;
  if (is_integral(t)) return 1;
  if (is_floating(t)) return 2;
  return 3;
}
// Float precision in bits of an inexact type (0 for bool and integers).
int float_bits(DType t) {
  switch (t) {
    case DType::F32:
    case DType::C64:
      return 32;
    case DType::F64:
    case DType::C128:
      return 64;
    default:
      return 0;
  }
}
}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  const int ca = category(a), cb = category(b);
  const int c = ca > cb ? ca : cb;
  if (c == 0) return DType::Bool;
  if (c == 1) return (a == DType::I64 || b == DType::I64) ? DType::I64 : DType::I32;
  const int bits = float_bits(a) > float_bits(b) ? float_bits(a) : float_bits(b);
  if (c == 2) return bits == 64 ? DType::F64 : DType::F32;
  return bits == 64 ? DType::C128 : DType::C64;
}

DType scalar_operand_dtype(DType tensor, DType scalar) {
  if (is_inexact(tensor)) return is_complex(scalar) ? complex_dtype(tensor) : tensor;
  if (is_integral(tensor) && (is_integral(scalar) || scalar == DType::Bool)) return tensor;
  return scalar;
}

bool is_lossless_conversion(DType from, DType to) {
  if (from == to || from == DType::Bool) return true;
  switch (from) {
    case DType::I32:
      return to == DType::I64 || to == DType::F64 || to == DType::C128;
    case DType::I64:
      return false;  // no float holds every i64
    case DType::F32:
      return to == DType::F64 || to == DType::C64 || to == DType::C128;
    case DType::F64:
      return to == DType::C128;
    case DType::C64:
      return to == DType::C128;
    default:
      return false;
  }
}

}  // namespace tenferro
