#include "tenferro/ops/op.hpp"

#include <cctype>

#include "tenferro/core/error.hpp"
#include "tenferro/ops/extension_op.hpp"
#include "tenferro/tensor/tensor.hpp"

namespace tenferro {

ShapeConstraint ShapeConstraint::same_shape(std::size_t i, std::size_t j) {
  ShapeConstraint c;
  c.kind = Kind::SameShape;
  c.lhs_input = i;
  c.rhs_input = j;
  c.what =
      "inputs " + std::to_string(i) + " and " + std::to_string(j) + " must have the same shape";
  return c;
}

ShapeConstraint ShapeConstraint::dims_equal(SymDim a, SymDim b, std::string what) {
  ShapeConstraint c;
  c.kind = Kind::DimEqual;
  c.lhs_dim = std::move(a);
  c.rhs_dim = std::move(b);
  c.what = std::move(what);
  return c;
}

void check_constraints(std::string_view op_name, std::span<const ShapeConstraint> constraints,
                       std::span<const Shape> input_shapes, const DimBindings& bindings) {
  for (const auto& c : constraints) {
    if (c.kind == ShapeConstraint::Kind::SameShape) {
      if (c.lhs_input >= input_shapes.size() || c.rhs_input >= input_shapes.size()) {
        fail(ErrorKind::Internal, std::string(op_name), "constraint names input ",
             std::max(c.lhs_input, c.rhs_input), " but the op has ", input_shapes.size());
      }
      const Shape& a = input_shapes[c.lhs_input];
      const Shape& b = input_shapes[c.rhs_input];
      if (!(a == b)) {
        fail(ErrorKind::ShapeMismatch, std::string(op_name), c.what, ": got ", shape_to_string(a),
             " and ", shape_to_string(b));
      }
    } else {
      const std::int64_t a = c.lhs_dim.evaluate(bindings);
      const std::int64_t b = c.rhs_dim.evaluate(bindings);
      if (a != b) {
        fail(ErrorKind::ShapeMismatch, std::string(op_name), c.what, ": ", c.lhs_dim.to_string(),
             " = ", a, " but ", c.rhs_dim.to_string(), " = ", b);
      }
    }
  }
}

namespace {
// <segment>.<segment>[.<segment>...].v<N>: at least a library, a name and a version.
void validate_id(const std::string& id, const char* what) {
  auto bad = [&](const std::string& why) {
    fail(ErrorKind::InvalidArgument, what, "malformed id '", id, "': ", why,
         " (expected <library>.<name>.v<N>, lowercase [a-z0-9_], e.g. mylib.scale_by.v1)");
  };
  std::vector<std::string> parts;
  std::string cur;
  for (char c : id) {
    if (c == '.') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  if (parts.size() < 3) bad("needs at least three dot-separated parts");
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string& p = parts[i];
    if (p.empty()) bad("empty segment");
    if (!std::islower(static_cast<unsigned char>(p[0])))
      bad("segment '" + p + "' must start with a lowercase letter");
    for (char c : p) {
      if (!(std::islower(static_cast<unsigned char>(c)) ||
            std::isdigit(static_cast<unsigned char>(c)) || c == '_')) {
        bad("segment '" + p + "' has character '" + std::string(1, c) + "'");
      }
    }
  }
  const std::string& v = parts.back();
  if (v.size() < 2 || v[0] != 'v') bad("last segment must be a version v<N>");
  for (std::size_t i = 1; i < v.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(v[i]))) bad("version '" + v + "' is not v<N>");
  }
  if (v[1] == '0') bad("version must be >= 1 without leading zeros");
}
}  // namespace

FamilyId::FamilyId(std::string id) : id_(std::move(id)) {
  validate_id(id_, "family_id");
}

std::string_view FamilyId::library() const {
  return std::string_view(id_).substr(0, id_.find('.'));
}

int FamilyId::version() const {
  return std::stoi(id_.substr(id_.rfind('.') + 2));
}

EngineId::EngineId(std::string id) : id_(std::move(id)) {
  validate_id(id_, "engine_id");
}

std::vector<LoweringBuilder::Value> ExtensionOp::lower(
    LoweringBuilder&, std::span<const LoweringBuilder::Value>) const {
  fail(ErrorKind::Unsupported, std::string(name()),
       "this family has no lowering to core primitives");
}

}  // namespace tenferro
