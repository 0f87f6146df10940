#pragma once
// Symbolic dimensions: a dimension is a constant or an expression over named
// sizes (+, -, *, floordiv, min, max). Shape inference keeps expressions; a
// later binding of the names resolves them.
//
// A named size binds from the program's inputs. A dynamic size is a
// data-dependent extent (the rank a truncated SVD keeps): an extension op
// declares it in an output shape with an upper bound, and the executor binds
// it from that op's actual output while the program runs.

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
  enum class Kind : unsigned char { Const, Var, Add, Sub, Mul, FloorDiv, Min, Max, Dynamic };

  SymDim() = default;                            // the constant 0
  SymDim(std::int64_t value) : value_(value) {}  // NOLINT: constants convert implicitly
  SymDim(int value) : value_(value) {}           // NOLINT
  /// A named size; the name must be non-empty (InvalidArgument otherwise).
  static SymDim var(std::string name);
  /// A data-dependent size: fixed when the op whose output declares it runs,
  /// at most `upper_bound` (an expression over named sizes or earlier dynamic
  /// sizes; InvalidArgument when it is a negative constant). The name must
  /// be non-empty and unique within a program: two ops that declare the same
  /// dynamic size must produce equal extents (ShapeMismatch otherwise).
  static SymDim dynamic(std::string name, SymDim upper_bound);

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
  /// Names used by the expression (named and dynamic sizes), sorted, without
  /// duplicates.
  std::vector<std::string> free_names() const;
  /// A dynamic size itself (not an expression over one).
  bool is_dynamic() const { return kind() == Kind::Dynamic; }
  /// Whether the expression uses a dynamic size.
  bool depends_on_dynamic() const;
  /// The name of a named or dynamic size (InvalidArgument otherwise).
  const std::string& name() const;
  /// The upper bound of a dynamic size (InvalidArgument otherwise).
  const SymDim& upper_bound() const;
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
/// Whether any extent uses a dynamic size.
bool depends_on_dynamic(const SymShape& shape);
/// Product of extents (symbolic).
SymDim numel(const SymShape& shape);

}  // namespace tenferro
