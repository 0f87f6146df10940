#pragma once
// The semirings a contraction can run over (docs/tropical.md). A semiring
// replaces the sum of a product by its own "addition" (what reduces over a
// contracted label) and "multiplication" (what combines the operands' entries).

namespace tenferro {

enum class Semiring {
  /// Ordinary arithmetic: add = +, mul = *, zero = 0, one = 1.
  Standard,
  /// Tropical max-plus: add = max, mul = +, zero = -inf (i64: INT64_MIN),
  /// one = 0. Over f32, f64 and i64.
  MaxPlus,
  /// Tropical min-plus: add = min, mul = +, zero = +inf (i64: INT64_MAX),
  /// one = 0. Over f32, f64 and i64.
  MinPlus,
  /// Boolean: add = or, mul = and, zero = false, one = true. Over bool.
  OrAnd,
};

/// Lowercase name: "standard", "max_plus", "min_plus", "or_and".
constexpr const char* name(Semiring s) {
  switch (s) {
    case Semiring::Standard:
      return "standard";
    case Semiring::MaxPlus:
      return "max_plus";
    case Semiring::MinPlus:
      return "min_plus";
    case Semiring::OrAnd:
      return "or_and";
  }
  return "unknown";
}

}  // namespace tenferro
