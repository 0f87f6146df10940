#pragma once
// The catalog of core primitives. Each kind is one parameter struct below,
// and the struct declares every fact about the kind in one place:
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
// primitive_catalog() enumerates the kinds at run time; adding one is the
// recipe of CONTRIBUTING.md, "Adding a primitive".

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "tenferro/backend/contract.hpp"
#include "tenferro/backend/elementwise.hpp"
#include "tenferro/backend/reduce.hpp"
#include "tenferro/backend/scan.hpp"
#include "tenferro/ops/op.hpp"
#include "tenferro/ops/param_fields.hpp"
#include "tenferro/tensor/tensor.hpp"

namespace tenferro {
namespace ad {
struct RuleSet;  // tenferro/ad/rules.hpp
}  // namespace ad
namespace detail {
struct InferContext;  // src/ops/primitive_infer.hpp
}  // namespace detail
}  // namespace tenferro

namespace tenferro::prim {

/// The inputs of an execution: a list of tensors, or of pointers to them
/// (the eager tier's values live in separate handles; copying each into a
/// list costs two reference-count updates and a shape copy per operand).
struct Operands {
  std::span<const Tensor> values;
  std::span<const Tensor* const> refs;
  std::size_t size() const { return refs.empty() ? values.size() : refs.size(); }
  bool empty() const { return size() == 0; }
  const Tensor& operator[](std::size_t i) const { return refs.empty() ? values[i] : *refs[i]; }
};

/// The struct's name (kStruct, for the catalog) and the hooks of a kind:
/// inference (validates the inputs' metadata and
/// declares the output), execution (validates the inputs, allocates the
/// output on `backend`, runs its kernels; symbolic extents of the parameters
/// resolve with `bindings`), and the AD rules of its named kind `kind`.
#define TENFERRO_PRIMITIVE_HOOKS(P)                                                   \
  static constexpr std::string_view kStruct = #P;                                     \
  static void infer(const P& p, ::tenferro::detail::InferContext& ctx);               \
  static ::tenferro::Tensor execute(const P& p, const ::tenferro::prim::Operands& in, \
                                    ::tenferro::Backend& backend,                     \
                                    const ::tenferro::DimBindings& bindings);         \
  static ::tenferro::ad::RuleSet rules(std::int32_t kind)

// ---- elementwise ---------------------------------------------------------------------

struct Unary {
  UnaryOp op;
  static constexpr std::int32_t kKinds = kUnaryOpCount;  // one per op_list.hpp entry
  static std::string_view kind_name(std::int32_t k) { return name(static_cast<UnaryOp>(k)); }
  static std::int32_t kind_of(const Unary& p) { return static_cast<std::int32_t>(p.op); }
  static void set_kind(Unary& p, std::int32_t k) { p.op = static_cast<UnaryOp>(k); }
  static std::string_view functions(std::int32_t k) {
    return kUnaryOps[static_cast<std::size_t>(k)].api == OpApi::Api ? kind_name(k) : "unary";
  }
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes =
      "the op's rule in backend/op_list.hpp (compute and result dtype)";
  static constexpr auto fields() {
    return std::tuple{field::selects_kind("op", FieldKind::UnaryOp, &Unary::op)};
  }
  TENFERRO_PRIMITIVE_HOOKS(Unary);
};

struct Binary {  // NumPy broadcasting
  BinaryOp op;
  static constexpr std::int32_t kKinds = kBinaryOpCount;
  static std::string_view kind_name(std::int32_t k) { return name(static_cast<BinaryOp>(k)); }
  static std::int32_t kind_of(const Binary& p) { return static_cast<std::int32_t>(p.op); }
  static void set_kind(Binary& p, std::int32_t k) { p.op = static_cast<BinaryOp>(k); }
  static std::string_view functions(std::int32_t k) {
    return kBinaryOps[static_cast<std::size_t>(k)].api == OpApi::Api ? kind_name(k) : "binary";
  }
  static constexpr std::int32_t kArity = 2;
  static constexpr std::string_view kDTypes =
      "the operands promote (core/dtype.hpp), then the op's rule in backend/op_list.hpp";
  static constexpr auto fields() {
    return std::tuple{field::selects_kind("op", FieldKind::BinaryOp, &Binary::op)};
  }
  TENFERRO_PRIMITIVE_HOOKS(Binary);
};

struct Select {  // (cond, a, b), broadcasting
  static constexpr std::string_view kName = "select";
  static constexpr std::string_view kFunctions = "where";
  static constexpr std::int32_t kArity = 3;
  static constexpr std::string_view kDTypes = "cond bool; a and b promote";
  static constexpr auto fields() { return std::tuple{}; }
  TENFERRO_PRIMITIVE_HOOKS(Select);
};

struct Clamp {
  std::optional<Scalar> lo, hi;
  static constexpr std::string_view kName = "clamp";
  static constexpr std::string_view kFunctions = "clamp, clamp_min, clamp_max";
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes = "real and integer dtypes; the input's dtype";
  static constexpr auto fields() {
    return std::tuple{field::optional_scalar("lo", &Clamp::lo),
                      field::optional_scalar("hi", &Clamp::hi)};
  }
  TENFERRO_PRIMITIVE_HOOKS(Clamp);
};

struct Polygamma {  // n-th derivative of digamma, n >= 0
  std::int64_t n = 0;
  static constexpr std::string_view kName = "polygamma";
  static constexpr std::string_view kFunctions = "polygamma";
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes =
      "real floating (bool and integers give f64); complex refused";
  static constexpr auto fields() { return std::tuple{field::integer("n", &Polygamma::n)}; }
  TENFERRO_PRIMITIVE_HOOKS(Polygamma);
};

struct Convert {  // lossy = cast
  DType dtype = DType::F64;
  bool lossy = false;
  static constexpr std::int32_t kKinds = 2;
  static std::string_view kind_name(std::int32_t k) { return k ? "cast" : "convert"; }
  static std::int32_t kind_of(const Convert& p) { return p.lossy ? 1 : 0; }
  static void set_kind(Convert& p, std::int32_t k) { p.lossy = k != 0; }
  static std::string_view functions(std::int32_t k) { return kind_name(k); }
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes =
      "to `dtype`: convert refuses lossy conversions, cast performs them";
  static constexpr auto fields() {
    return std::tuple{field::dtype("dtype", &Convert::dtype),
                      field::selects_kind("lossy", FieldKind::Flag, &Convert::lossy)};
  }
  TENFERRO_PRIMITIVE_HOOKS(Convert);
};

// ---- reductions, scans and sorting ------------------------------------------------------

struct Reduce {
  ReduceOp op;
  Axes axes;
  bool keepdim = false;
  static constexpr std::int32_t kKinds = static_cast<std::int32_t>(std::size(kReduceOps));
  static std::string_view kind_name(std::int32_t k) { return name(static_cast<ReduceOp>(k)); }
  static std::int32_t kind_of(const Reduce& p) { return static_cast<std::int32_t>(p.op); }
  static void set_kind(Reduce& p, std::int32_t k) { p.op = static_cast<ReduceOp>(k); }
  static std::string_view functions(std::int32_t k) { return kind_name(k); }
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes =
      "sum, prod: bool and integers accumulate in i64; mean, logsumexp: they give f64; "
      "max, min: the input's (real); all, any: bool";
  static constexpr auto fields() {
    return std::tuple{field::selects_kind("op", FieldKind::ReduceOp, &Reduce::op),
                      field::axes("axes", &Reduce::axes), field::flag("keepdim", &Reduce::keepdim)};
  }
  TENFERRO_PRIMITIVE_HOOKS(Reduce);
};

struct Variance {  // var, or std when take_sqrt
  Axes axes;
  double correction = 1.0;
  bool keepdim = false;
  bool take_sqrt = false;
  static constexpr std::int32_t kKinds = 2;
  static std::string_view kind_name(std::int32_t k) { return k ? "std" : "var"; }
  static std::int32_t kind_of(const Variance& p) { return p.take_sqrt ? 1 : 0; }
  static void set_kind(Variance& p, std::int32_t k) { p.take_sqrt = k != 0; }
  static std::string_view functions(std::int32_t k) { return k ? "std_dev" : "var"; }
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes = "floating or complex; the real dtype";
  static constexpr auto fields() {
    return std::tuple{field::axes("axes", &Variance::axes),
                      field::real("correction", &Variance::correction),
                      field::flag("keepdim", &Variance::keepdim),
                      field::selects_kind("take_sqrt", FieldKind::Flag, &Variance::take_sqrt)};
  }
  TENFERRO_PRIMITIVE_HOOKS(Variance);
};

struct ArgReduce {  // -> i64
  bool is_max = true;
  std::int64_t axis = 0;
  bool keepdim = false;
  static constexpr std::int32_t kKinds = 2;
  static std::string_view kind_name(std::int32_t k) { return k ? "argmax" : "argmin"; }
  static std::int32_t kind_of(const ArgReduce& p) { return p.is_max ? 1 : 0; }
  static void set_kind(ArgReduce& p, std::int32_t k) { p.is_max = k != 0; }
  static std::string_view functions(std::int32_t k) { return kind_name(k); }
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes = "real; i64 indices";
  static constexpr auto fields() {
    return std::tuple{field::selects_kind("is_max", FieldKind::Flag, &ArgReduce::is_max),
                      field::axis("axis", &ArgReduce::axis),
                      field::flag("keepdim", &ArgReduce::keepdim)};
  }
  TENFERRO_PRIMITIVE_HOOKS(ArgReduce);
};

struct Cumulative {  // cumsum (Sum) or cumprod (Prod) along axis
  ReduceOp op = ReduceOp::Sum;
  std::int64_t axis = 0;
  bool reverse = false;  // accumulate from the end
  static constexpr std::int32_t kKinds = 2;
  static std::string_view kind_name(std::int32_t k) { return k ? "cumprod" : "cumsum"; }
  static std::int32_t kind_of(const Cumulative& p) { return p.op == ReduceOp::Prod ? 1 : 0; }
  static void set_kind(Cumulative& p, std::int32_t k) { p.op = k ? ReduceOp::Prod : ReduceOp::Sum; }
  static std::string_view functions(std::int32_t k) { return kind_name(k); }
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes =
      "bool and integers accumulate in i64, the others keep their dtype";
  static constexpr auto fields() {
    return std::tuple{field::selects_kind("op", FieldKind::ReduceOp, &Cumulative::op),
                      field::axis("axis", &Cumulative::axis),
                      field::flag("reverse", &Cumulative::reverse)};
  }
  TENFERRO_PRIMITIVE_HOOKS(Cumulative);
};

struct Argsort {  // -> i64; the first k sorting indices (k < 0: all)
  std::int64_t axis = 0;
  bool descending = false;
  std::int64_t k = -1;
  static constexpr std::int32_t kKinds = 2;
  static std::string_view kind_name(std::int32_t k) { return k ? "argsort" : "topk"; }
  static std::int32_t kind_of(const Argsort& p) { return p.k < 0 ? 1 : 0; }
  static void set_kind(Argsort& p, std::int32_t k) { p.k = k ? -1 : 0; }
  static std::string_view functions(std::int32_t k) { return k ? "argsort, sort" : "topk"; }
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes = "real; i64 indices";
  static constexpr auto fields() {
    return std::tuple{field::axis("axis", &Argsort::axis),
                      field::flag("descending", &Argsort::descending),
                      field::integer("k", &Argsort::k)};
  }
  TENFERRO_PRIMITIVE_HOOKS(Argsort);
};

// ---- contraction ----------------------------------------------------------------------------

struct DotGeneral {
  DotDims dims;
  static constexpr std::string_view kName = "dot_general";
  static constexpr std::string_view kFunctions = "dot_general, matmul";
  static constexpr std::int32_t kArity = 2;
  static constexpr std::string_view kDTypes = "the operands promote; bool refused";
  static constexpr auto fields() {
    return std::tuple{
        field::axes(
            "lhs_contracting", [](auto& p) -> auto& { return p.dims.lhs_contracting; }),
        field::axes(
            "rhs_contracting", [](auto& p) -> auto& { return p.dims.rhs_contracting; }),
        field::axes(
            "lhs_batch", [](auto& p) -> auto& { return p.dims.lhs_batch; }),
        field::axes(
            "rhs_batch", [](auto& p) -> auto& { return p.dims.rhs_batch; })};
  }
  TENFERRO_PRIMITIVE_HOOKS(DotGeneral);
};

// ---- layout (each returns a fresh compact tensor of the input's dtype) ----------------------

struct Transpose {  // materialised permutation
  Axes perm;
  static constexpr std::string_view kName = "transpose";
  static constexpr std::string_view kFunctions = "permute, transpose";
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes = "any; the input's dtype";
  static constexpr auto fields() { return std::tuple{field::axes("perm", &Transpose::perm)}; }
  TENFERRO_PRIMITIVE_HOOKS(Transpose);
};

struct Reshape {  // shape may be symbolic
  SymShape shape;
  static constexpr std::string_view kName = "reshape";
  static constexpr std::string_view kFunctions = "reshape";
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes = "any; the input's dtype";
  static constexpr auto fields() { return std::tuple{field::sym_shape("shape", &Reshape::shape)}; }
  TENFERRO_PRIMITIVE_HOOKS(Reshape);
};

struct BroadcastInDim {  // shape may be symbolic
  SymShape shape;
  Axes dims;
  static constexpr std::string_view kName = "broadcast_in_dim";
  static constexpr std::string_view kFunctions = "broadcast_in_dim, broadcast_to";
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes = "any; the input's dtype";
  static constexpr auto fields() {
    return std::tuple{field::sym_shape("shape", &BroadcastInDim::shape),
                      field::axes("dims", &BroadcastInDim::dims)};
  }
  TENFERRO_PRIMITIVE_HOOKS(BroadcastInDim);
};

struct Slice {  // static XLA slice
  Shape start, limit, stride;
  static constexpr std::string_view kName = "slice";
  static constexpr std::string_view kFunctions = "slice";
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes = "any; the input's dtype";
  static constexpr auto fields() {
    return std::tuple{field::ints("start", &Slice::start), field::ints("limit", &Slice::limit),
                      field::ints("stride", &Slice::stride)};
  }
  TENFERRO_PRIMITIVE_HOOKS(Slice);
};

struct Pad {
  Shape low, high, interior;
  Scalar value;
  static constexpr std::string_view kName = "pad";
  static constexpr std::string_view kFunctions = "pad";
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes = "any; the input's dtype";
  static constexpr auto fields() {
    return std::tuple{field::ints("low", &Pad::low), field::ints("high", &Pad::high),
                      field::ints("interior", &Pad::interior), field::scalar("value", &Pad::value)};
  }
  TENFERRO_PRIMITIVE_HOOKS(Pad);
};

struct Concatenate {  // `count` inputs
  std::int64_t axis = 0;
  std::size_t count = 2;
  static constexpr std::string_view kName = "concatenate";
  static constexpr std::string_view kFunctions = "concatenate, stack";
  static constexpr std::int32_t kArity = -1;  // `count`
  static constexpr std::string_view kDTypes = "the operands promote";
  static constexpr auto fields() {
    return std::tuple{field::axis("axis", &Concatenate::axis),
                      field::param("count", FieldKind::Count, &Concatenate::count)};
  }
  TENFERRO_PRIMITIVE_HOOKS(Concatenate);
};

struct Tile {  // out[..., j, ...] = x[..., j mod x_d, ...] along every axis d
  Shape reps;
  static constexpr std::string_view kName = "tile";
  static constexpr std::string_view kFunctions = "tile";
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes = "any; the input's dtype";
  static constexpr auto fields() { return std::tuple{field::ints("reps", &Tile::reps)}; }
  TENFERRO_PRIMITIVE_HOOKS(Tile);
};

struct Reverse {
  Axes axes;
  static constexpr std::string_view kName = "reverse";
  static constexpr std::string_view kFunctions = "reverse, flip";
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes = "any; the input's dtype";
  static constexpr auto fields() { return std::tuple{field::axes("axes", &Reverse::axes)}; }
  TENFERRO_PRIMITIVE_HOOKS(Reverse);
};

struct Diagonal {
  std::int64_t offset = 0, axis1 = 0, axis2 = 1;
  static constexpr std::string_view kName = "diagonal";
  static constexpr std::string_view kFunctions = "diagonal, trace";
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes = "any; the input's dtype";
  static constexpr auto fields() {
    return std::tuple{field::integer("offset", &Diagonal::offset),
                      field::axis("axis1", &Diagonal::axis1),
                      field::axis("axis2", &Diagonal::axis2)};
  }
  TENFERRO_PRIMITIVE_HOOKS(Diagonal);
};

struct DiagEmbed {
  std::int64_t offset = 0;
  static constexpr std::string_view kName = "diag_embed";
  static constexpr std::string_view kFunctions = "diag_embed";
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes = "any; the input's dtype";
  static constexpr auto fields() {
    return std::tuple{field::integer("offset", &DiagEmbed::offset)};
  }
  TENFERRO_PRIMITIVE_HOOKS(DiagEmbed);
};

struct Triangle {  // tril when lower, else triu
  bool lower = true;
  std::int64_t k = 0;
  static constexpr std::int32_t kKinds = 2;
  static std::string_view kind_name(std::int32_t k) { return k ? "tril" : "triu"; }
  static std::int32_t kind_of(const Triangle& p) { return p.lower ? 1 : 0; }
  static void set_kind(Triangle& p, std::int32_t k) { p.lower = k != 0; }
  static std::string_view functions(std::int32_t k) { return kind_name(k); }
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes = "any; the input's dtype";
  static constexpr auto fields() {
    return std::tuple{field::selects_kind("lower", FieldKind::Flag, &Triangle::lower),
                      field::integer("k", &Triangle::k)};
  }
  TENFERRO_PRIMITIVE_HOOKS(Triangle);
};

// ---- gathering and scattering -----------------------------------------------------------------

struct IndexSelect {  // (x, index)
  std::int64_t axis = 0;
  static constexpr std::string_view kName = "index_select";
  static constexpr std::string_view kFunctions = "index_select";
  static constexpr std::int32_t kArity = 2;
  static constexpr std::string_view kDTypes = "x any, index i32 or i64; x's dtype";
  static constexpr auto fields() { return std::tuple{field::axis("axis", &IndexSelect::axis)}; }
  TENFERRO_PRIMITIVE_HOOKS(IndexSelect);
};

struct TakeAlongAxis {  // (x, index)
  std::int64_t axis = 0;
  static constexpr std::string_view kName = "take_along_axis";
  static constexpr std::string_view kFunctions = "take_along_axis, sort, topk";
  static constexpr std::int32_t kArity = 2;
  static constexpr std::string_view kDTypes = "x any, index i32 or i64; x's dtype";
  static constexpr auto fields() { return std::tuple{field::axis("axis", &TakeAlongAxis::axis)}; }
  TENFERRO_PRIMITIVE_HOOKS(TakeAlongAxis);
};

struct ScatterAdd {  // (x, index, src)
  std::int64_t axis = 0;
  static constexpr std::string_view kName = "scatter_add";
  static constexpr std::string_view kFunctions = "scatter_add";
  static constexpr std::int32_t kArity = 3;
  static constexpr std::string_view kDTypes = "x and src promote, index i32 or i64";
  static constexpr auto fields() { return std::tuple{field::axis("axis", &ScatterAdd::axis)}; }
  TENFERRO_PRIMITIVE_HOOKS(ScatterAdd);
};

// ---- sources (no inputs) ------------------------------------------------------------------------

struct Full {  // a filled tensor whose shape may be symbolic
  SymShape shape;
  Scalar value;
  DType dtype = DType::F64;
  static constexpr std::string_view kName = "full";
  static constexpr std::string_view kFunctions = "full_like, zeros_like, ones_like, scalar_like";
  static constexpr std::int32_t kArity = 0;
  static constexpr std::string_view kDTypes = "`dtype`";
  static constexpr auto fields() {
    return std::tuple{field::sym_shape("shape", &Full::shape), field::scalar("value", &Full::value),
                      field::dtype("dtype", &Full::dtype)};
  }
  TENFERRO_PRIMITIVE_HOOKS(Full);
};

struct Constant {  // equality is identity of the held tensor
  Tensor value;
  static constexpr std::string_view kName = "constant";
  static constexpr std::string_view kFunctions = "constant";
  static constexpr std::int32_t kArity = 0;
  static constexpr std::string_view kDTypes = "the held tensor's";
  static constexpr auto fields() {
    return std::tuple{field::param("value", FieldKind::Tensor, &Constant::value)};
  }
  TENFERRO_PRIMITIVE_HOOKS(Constant);
};

using Params = std::variant<Unary, Binary, Select, Clamp, Reduce, Variance, ArgReduce, DotGeneral,
                            Transpose, Reshape, BroadcastInDim, Slice, Pad, Concatenate, Reverse,
                            IndexSelect, TakeAlongAxis, ScatterAdd, Diagonal, DiagEmbed, Triangle,
                            Convert, Full, Constant, Polygamma, Cumulative, Argsort, Tile>;

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

// ---- the catalog at run time -----------------------------------------------------------------

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
/// The catalog entry `name` with its parameters set by name, the others at
/// their defaults (an absent OptionalScalar is none; a std::monostate value
/// sets one to none). An unknown name or parameter, or a value of the wrong
/// kind, is InvalidArgument naming what the entry takes.
std::shared_ptr<const PrimitiveOp> make_primitive(std::string_view name,
                                                  std::span<const prim::NamedParam> params);
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
