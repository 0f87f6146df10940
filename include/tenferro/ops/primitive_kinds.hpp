#pragma once
// The primitive kinds: one parameter struct per kind, each declaring every
// fact about it (see ops/primitives.hpp, which builds the catalog, the op
// and execution on them), and the variant of them all, prim::Params.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <variant>

#include "tenferro/backend/contract.hpp"
#include "tenferro/backend/elementwise.hpp"
#include "tenferro/backend/reduce.hpp"
#include "tenferro/ops/op.hpp"
#include "tenferro/ops/param_fields.hpp"
#include "tenferro/tensor/tensor.hpp"

namespace tenferro {
namespace ad {
struct RuleSet;  // tenferro/ad/rules.hpp
}  // namespace ad
namespace detail {
struct InferContext;  // src/ops/infer_context.hpp
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
    return field::list(field::selects_kind("op", FieldKind::UnaryOp, &Unary::op));
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
    return field::list(field::selects_kind("op", FieldKind::BinaryOp, &Binary::op));
  }
  TENFERRO_PRIMITIVE_HOOKS(Binary);
};

struct Select {  // (cond, a, b), broadcasting
  static constexpr std::string_view kName = "select";
  static constexpr std::string_view kFunctions = "where";
  static constexpr std::int32_t kArity = 3;
  static constexpr std::string_view kDTypes = "cond bool; a and b promote";
  static constexpr auto fields() { return field::list(); }
  TENFERRO_PRIMITIVE_HOOKS(Select);
};

struct Clamp {
  std::optional<Scalar> lo, hi;
  static constexpr std::string_view kName = "clamp";
  static constexpr std::string_view kFunctions = "clamp, clamp_min, clamp_max";
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes = "real and integer dtypes; the input's dtype";
  static constexpr auto fields() {
    return field::list(field::optional_scalar("lo", &Clamp::lo),
                       field::optional_scalar("hi", &Clamp::hi));
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
  static constexpr auto fields() { return field::list(field::integer("n", &Polygamma::n)); }
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
    return field::list(field::dtype("dtype", &Convert::dtype),
                       field::selects_kind("lossy", FieldKind::Flag, &Convert::lossy));
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
    return field::list(field::selects_kind("op", FieldKind::ReduceOp, &Reduce::op),
                       field::axes("axes", &Reduce::axes),
                       field::flag("keepdim", &Reduce::keepdim));
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
    return field::list(field::axes("axes", &Variance::axes),
                       field::real("correction", &Variance::correction),
                       field::flag("keepdim", &Variance::keepdim),
                       field::selects_kind("take_sqrt", FieldKind::Flag, &Variance::take_sqrt));
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
    return field::list(field::selects_kind("is_max", FieldKind::Flag, &ArgReduce::is_max),
                       field::axis("axis", &ArgReduce::axis),
                       field::flag("keepdim", &ArgReduce::keepdim));
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
    return field::list(field::selects_kind("op", FieldKind::ReduceOp, &Cumulative::op),
                       field::axis("axis", &Cumulative::axis),
                       field::flag("reverse", &Cumulative::reverse));
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
    return field::list(field::axis("axis", &Argsort::axis),
                       field::flag("descending", &Argsort::descending),
                       field::integer("k", &Argsort::k));
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
    return field::list(
        field::axes(
            "lhs_contracting", [](auto& p) -> auto& { return p.dims.lhs_contracting; }),
        field::axes(
            "rhs_contracting", [](auto& p) -> auto& { return p.dims.rhs_contracting; }),
        field::axes(
            "lhs_batch", [](auto& p) -> auto& { return p.dims.lhs_batch; }),
        field::axes(
            "rhs_batch", [](auto& p) -> auto& { return p.dims.rhs_batch; }));
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
  static constexpr auto fields() { return field::list(field::axes("perm", &Transpose::perm)); }
  TENFERRO_PRIMITIVE_HOOKS(Transpose);
};

struct Reshape {  // shape may be symbolic
  SymShape shape;
  static constexpr std::string_view kName = "reshape";
  static constexpr std::string_view kFunctions = "reshape";
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes = "any; the input's dtype";
  static constexpr auto fields() { return field::list(field::sym_shape("shape", &Reshape::shape)); }
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
    return field::list(field::sym_shape("shape", &BroadcastInDim::shape),
                       field::axes("dims", &BroadcastInDim::dims));
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
    return field::list(field::ints("start", &Slice::start), field::ints("limit", &Slice::limit),
                       field::ints("stride", &Slice::stride));
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
    return field::list(field::ints("low", &Pad::low), field::ints("high", &Pad::high),
                       field::ints("interior", &Pad::interior),
                       field::scalar("value", &Pad::value));
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
    return field::list(field::axis("axis", &Concatenate::axis),
                       field::param("count", FieldKind::Count, &Concatenate::count));
  }
  TENFERRO_PRIMITIVE_HOOKS(Concatenate);
};

struct Tile {  // out[..., j, ...] = x[..., j mod x_d, ...] along every axis d
  Shape reps;
  static constexpr std::string_view kName = "tile";
  static constexpr std::string_view kFunctions = "tile";
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes = "any; the input's dtype";
  static constexpr auto fields() { return field::list(field::ints("reps", &Tile::reps)); }
  TENFERRO_PRIMITIVE_HOOKS(Tile);
};

struct Reverse {
  Axes axes;
  static constexpr std::string_view kName = "reverse";
  static constexpr std::string_view kFunctions = "reverse, flip";
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes = "any; the input's dtype";
  static constexpr auto fields() { return field::list(field::axes("axes", &Reverse::axes)); }
  TENFERRO_PRIMITIVE_HOOKS(Reverse);
};

struct Diagonal {
  std::int64_t offset = 0, axis1 = 0, axis2 = 1;
  static constexpr std::string_view kName = "diagonal";
  static constexpr std::string_view kFunctions = "diagonal, trace";
  static constexpr std::int32_t kArity = 1;
  static constexpr std::string_view kDTypes = "any; the input's dtype";
  static constexpr auto fields() {
    return field::list(field::integer("offset", &Diagonal::offset),
                       field::axis("axis1", &Diagonal::axis1),
                       field::axis("axis2", &Diagonal::axis2));
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
    return field::list(field::integer("offset", &DiagEmbed::offset));
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
    return field::list(field::selects_kind("lower", FieldKind::Flag, &Triangle::lower),
                       field::integer("k", &Triangle::k));
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
  static constexpr auto fields() { return field::list(field::axis("axis", &IndexSelect::axis)); }
  TENFERRO_PRIMITIVE_HOOKS(IndexSelect);
};

struct TakeAlongAxis {  // (x, index)
  std::int64_t axis = 0;
  static constexpr std::string_view kName = "take_along_axis";
  static constexpr std::string_view kFunctions = "take_along_axis, sort, topk";
  static constexpr std::int32_t kArity = 2;
  static constexpr std::string_view kDTypes = "x any, index i32 or i64; x's dtype";
  static constexpr auto fields() { return field::list(field::axis("axis", &TakeAlongAxis::axis)); }
  TENFERRO_PRIMITIVE_HOOKS(TakeAlongAxis);
};

struct ScatterAdd {  // (x, index, src)
  std::int64_t axis = 0;
  static constexpr std::string_view kName = "scatter_add";
  static constexpr std::string_view kFunctions = "scatter_add";
  static constexpr std::int32_t kArity = 3;
  static constexpr std::string_view kDTypes = "x and src promote, index i32 or i64";
  static constexpr auto fields() { return field::list(field::axis("axis", &ScatterAdd::axis)); }
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
    return field::list(field::sym_shape("shape", &Full::shape),
                       field::scalar("value", &Full::value), field::dtype("dtype", &Full::dtype));
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
    return field::list(field::param("value", FieldKind::Tensor, &Constant::value));
  }
  TENFERRO_PRIMITIVE_HOOKS(Constant);
};

using Params = std::variant<Unary, Binary, Select, Clamp, Reduce, Variance, ArgReduce, DotGeneral,
                            Transpose, Reshape, BroadcastInDim, Slice, Pad, Concatenate, Reverse,
                            IndexSelect, TakeAlongAxis, ScatterAdd, Diagonal, DiagEmbed, Triangle,
                            Convert, Full, Constant, Polygamma, Cumulative, Argsort, Tile>;

}  // namespace tenferro::prim
