#pragma once
// The catalog of core primitives. Each kind is one parameter struct
// (ops/primitive_kinds.hpp) that declares every fact about it in one place:
//   - its name (kName, or kKinds named kinds chosen by a parameter: sum and
//     prod are one Reduce), its input count (kArity) and dtype rule
//     (kDTypes, in words) and the public functions that expose it
//     (kFunctions, written once for every tier in tenferro/ad/ops.hpp);
//   - its parameters, listed once in fields() (ops/param_fields.hpp):
//     equality, hashing, describe()'s text, the catalog's parameter list and
//     construction by name all derive from that list;
//   - its hooks (TENFERRO_PRIMITIVE_HOOKS): shape and dtype inference and
//     execution, defined with the kind's group in src/ops/, and its AD rules,
//     defined in src/ad/rules/core_*.cpp.
// ops/catalog.hpp enumerates the kinds at run time; adding one is the recipe
// of CONTRIBUTING.md, "Adding a primitive".

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "tenferro/backend/scan.hpp"
#include "tenferro/ops/primitive_kinds.hpp"

namespace tenferro::prim {

/// How many named kinds the parameter struct P has (1 for a plain kind).
template <class P>
constexpr std::int32_t kinds_of() {
  if constexpr (requires { P::kKinds; }) {
    return P::kKinds;
  } else {
    return 1;
  }
}
/// P's parameters at their defaults with its named kind `k` selected.
template <class P>
P with_kind(std::int32_t k) {
  P p{};
  if constexpr (requires { P::kKinds; }) P::set_kind(p, k);
  (void)k;
  return p;
}

// Field values compare as parameters: scalars by dtype and bit pattern (a NaN
// parameter equals itself, so hashing stays consistent), tensors by identity
// (storage and view), everything else with ==.
inline bool same_value(const Scalar& a, const Scalar& b) {
  return a.dtype() == b.dtype() &&
         std::bit_cast<std::uint64_t>(a.real()) == std::bit_cast<std::uint64_t>(b.real()) &&
         std::bit_cast<std::uint64_t>(a.imag()) == std::bit_cast<std::uint64_t>(b.imag()) &&
         a.to_int() == b.to_int();
}
inline bool same_value(const std::optional<Scalar>& a, const std::optional<Scalar>& b) {
  return a.has_value() == b.has_value() && (!a || same_value(*a, *b));
}
inline bool same_value(const Tensor& a, const Tensor& b) {
  return a.storage() == b.storage() && a.offset() == b.offset() && a.dtype() == b.dtype() &&
         a.shape() == b.shape() && a.strides() == b.strides();
}
template <class T>
bool same_value(const T& a, const T& b) {
  return a == b;
}

/// Equality of parameters, field by field (the fields() list).
template <class P>
requires requires {
  P::fields();
}
bool operator==(const P& a, const P& b) {
  bool equal = true;
  for_each_field<P>(
      [&](const auto& f) { equal = equal && same_value(value_of(f, a), value_of(f, b)); });
  return equal;
}
/// The hash of parameters, from their fields (equal parameters hash alike).
std::size_t hash_value(const Params& p);
/// The catalog name of parameters ("sum" for a Reduce of ReduceOp::Sum).
std::string_view name(const Params& p);
/// "axes=[0, 1], keepdim=false": the Param fields of `p` (describe()'s text).
std::string params_text(const Params& p);

}  // namespace tenferro::prim

namespace tenferro {

class PrimitiveOp final : public Op {
 public:
  explicit PrimitiveOp(prim::Params params);
  const prim::Params& params() const { return params_; }
  template <class P>
  const P* get() const {
    return std::get_if<P>(&params_);
  }

  /// "add", "exp", "sum", "dot_general", "transpose", ... (the unary/binary/
  /// reduce op name for those kinds).
  std::string_view name() const override;
  std::int32_t kind_key() const override { return kind_key_; }
  std::size_t input_count() const override;
  std::size_t output_count() const override { return 1; }
  /// Computed on first use (eager ops make a PrimitiveOp per call and most
  /// are never hashed).
  std::size_t hash() const override;
  bool equals(const Op& other) const override;
  InferenceResult infer(std::span<const TensorMeta> inputs) const override;
  std::string describe() const override;

 private:
  prim::Params params_;
  mutable std::atomic<std::size_t> hash_{0};  // 0: not computed yet
  std::int32_t kind_key_;
};

/// The number of distinct PrimitiveOp::kind_key() values.
std::int32_t primitive_kind_count();

/// Shorthand constructor: make_primitive(prim::Binary{BinaryOp::Add}).
std::shared_ptr<const PrimitiveOp> make_primitive(prim::Params params);
/// The elementwise primitive of `op`, built once per process and shared (ops
/// are immutable): the hot paths that apply one per call allocate nothing.
const OpPtr& elementwise_primitive(UnaryOp op);
const OpPtr& elementwise_primitive(BinaryOp op);

/// Runs the primitive `params` on concrete inputs (its kind's execute hook,
/// after the input count), without building an op: the direct tier's path.
/// Symbolic extents in the parameters resolve with `bindings`.
Tensor execute(const prim::Params& params, const prim::Operands& inputs, Backend& backend,
               const DimBindings& bindings = {});
/// Runs a primitive op on concrete inputs (its kind's execute hook).
Tensor execute_primitive(const PrimitiveOp& op, std::span<const Tensor> inputs, Backend& backend,
                         const DimBindings& bindings = {});

/// The elementwise ops writing into `out` (the direct tier's kernel entries):
/// out has the result's shape and dtype, distinct elements, and overlaps no
/// operand unless it is that operand's exact view (in place is safe then).
void unary_into(UnaryOp op, const Tensor& x, const Tensor& out, Backend& backend);
void binary_into(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out,
                 Backend& backend);

namespace detail {
/// The first k (k < 0: all) entries of the stable sort of x along `axis`,
/// {values, indices}, in one pass on `backend` (Backend::sort_into): the
/// direct tier's sort and topk.
std::pair<Tensor, Tensor> sort_prefix(const Tensor& x, std::int64_t axis, std::int64_t k,
                                      bool descending, Backend& backend);
/// execute_primitive over pointers to the input tensors, with no dimension
/// bindings, for callers whose inputs are not in one array (the eager tier's
/// handles): no copy of each Tensor.
Tensor execute_primitive_refs(const PrimitiveOp& op, std::span<const Tensor* const> inputs,
                              Backend& backend);
}  // namespace detail

}  // namespace tenferro
