#pragma once
// Symbolic dimensions: a dimension is a constant or an expression over named
// sizes (+, -, *, floordiv, min, max). Shape inference keeps expressions; a
// later binding of the names resolves them.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tenferro/core/small_vector.hpp"

namespace tenferro {

/// Values for named sizes, e.g. {{"n", 128}, {"chi", 32}}.
using DimBindings = std::map<std::string, std::int64_t, std::less<>>;

class SymDim {
 public:
  enum class Kind : unsigned char { Const, Var, Add, Sub, Mul, FloorDiv, Min, Max };

  SymDim() = default;                            // the constant 0
  SymDim(std::int64_t value) : value_(value) {}  // NOLINT: constants convert implicitly
  SymDim(int value) : value_(value) {}           // NOLINT
  /// A named size; the name must be non-empty (InvalidArgument otherwise).
  static SymDim var(std::string name);

  Kind kind() const;
  bool is_constant() const { return node_ == nullptr; }
  /// The value of a constant (InvalidArgument for an expression).
  std::int64_t constant() const;
  std::optional<std::int64_t> try_constant() const {
    return is_constant() ? std::optional<std::int64_t>(value_) : std::nullopt;
  }
  /// Resolves the expression. An unbound name is InvalidArgument naming it;
  /// floordiv by zero is InvalidArgument.
  std::int64_t evaluate(const DimBindings& bindings) const;
  /// Names used by the expression, sorted, without duplicates.
  std::vector<std::string> free_names() const;
  std::string to_string() const;
  std::size_t hash() const;
  /// Structural equality (after constant folding).
  friend bool operator==(const SymDim& a, const SymDim& b);

  friend SymDim operator+(const SymDim& a, const SymDim& b);
  friend SymDim operator-(const SymDim& a, const SymDim& b);
  friend SymDim operator*(const SymDim& a, const SymDim& b);
  friend SymDim floordiv(const SymDim& a, const SymDim& b);
  friend SymDim min(const SymDim& a, const SymDim& b);
  friend SymDim max(const SymDim& a, const SymDim& b);

 private:
  struct Node;
  static SymDim make(Kind kind, const SymDim& a, const SymDim& b);
  std::int64_t value_ = 0;
  std::shared_ptr<const Node> node_;
};

using SymShape = std::vector<SymDim>;

SymShape to_sym_shape(std::span<const std::int64_t> shape);
/// The concrete shape when every extent is constant.
std::optional<Shape> try_concrete(const SymShape& shape);
Shape evaluate(const SymShape& shape, const DimBindings& bindings);
std::string to_string(const SymShape& shape);
/// Product of extents (symbolic).
SymDim numel(const SymShape& shape);

}  // namespace tenferro
