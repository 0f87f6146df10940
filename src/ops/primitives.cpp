// The catalog's machinery, derived from each parameter struct's declaration
// (ops/primitive_kinds.hpp): kind keys and names, input counts, hashes and
// describe()'s text from the fields() lists, the run-time catalog and
// construction by name. Inference and execution are the kinds' hooks
// (src/ops/prim_*.cpp; primitive_execute.cpp dispatches to them).

#include "tenferro/ops/catalog.hpp"

#include <array>
#include <bit>
#include <sstream>
#include <type_traits>
#include <utility>
#include <variant>

#include "tenferro/core/error.hpp"
#include "tensor/object_pool.hpp"

namespace tenferro::prim {

std::string_view name(FieldKind kind) {
  switch (kind) {
    case FieldKind::Int:
      return "int";
    case FieldKind::Axis:
      return "axis";
    case FieldKind::Axes:
      return "axes";
    case FieldKind::Ints:
      return "ints";
    case FieldKind::SymShape:
      return "sym_shape";
    case FieldKind::Flag:
      return "flag";
    case FieldKind::Real:
      return "real";
    case FieldKind::Scalar:
      return "scalar";
    case FieldKind::OptionalScalar:
      return "optional_scalar";
    case FieldKind::DType:
      return "dtype";
    case FieldKind::Tensor:
      return "tensor";
    case FieldKind::Count:
      return "count";
    case FieldKind::UnaryOp:
      return "unary_op";
    case FieldKind::BinaryOp:
      return "binary_op";
    case FieldKind::ReduceOp:
      return "reduce_op";
  }
  return "?";
}

namespace {

// ---- the kinds of a parameter struct (one, or kKinds named by a parameter) ---------

template <class P>
constexpr bool kHasKinds = requires {
  P::kKinds;
};

template <class P>
std::string_view kind_name_of(std::int32_t k) {
  if constexpr (kHasKinds<P>) {
    return P::kind_name(k);
  } else {
    (void)k;
    return P::kName;
  }
}
template <class P>
std::int32_t kind_of(const P& p) {
  if constexpr (kHasKinds<P>) {
    return P::kind_of(p);
  } else {
    (void)p;
    return 0;
  }
}
template <class P>
std::string_view functions_of(std::int32_t k) {
  if constexpr (kHasKinds<P>) {
    return P::functions(k);
  } else {
    (void)k;
    return P::kFunctions;
  }
}

// The first kind key of each parameter struct, and (last entry) the key count.
template <std::size_t... I>
constexpr std::array<std::int32_t, sizeof...(I) + 1> kind_offsets(std::index_sequence<I...>) {
  const std::int32_t counts[] = {kinds_of<std::variant_alternative_t<I, Params>>()...};
  std::array<std::int32_t, sizeof...(I) + 1> first{};
  for (std::size_t i = 0; i < sizeof...(I); ++i) first[i + 1] = first[i] + counts[i];
  return first;
}
constexpr auto kKindOffsets = kind_offsets(std::make_index_sequence<std::variant_size_v<Params>>{});

// ---- hashing -------------------------------------------------------------------------

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
  } else if constexpr (std::is_same_v<T, Tensor>) {
    mix(h, v.offset());
    mix(h, v.dtype());
    mix(h, v.shape());
    h = hash_combine(h, std::hash<const void*>{}(v.storage().get()));
  } else {
    static_assert(sizeof(T) == 0, "no hash for this parameter field");
  }
}

template <class P>
std::size_t fields_hash(const P& p) {
  std::size_t h = 0;
  for_each_field<P>([&](const auto& f) { mix(h, value_of(f, p)); });
  return h;
}

// ---- describe()'s text -----------------------------------------------------------------

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

template <class T>
std::string value_text(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    std::ostringstream os;
    os << v;
    return os.str();
  } else if constexpr (std::is_same_v<T, Axes>) {
    return list(v);
  } else if constexpr (std::is_same_v<T, SymShape>) {
    return to_string(v);
  } else if constexpr (std::is_same_v<T, Scalar>) {
    return scalar_text(v);
  } else if constexpr (std::is_same_v<T, std::optional<Scalar>>) {
    return v ? scalar_text(*v) : std::string("none");
  } else if constexpr (std::is_same_v<T, DType>) {
    return std::string(name(v));
  } else if constexpr (std::is_same_v<T, Tensor>) {
    if (!v.defined()) return "undefined";
    return "tensor(shape=" + shape_to_string(v.shape()) +
           ", dtype=" + std::string(name(v.dtype())) + ")";
  } else {
    return std::string(name(v));  // the op enums
  }
}

template <class P>
std::string fields_text(const P& p) {
  std::string text;
  for_each_field<P>([&](const auto& f) {
    if (f.role != FieldRole::Param) return;
    if (!text.empty()) text += ", ";
    text += std::string(f.name) + "=" + value_text(value_of(f, p));
  });
  return text;
}

// ---- construction by name ----------------------------------------------------------------

std::string_view value_kind(const ParamValue& v) {
  return std::visit(
      [](const auto& x) -> std::string_view {
        using V = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<V, std::int64_t>) return "an integer";
        if constexpr (std::is_same_v<V, double>) return "a real number";
        if constexpr (std::is_same_v<V, bool>) return "a bool";
        if constexpr (std::is_same_v<V, std::vector<std::int64_t>>) return "a list of integers";
        if constexpr (std::is_same_v<V, Scalar>) return "a scalar";
        if constexpr (std::is_same_v<V, DType>) return "a dtype";
        if constexpr (std::is_same_v<V, SymShape>) return "a symbolic shape";
        if constexpr (std::is_same_v<V, Tensor>) return "a tensor";
        return "none";
      },
      v);
}

// Sets `target` from `v`; false when the value cannot be that parameter.
template <class T>
bool assign(T& target, const ParamValue& v) {
  const auto* i = std::get_if<std::int64_t>(&v);
  const auto* list = std::get_if<std::vector<std::int64_t>>(&v);
  if constexpr (std::is_same_v<T, bool>) {
    if (const auto* b = std::get_if<bool>(&v)) return target = *b, true;
  } else if constexpr (std::is_same_v<T, std::size_t>) {
    if (i && *i >= 0) return target = static_cast<std::size_t>(*i), true;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    if (i) return target = *i, true;
  } else if constexpr (std::is_same_v<T, double>) {
    if (const auto* d = std::get_if<double>(&v)) return target = *d, true;
    if (i) return target = static_cast<double>(*i), true;
  } else if constexpr (std::is_same_v<T, Axes>) {
    if (list) return target = Axes(list->begin(), list->end()), true;
  } else if constexpr (std::is_same_v<T, SymShape>) {
    if (const auto* s = std::get_if<SymShape>(&v)) return target = *s, true;
    if (list) return target = to_sym_shape(*list), true;
  } else if constexpr (std::is_same_v<T, Scalar> || std::is_same_v<T, std::optional<Scalar>>) {
    if constexpr (std::is_same_v<T, std::optional<Scalar>>) {
      if (std::holds_alternative<std::monostate>(v)) return target = std::nullopt, true;
    }
    if (const auto* s = std::get_if<Scalar>(&v)) return target = *s, true;
    if (const auto* d = std::get_if<double>(&v)) return target = Scalar(*d), true;
    if (i) return target = Scalar(*i), true;
    if (const auto* b = std::get_if<bool>(&v)) return target = Scalar(*b), true;
  } else if constexpr (std::is_same_v<T, DType>) {
    if (const auto* d = std::get_if<DType>(&v)) return target = *d, true;
  } else if constexpr (std::is_same_v<T, Tensor>) {
    if (const auto* t = std::get_if<Tensor>(&v)) return target = *t, true;
  }
  return false;
}

template <class P>
Params build(const PrimitiveInfo& info, std::int32_t kind, std::span<const NamedParam> params) {
  P p = with_kind<P>(kind);
  for (const NamedParam& given : params) {
    bool found = false;
    for_each_field<P>([&](const auto& f) {
      if (found || f.role != FieldRole::Param || f.name != given.name) return;
      found = true;
      if (!assign(value_of(f, p), given.value)) {
        fail(ErrorKind::InvalidArgument, std::string(info.name), "parameter '", f.name,
             "' takes a value of kind ", name(f.kind), ", got ", value_kind(given.value));
      }
    });
    if (!found) {
      std::string names;
      for (const FieldInfo& fi : info.fields)
        names += (names.empty() ? "" : ", ") + std::string(fi.name);
      fail(ErrorKind::InvalidArgument, std::string(info.name), "has no parameter '", given.name,
           "'; its parameters are: ", names.empty() ? std::string("none") : names);
    }
  }
  return p;
}

// ---- the run-time catalog -------------------------------------------------------------------

using Builder = Params (*)(const PrimitiveInfo&, std::int32_t, std::span<const NamedParam>);

struct Catalog {
  std::vector<PrimitiveInfo> entries;
  std::vector<Builder> builders;    // per entry
  std::vector<std::int32_t> kinds;  // per entry: its kind within its struct
};

std::vector<std::string_view> split_functions(std::string_view list) {
  std::vector<std::string_view> out;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return out;
}

template <std::size_t I>
void add_entries(Catalog& c) {
  using P = std::variant_alternative_t<I, Params>;
  for (std::int32_t k = 0; k < kinds_of<P>(); ++k) {
    PrimitiveInfo info;
    info.name = kind_name_of<P>(k);
    info.kind_key = kKindOffsets[I] + k;
    info.params = P::kStruct;
    info.arity = P::kArity;
    for_each_field<P>([&](const auto& f) {
      if (f.role == FieldRole::Param) info.fields.push_back({f.name, f.kind});
    });
    info.dtypes = P::kDTypes;
    info.functions = split_functions(functions_of<P>(k));
    c.entries.push_back(std::move(info));
    c.builders.push_back(&build<P>);
    c.kinds.push_back(k);
  }
}

const Catalog& catalog() {
  static const Catalog c = [] {
    Catalog made;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (add_entries<I>(made), ...);
    }
    (std::make_index_sequence<std::variant_size_v<Params>>{});
    return made;
  }();
  return c;
}

}  // namespace

std::size_t hash_value(const Params& p) {
  return hash_combine(p.index(), std::visit([](const auto& k) { return fields_hash(k); }, p));
}

std::string_view name(const Params& p) {
  return std::visit(
      [](const auto& k) { return kind_name_of<std::decay_t<decltype(k)>>(kind_of(k)); }, p);
}

std::string params_text(const Params& p) {
  return std::visit([](const auto& k) { return fields_text(k); }, p);
}

std::span<const PrimitiveInfo> primitive_catalog() {
  return catalog().entries;
}

const PrimitiveInfo* find_primitive(std::string_view name) {
  for (const PrimitiveInfo& info : catalog().entries)
    if (info.name == name) return &info;
  return nullptr;
}

}  // namespace tenferro::prim

namespace tenferro {

PrimitiveOp::PrimitiveOp(prim::Params params)
    : params_(std::move(params)),
      kind_key_(prim::kKindOffsets[params_.index()] +
                std::visit([](const auto& p) { return prim::kind_of(p); }, params_)) {}

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
  return prim::catalog().entries[static_cast<std::size_t>(kind_key_)].name;
}

std::size_t PrimitiveOp::input_count() const {
  if (const auto* c = get<prim::Concatenate>()) return c->count;
  return static_cast<std::size_t>(
      prim::catalog().entries[static_cast<std::size_t>(kind_key_)].arity);
}

bool PrimitiveOp::equals(const Op& other) const {
  const auto* o = dynamic_cast<const PrimitiveOp*>(&other);
  return o != nullptr && (o == this || (hash() == o->hash() && params_ == o->params_));
}

std::string PrimitiveOp::describe() const {
  std::string text = prim::params_text(params_);
  if (text.empty()) return std::string(name());
  return std::string(name()) + "(" + text + ")";
}

std::shared_ptr<const PrimitiveOp> make_primitive(prim::Params params) {
  return detail::make_pooled<const PrimitiveOp>(std::move(params));
}

std::shared_ptr<const PrimitiveOp> make_primitive(std::string_view name,
                                                  std::span<const prim::NamedParam> params) {
  const prim::PrimitiveInfo* info = prim::find_primitive(name);
  if (info == nullptr) {
    fail(ErrorKind::InvalidArgument, "make_primitive", "no primitive is named '", name,
         "'; primitive_catalog() lists them");
  }
  const auto& c = prim::catalog();
  const auto at = static_cast<std::size_t>(info->kind_key);
  return make_primitive(c.builders[at](*info, c.kinds[at], params));
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
