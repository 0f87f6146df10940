// Identity of the core primitives: names, input counts, parameter equality,
// hashes and descriptions. Inference lives in primitive_infer*.cpp and
// execution in primitive_execute.cpp.

#include "tenferro/ops/primitives.hpp"

#include <array>
#include <bit>
#include <iterator>
#include <sstream>
#include <type_traits>
#include <utility>
#include <variant>

#include "tenferro/core/error.hpp"
#include "tensor/object_pool.hpp"

namespace tenferro::prim {

namespace {

// ---- names and arities -------------------------------------------------------------

std::string_view kind_name(const Unary& p) {
  return name(p.op);
}
std::string_view kind_name(const Binary& p) {
  return name(p.op);
}
std::string_view kind_name(const Reduce& p) {
  return name(p.op);
}
std::string_view kind_name(const Select&) {
  return "select";
}
std::string_view kind_name(const Clamp&) {
  return "clamp";
}
std::string_view kind_name(const Variance& p) {
  return p.take_sqrt ? "std" : "var";
}
std::string_view kind_name(const ArgReduce& p) {
  return p.is_max ? "argmax" : "argmin";
}
std::string_view kind_name(const DotGeneral&) {
  return "dot_general";
}
std::string_view kind_name(const Transpose&) {
  return "transpose";
}
std::string_view kind_name(const Reshape&) {
  return "reshape";
}
std::string_view kind_name(const BroadcastInDim&) {
  return "broadcast_in_dim";
}
std::string_view kind_name(const Slice&) {
  return "slice";
}
std::string_view kind_name(const Pad&) {
  return "pad";
}
std::string_view kind_name(const Concatenate&) {
  return "concatenate";
}
std::string_view kind_name(const Reverse&) {
  return "reverse";
}
std::string_view kind_name(const IndexSelect&) {
  return "index_select";
}
std::string_view kind_name(const TakeAlongAxis&) {
  return "take_along_axis";
}
std::string_view kind_name(const ScatterAdd&) {
  return "scatter_add";
}
std::string_view kind_name(const Diagonal&) {
  return "diagonal";
}
std::string_view kind_name(const DiagEmbed&) {
  return "diag_embed";
}
std::string_view kind_name(const Triangle& p) {
  return p.lower ? "tril" : "triu";
}
std::string_view kind_name(const Convert& p) {
  return p.lossy ? "cast" : "convert";
}
std::string_view kind_name(const Full&) {
  return "full";
}
std::string_view kind_name(const Constant&) {
  return "constant";
}
std::string_view kind_name(const Polygamma&) {
  return "polygamma";
}
std::string_view kind_name(const Cumulative& p) {
  return p.op == ReduceOp::Prod ? "cumprod" : "cumsum";
}
std::string_view kind_name(const Argsort& p) {
  return p.k < 0 ? "argsort" : "topk";
}

// A primitive's kind within its parameter type: the variants whose name
// depends on a parameter (kind_name) have one sub-kind per name.
std::int32_t sub_kind(const Unary& p) {
  return static_cast<std::int32_t>(p.op);
}
std::int32_t sub_kind(const Binary& p) {
  return static_cast<std::int32_t>(p.op);
}
std::int32_t sub_kind(const Reduce& p) {
  return static_cast<std::int32_t>(p.op);
}
std::int32_t sub_kind(const Variance& p) {
  return p.take_sqrt ? 1 : 0;
}
std::int32_t sub_kind(const ArgReduce& p) {
  return p.is_max ? 1 : 0;
}
std::int32_t sub_kind(const Triangle& p) {
  return p.lower ? 1 : 0;
}
std::int32_t sub_kind(const Convert& p) {
  return p.lossy ? 1 : 0;
}
std::int32_t sub_kind(const Cumulative& p) {
  return p.op == ReduceOp::Prod ? 1 : 0;
}
std::int32_t sub_kind(const Argsort& p) {
  return p.k < 0 ? 1 : 0;
}
template <class P>
std::int32_t sub_kind(const P&) {
  return 0;
}

// How many sub-kinds the parameter type P has.
template <class P>
constexpr std::int32_t sub_kind_count() {
  if constexpr (std::is_same_v<P, Unary>) {
    return kUnaryOpCount;
  } else if constexpr (std::is_same_v<P, Binary>) {
    return kBinaryOpCount;
  } else if constexpr (std::is_same_v<P, Reduce>) {
    return static_cast<std::int32_t>(std::size(kReduceOps));
  } else if constexpr (std::is_same_v<P, Variance> || std::is_same_v<P, ArgReduce> ||
                       std::is_same_v<P, Triangle> || std::is_same_v<P, Convert> ||
                       std::is_same_v<P, Cumulative> || std::is_same_v<P, Argsort>) {
    return 2;
  } else {
    return 1;
  }
}

// The first key of each parameter type, and (last entry) the key count.
template <std::size_t... I>
constexpr std::array<std::int32_t, sizeof...(I) + 1> kind_offsets(std::index_sequence<I...>) {
  const std::int32_t counts[] = {sub_kind_count<std::variant_alternative_t<I, Params>>()...};
  std::array<std::int32_t, sizeof...(I) + 1> first{};
  for (std::size_t i = 0; i < sizeof...(I); ++i) first[i + 1] = first[i] + counts[i];
  return first;
}
constexpr auto kKindOffsets = kind_offsets(std::make_index_sequence<std::variant_size_v<Params>>{});

template <class P>
std::size_t arity(const P&) {
  if constexpr (std::is_same_v<P, Full> || std::is_same_v<P, Constant>) {
    return 0;
  } else if constexpr (std::is_same_v<P, Binary> || std::is_same_v<P, DotGeneral> ||
                       std::is_same_v<P, IndexSelect> || std::is_same_v<P, TakeAlongAxis>) {
    return 2;
  } else if constexpr (std::is_same_v<P, Select> || std::is_same_v<P, ScatterAdd>) {
    return 3;
  } else {
    return 1;
  }
}
std::size_t arity(const Concatenate& p) {
  return p.count;
}

// ---- equality and hashing ----------------------------------------------------------

// Scalars compare by dtype and bit pattern, so NaN parameters equal
// themselves and hashing stays consistent with equality.
bool same_scalar(const Scalar& a, const Scalar& b) {
  return a.dtype() == b.dtype() &&
         std::bit_cast<std::uint64_t>(a.real()) == std::bit_cast<std::uint64_t>(b.real()) &&
         std::bit_cast<std::uint64_t>(a.imag()) == std::bit_cast<std::uint64_t>(b.imag()) &&
         a.to_int() == b.to_int();
}

bool same_scalar(const std::optional<Scalar>& a, const std::optional<Scalar>& b) {
  return a.has_value() == b.has_value() && (!a || same_scalar(*a, *b));
}

template <class T>
void mix(std::size_t& h, const T& v) {
  if constexpr (std::is_enum_v<T> || std::is_integral_v<T>) {
    h = hash_combine(h, static_cast<std::size_t>(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    // Equality is ==, under which 0.0 and -0.0 are equal: hash them alike.
    h = hash_combine(h, v == 0 ? 0 : std::bit_cast<std::uint64_t>(static_cast<double>(v)));
  } else if constexpr (std::is_same_v<T, Axes>) {
    mix(h, v.size());
    for (std::int64_t a : v) mix(h, a);
  } else if constexpr (std::is_same_v<T, SymShape>) {
    mix(h, v.size());
    for (const SymDim& d : v) h = hash_combine(h, d.hash());
  } else if constexpr (std::is_same_v<T, Scalar>) {
    mix(h, v.dtype());
    h = hash_combine(h, std::bit_cast<std::uint64_t>(v.real()));
    h = hash_combine(h, std::bit_cast<std::uint64_t>(v.imag()));
    mix(h, v.to_int());
  } else if constexpr (std::is_same_v<T, std::optional<Scalar>>) {
    mix(h, v.has_value());
    if (v) mix(h, *v);
  } else {
    static_assert(sizeof(T) == 0, "no hash for this parameter field");
  }
}

template <class... T>
std::size_t hash_fields(const T&... fields) {
  std::size_t h = 0;
  (mix(h, fields), ...);
  return h;
}

std::size_t fields_hash(const Unary& p) {
  return hash_fields(p.op);
}
std::size_t fields_hash(const Binary& p) {
  return hash_fields(p.op);
}
std::size_t fields_hash(const Select&) {
  return 0;
}
std::size_t fields_hash(const Clamp& p) {
  return hash_fields(p.lo, p.hi);
}
std::size_t fields_hash(const Reduce& p) {
  return hash_fields(p.op, p.axes, p.keepdim);
}
std::size_t fields_hash(const Variance& p) {
  return hash_fields(p.axes, p.correction, p.keepdim, p.take_sqrt);
}
std::size_t fields_hash(const ArgReduce& p) {
  return hash_fields(p.is_max, p.axis, p.keepdim);
}
std::size_t fields_hash(const DotGeneral& p) {
  return hash_fields(p.dims.lhs_contracting, p.dims.rhs_contracting, p.dims.lhs_batch,
                     p.dims.rhs_batch);
}
std::size_t fields_hash(const Transpose& p) {
  return hash_fields(p.perm);
}
std::size_t fields_hash(const Reshape& p) {
  return hash_fields(p.shape);
}
std::size_t fields_hash(const BroadcastInDim& p) {
  return hash_fields(p.shape, p.dims);
}
std::size_t fields_hash(const Slice& p) {
  return hash_fields(p.start, p.limit, p.stride);
}
std::size_t fields_hash(const Pad& p) {
  return hash_fields(p.low, p.high, p.interior, p.value);
}
std::size_t fields_hash(const Concatenate& p) {
  return hash_fields(p.axis, p.count);
}
std::size_t fields_hash(const Reverse& p) {
  return hash_fields(p.axes);
}
std::size_t fields_hash(const IndexSelect& p) {
  return hash_fields(p.axis);
}
std::size_t fields_hash(const TakeAlongAxis& p) {
  return hash_fields(p.axis);
}
std::size_t fields_hash(const ScatterAdd& p) {
  return hash_fields(p.axis);
}
std::size_t fields_hash(const Diagonal& p) {
  return hash_fields(p.offset, p.axis1, p.axis2);
}
std::size_t fields_hash(const DiagEmbed& p) {
  return hash_fields(p.offset);
}
std::size_t fields_hash(const Triangle& p) {
  return hash_fields(p.lower, p.k);
}
std::size_t fields_hash(const Convert& p) {
  return hash_fields(p.dtype, p.lossy);
}
std::size_t fields_hash(const Full& p) {
  return hash_fields(p.shape, p.value, p.dtype);
}
std::size_t fields_hash(const Constant& p) {
  const Tensor& t = p.value;
  return hash_combine(hash_fields(t.offset(), t.dtype(), t.shape()),
                      std::hash<const void*>{}(t.storage().get()));
}

std::size_t fields_hash(const Cumulative& p) {
  return hash_fields(p.op, p.axis, p.reverse);
}
std::size_t fields_hash(const Argsort& p) {
  return hash_fields(p.axis, p.descending, p.k);
}
std::size_t fields_hash(const Polygamma& p) {
  return hash_fields(p.n);
}

// ---- descriptions ------------------------------------------------------------------

std::string list(std::span<const std::int64_t> v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(v[i]);
  }
  return s + "]";
}

std::string scalar_text(const Scalar& v) {
  std::ostringstream os;
  if (is_complex(v.dtype())) {
    os << "(" << v.real() << (v.imag() < 0 ? "-" : "+") << (v.imag() < 0 ? -v.imag() : v.imag())
       << "j)";
  } else if (is_bool(v.dtype())) {
    os << (v.to_int() ? "true" : "false");
  } else if (is_integral(v.dtype())) {
    os << v.to_int();
  } else {
    os << v.real();
  }
  os << ":" << name(v.dtype());
  return os.str();
}

const char* flag(bool b) {
  return b ? "true" : "false";
}

std::string params_text(const Unary&) {
  return {};
}
std::string params_text(const Binary&) {
  return {};
}
std::string params_text(const Select&) {
  return {};
}
std::string params_text(const Clamp& p) {
  return "lo=" + (p.lo ? scalar_text(*p.lo) : std::string("none")) +
         ", hi=" + (p.hi ? scalar_text(*p.hi) : std::string("none"));
}
std::string params_text(const Reduce& p) {
  return "axes=" + list(p.axes) + ", keepdim=" + flag(p.keepdim);
}
std::string params_text(const Variance& p) {
  std::ostringstream os;
  os << "axes=" << list(p.axes) << ", correction=" << p.correction
     << ", keepdim=" << flag(p.keepdim);
  return os.str();
}
std::string params_text(const ArgReduce& p) {
  return "axis=" + std::to_string(p.axis) + ", keepdim=" + flag(p.keepdim);
}
std::string params_text(const DotGeneral& p) {
  return "lhs_contracting=" + list(p.dims.lhs_contracting) +
         ", rhs_contracting=" + list(p.dims.rhs_contracting) +
         ", lhs_batch=" + list(p.dims.lhs_batch) + ", rhs_batch=" + list(p.dims.rhs_batch);
}
std::string params_text(const Transpose& p) {
  return "perm=" + list(p.perm);
}
std::string params_text(const Reshape& p) {
  return "shape=" + to_string(p.shape);
}
std::string params_text(const BroadcastInDim& p) {
  return "shape=" + to_string(p.shape) + ", dims=" + list(p.dims);
}
std::string params_text(const Slice& p) {
  return "start=" + list(p.start) + ", limit=" + list(p.limit) + ", stride=" + list(p.stride);
}
std::string params_text(const Pad& p) {
  return "low=" + list(p.low) + ", high=" + list(p.high) + ", interior=" + list(p.interior) +
         ", value=" + scalar_text(p.value);
}
std::string params_text(const Concatenate& p) {
  return "axis=" + std::to_string(p.axis) + ", count=" + std::to_string(p.count);
}
std::string params_text(const Reverse& p) {
  return "axes=" + list(p.axes);
}
std::string params_text(const IndexSelect& p) {
  return "axis=" + std::to_string(p.axis);
}
std::string params_text(const TakeAlongAxis& p) {
  return "axis=" + std::to_string(p.axis);
}
std::string params_text(const ScatterAdd& p) {
  return "axis=" + std::to_string(p.axis);
}
std::string params_text(const Diagonal& p) {
  return "offset=" + std::to_string(p.offset) + ", axis1=" + std::to_string(p.axis1) +
         ", axis2=" + std::to_string(p.axis2);
}
std::string params_text(const DiagEmbed& p) {
  return "offset=" + std::to_string(p.offset);
}
std::string params_text(const Triangle& p) {
  return "k=" + std::to_string(p.k);
}
std::string params_text(const Convert& p) {
  return "dtype=" + std::string(name(p.dtype));
}
std::string params_text(const Full& p) {
  return "shape=" + to_string(p.shape) + ", value=" + scalar_text(p.value) +
         ", dtype=" + std::string(name(p.dtype));
}
std::string params_text(const Constant& p) {
  if (!p.value.defined()) return "undefined";
  return "shape=" + shape_to_string(p.value.shape()) +
         ", dtype=" + std::string(name(p.value.dtype()));
}

std::string params_text(const Cumulative& p) {
  return "axis=" + std::to_string(p.axis) + ", reverse=" + flag(p.reverse);
}
std::string params_text(const Argsort& p) {
  return "axis=" + std::to_string(p.axis) + ", descending=" + flag(p.descending) +
         (p.k < 0 ? std::string() : ", k=" + std::to_string(p.k));
}
std::string params_text(const Polygamma& p) {
  return "n=" + std::to_string(p.n);
}

}  // namespace

bool Clamp::operator==(const Clamp& o) const {
  return same_scalar(lo, o.lo) && same_scalar(hi, o.hi);
}

bool DotGeneral::operator==(const DotGeneral& o) const {
  return dims.lhs_contracting == o.dims.lhs_contracting &&
         dims.rhs_contracting == o.dims.rhs_contracting && dims.lhs_batch == o.dims.lhs_batch &&
         dims.rhs_batch == o.dims.rhs_batch;
}

bool Pad::operator==(const Pad& o) const {
  return low == o.low && high == o.high && interior == o.interior && same_scalar(value, o.value);
}

bool Full::operator==(const Full& o) const {
  return shape == o.shape && dtype == o.dtype && same_scalar(value, o.value);
}

bool Constant::operator==(const Constant& o) const {
  return value.storage() == o.value.storage() && value.offset() == o.value.offset() &&
         value.dtype() == o.value.dtype() && value.shape() == o.value.shape() &&
         value.strides() == o.value.strides();
}

std::size_t hash_value(const Params& p) {
  return hash_combine(p.index(), std::visit([](const auto& k) { return fields_hash(k); }, p));
}

}  // namespace tenferro::prim

namespace tenferro {

PrimitiveOp::PrimitiveOp(prim::Params params)
    : params_(std::move(params)),
      kind_key_(prim::kKindOffsets[params_.index()] +
                std::visit([](const auto& p) { return prim::sub_kind(p); }, params_)) {}

std::int32_t primitive_kind_count() {
  return prim::kKindOffsets.back();
}

std::size_t PrimitiveOp::hash() const {
  std::size_t h = hash_.load(std::memory_order_relaxed);
  if (h == 0) {
    // Threads that race here compute the same value; 0 stays the "not yet" mark.
    h = prim::hash_value(params_);
    if (h == 0) h = 1;
    hash_.store(h, std::memory_order_relaxed);
  }
  return h;
}

std::string_view PrimitiveOp::name() const {
  return std::visit([](const auto& p) { return prim::kind_name(p); }, params_);
}

std::size_t PrimitiveOp::input_count() const {
  return std::visit([](const auto& p) { return prim::arity(p); }, params_);
}

bool PrimitiveOp::equals(const Op& other) const {
  const auto* o = dynamic_cast<const PrimitiveOp*>(&other);
  return o != nullptr && (o == this || (hash() == o->hash() && params_ == o->params_));
}

std::string PrimitiveOp::describe() const {
  std::string text = std::visit([](const auto& p) { return prim::params_text(p); }, params_);
  if (text.empty()) return std::string(name());
  return std::string(name()) + "(" + text + ")";
}

std::shared_ptr<const PrimitiveOp> make_primitive(prim::Params params) {
  return detail::make_pooled<const PrimitiveOp>(std::move(params));
}

namespace {
// The shared primitives of one elementwise kind, one per enumerator, built on
// first use.
template <class Param, class Enum>
const OpPtr& shared_primitive(Enum op, int count) {
  static const std::vector<OpPtr> table = [count] {
    std::vector<OpPtr> t;
    for (int i = 0; i < count; ++i) t.push_back(make_primitive(Param{static_cast<Enum>(i)}));
    return t;
  }();
  return table.at(static_cast<std::size_t>(op));
}
}  // namespace

const OpPtr& elementwise_primitive(UnaryOp op) {
  return shared_primitive<prim::Unary>(op, kUnaryOpCount);
}
const OpPtr& elementwise_primitive(BinaryOp op) {
  return shared_primitive<prim::Binary>(op, kBinaryOpCount);
}

}  // namespace tenferro
