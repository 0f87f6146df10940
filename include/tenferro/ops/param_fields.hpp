#pragma once
// The parameters of a primitive kind, listed once. Each parameter struct of
// ops/primitive_kinds.hpp has a `static constexpr auto fields()` returning
// field::list(...) of Field entries (a name, what kind of value it is, and
// the member that holds it);
// equality, hashing, describe()'s text, the catalog's parameter list and
// construction by name are all derived from that one list.

#include <cstdint>
#include <string_view>
#include <type_traits>

namespace tenferro::prim {

/// What a parameter holds, as the catalog reports it (bindings and the oracle
/// replay convert their arguments by it: an Axis is converted like an axis).
enum class FieldKind : unsigned char {
  Int,             // std::int64_t: an offset, an order, a count of elements
  Axis,            // std::int64_t naming an axis (negative counts from the end)
  Axes,            // Axes
  Ints,            // Shape: extents, offsets or strides, one per axis
  SymShape,        // SymShape: extents that may be symbolic
  Flag,            // bool
  Real,            // double
  Scalar,          // Scalar
  OptionalScalar,  // std::optional<Scalar>
  DType,           // DType
  Tensor,          // a Tensor, compared by identity (storage and view)
  Count,           // std::size_t: a number of operands
  UnaryOp,         // the elementwise op of a unary kind
  BinaryOp,        // the elementwise op of a binary kind
  ReduceOp,        // the reduction of a reduce or cumulative kind
};

std::string_view name(FieldKind kind);

/// A parameter a caller sets, or one that selects which named primitive of
/// its struct an op is (a reduction's op, var or std): the catalog lists the
/// latter as separate entries, and describe() leaves it out of the text.
enum class FieldRole : unsigned char { Param, Kind };

/// One parameter: `get` reaches it in the parameters (a member pointer, or a
/// callable for a nested member).
template <class Get>
struct Field {
  std::string_view name;
  FieldKind kind;
  FieldRole role;
  Get get;
};

namespace field {
template <class G>
constexpr Field<G> param(std::string_view name, FieldKind kind, G get) {
  return {name, kind, FieldRole::Param, get};
}
template <class G>
constexpr Field<G> selects_kind(std::string_view name, FieldKind kind, G get) {
  return {name, kind, FieldRole::Kind, get};
}
// Shorthands for the common kinds.
template <class G>
constexpr auto integer(std::string_view n, G g) {
  return param(n, FieldKind::Int, g);
}
template <class G>
constexpr auto axis(std::string_view n, G g) {
  return param(n, FieldKind::Axis, g);
}
template <class G>
constexpr auto axes(std::string_view n, G g) {
  return param(n, FieldKind::Axes, g);
}
template <class G>
constexpr auto ints(std::string_view n, G g) {
  return param(n, FieldKind::Ints, g);
}
template <class G>
constexpr auto sym_shape(std::string_view n, G g) {
  return param(n, FieldKind::SymShape, g);
}
template <class G>
constexpr auto flag(std::string_view n, G g) {
  return param(n, FieldKind::Flag, g);
}
template <class G>
constexpr auto real(std::string_view n, G g) {
  return param(n, FieldKind::Real, g);
}
template <class G>
constexpr auto scalar(std::string_view n, G g) {
  return param(n, FieldKind::Scalar, g);
}
template <class G>
constexpr auto optional_scalar(std::string_view n, G g) {
  return param(n, FieldKind::OptionalScalar, g);
}
template <class G>
constexpr auto dtype(std::string_view n, G g) {
  return param(n, FieldKind::DType, g);
}

/// The fields of a struct, in order: a callable that calls its argument with
/// each field (a closure rather than a std::tuple: user code that includes
/// the catalog compiles no tuple machinery for its 28 lists).
template <class... Fs>
constexpr auto list(Fs... fs) {
  return [fs...](auto&& f) { (f(fs), ...); };
}
}  // namespace field

/// Calls f(field) for every field of P, in order.
template <class P, class F>
constexpr void for_each_field(F&& f) {
  P::fields()(f);
}

/// The value of `f` in `p`.
template <class P, class Get>
constexpr auto& value_of(const Field<Get>& f, P& p) {
  if constexpr (std::is_member_object_pointer_v<Get>) {
    return p.*(f.get);
  } else {
    return f.get(p);
  }
}

}  // namespace tenferro::prim
