// Ops replayed through the primitive catalog (prim::primitive_catalog): a
// case whose op names a catalog entry (under its own name, PyTorch's
// special_ prefix, or an alias below) is built by name with make_primitive,
// its parameters read from the case's arguments by the entry's parameter list
// and kinds. What is PyTorch's and not the catalog's stays in the tables
// here: the argument names (dim for our axes), its default dims, and the
// dtype keyword. A new primitive replays without a mapping of its own.

#include <map>

#include "ops.hpp"
#include "tenferro/ops/catalog.hpp"

namespace replay {

using namespace tenferro;

namespace {

// PyTorch's names of catalog entries whose names differ.
const std::map<std::string, std::string, std::less<>>& aliases() {
  static const std::map<std::string, std::string, std::less<>> table = {
      {"amax", "max"},
      {"amin", "min"},
  };
  return table;
}

// PyTorch's name of one of our parameters.
std::string_view torch_name(std::string_view field) {
  if (field == "axes" || field == "axis") return "dim";
  if (field == "axis1") return "dim1";
  if (field == "axis2") return "dim2";
  return field;
}

// PyTorch's default dim for an absent Axis parameter, per op and parameter.
std::optional<std::int64_t> torch_default_dim(std::string_view op, std::string_view field) {
  if (op == "diagonal") return field == "axis1" ? 0 : 1;
  return std::nullopt;
}

// The kinds a case's JSON arguments can carry.
bool mappable(prim::FieldKind k) {
  using K = prim::FieldKind;
  return k == K::Axes || k == K::Axis || k == K::Flag || k == K::Real || k == K::Int;
}

const prim::PrimitiveInfo* entry_for(const Case& c) {
  std::string_view name = c.op;
  if (const auto it = aliases().find(name); it != aliases().end()) name = it->second;
  if (name.starts_with("special_")) name.remove_prefix(8);
  const prim::PrimitiveInfo* info = prim::find_primitive(name);
  if (info == nullptr) return nullptr;
  // A binary op may come with one tensor and a Python number (build_op
  // supplies the second operand).
  const auto inputs = static_cast<std::int32_t>(c.inputs.size());
  if (info->arity != inputs && !(info->params == "Binary" && inputs == 1)) return nullptr;
  for (const prim::FieldInfo& f : info->fields)
    if (!mappable(f.kind)) return nullptr;
  return info;
}

// The parameters of `info` from the case's arguments (positionals in the
// entry's parameter order, keywords by PyTorch's names), for an input of `rank`.
std::vector<prim::NamedParam> params_of(const Case& c, const prim::PrimitiveInfo& info,
                                        std::int64_t rank) {
  std::vector<prim::NamedParam> params;
  for (std::size_t k = 0; k < info.fields.size(); ++k) {
    const prim::FieldInfo& f = info.fields[k];
    const std::string key(torch_name(f.name));
    const Json* v = arg(c, key.c_str(), static_cast<int>(k));
    switch (f.kind) {
      case prim::FieldKind::Axes: {
        const Axes axes = arg_axes(c, key.c_str(), static_cast<int>(k), rank);  // absent: all
        params.push_back({f.name, std::vector<std::int64_t>(axes.begin(), axes.end())});
        break;
      }
      case prim::FieldKind::Axis: {
        std::optional<std::int64_t> dim = torch_default_dim(c.op, f.name);
        if (v) dim = v->get<std::int64_t>();
        if (dim) params.push_back({f.name, dim_to_axis(*dim, rank)});
        break;
      }
      case prim::FieldKind::Flag:
        if (v) params.push_back({f.name, v->get<bool>()});
        break;
      case prim::FieldKind::Real:
        if (v) params.push_back({f.name, json_number(*v)});
        break;
      default:  // Int
        if (v) params.push_back({f.name, v->get<std::int64_t>()});
        break;
    }
  }
  return params;
}

}  // namespace

template <class T>
OpFn<T> build_catalog(const Case& c) {
  const prim::PrimitiveInfo* info = entry_for(c);
  if (info == nullptr) return {};
  // Every keyword must be a parameter (or PyTorch's accumulation dtype).
  for (const auto& [key, value] : c.kwargs.items()) {
    bool known = key == "dtype";
    for (const prim::FieldInfo& f : info->fields) known |= key == torch_name(f.name);
    if (!known) {
      throw std::runtime_error("argument " + key + " of " + c.op + " is not a parameter of " +
                               std::string(info->name));
    }
  }
  return [&c, info](std::span<const T> x) {
    std::vector<T> in(x.begin(), x.end());
    if (info->params == "Binary") {  // PyTorch's broadcasting (see pad_rank)
      const std::int64_t r = std::max(in[0].rank(), in[1].rank());
      for (T& t : in) t = pad_rank(t, r);
    }
    if (const Json* d = arg(c, "dtype", -1))
      in[0] = convert(in[0], dtype_from_name(d->get<std::string>()));
    const auto params = params_of(c, *info, in[0].rank());
    return apply<T>(make_primitive(info->name, params), in)[0];
  };
}

template OpFn<EagerTensor> build_catalog<EagerTensor>(const Case&);
template OpFn<TracedTensor> build_catalog<TracedTensor>(const Case&);

}  // namespace replay
