#pragma once
// The primitive catalog at run time: every named kind with its inputs,
// parameters, dtype rule and the public functions that expose it, and
// construction by name. For code that enumerates the primitives (bindings,
// the oracle replay); the umbrella header leaves it out, so user code that
// only calls operations does not compile it.

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <variant>
#include <vector>

#include "tenferro/ops/primitives.hpp"

namespace tenferro::prim {

/// One parameter of a catalog entry.
struct FieldInfo {
  std::string_view name;
  FieldKind kind;
};

/// One named primitive ("pad", "sum", "exp"): a kind of one parameter
/// struct, with the parameter that selects it fixed.
struct PrimitiveInfo {
  std::string_view name;
  std::int32_t kind_key = 0;                // PrimitiveOp::kind_key() of its ops
  std::string_view params;                  // its parameter struct ("Reduce")
  std::int32_t arity = 0;                   // inputs; -1: the `count` parameter
  std::vector<FieldInfo> fields;            // the parameters a caller sets, in order
  std::string_view dtypes;                  // the dtype rule, in words
  std::vector<std::string_view> functions;  // the public functions that expose it
};

/// Every named primitive, by kind key (primitive_catalog()[k].kind_key == k).
std::span<const PrimitiveInfo> primitive_catalog();
/// The entry named `name`, or nullptr.
const PrimitiveInfo* find_primitive(std::string_view name);

/// A parameter value given by name (construction by name: bindings, the
/// oracle replay). Integers convert to reals and scalars, lists of
/// integers to axes, extents and symbolic shapes.
using ParamValue = std::variant<std::int64_t, double, bool, std::vector<std::int64_t>, Scalar,
                                DType, SymShape, Tensor, std::monostate>;
struct NamedParam {
  std::string_view name;
  ParamValue value;
};

}  // namespace tenferro::prim

namespace tenferro {

/// The catalog entry `name` with its parameters set by name, the others at
/// their defaults (an absent OptionalScalar is none; a std::monostate value
/// sets one to none). An unknown name or parameter, or a value of the wrong
/// kind, is InvalidArgument naming what the entry takes.
std::shared_ptr<const PrimitiveOp> make_primitive(std::string_view name,
                                                  std::span<const prim::NamedParam> params);

}  // namespace tenferro
