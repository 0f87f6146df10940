#include "tenferro/ops/op.hpp"

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

std::vector<LoweringBuilder::Value> ExtensionOp::lower(
    LoweringBuilder&, std::span<const LoweringBuilder::Value>) const {
  fail(ErrorKind::Unsupported, std::string(name()),
       "this family has no lowering to core primitives");
}

}  // namespace tenferro
