// Running a primitive: the input count, then the execute hook of its kind
// (src/ops/prim_*.cpp).

#include "tenferro/ops/primitives.hpp"

namespace tenferro {

namespace {

void check_input_count(std::string_view op, std::size_t expected, std::size_t count) {
  if (count != expected) {
    fail(ErrorKind::InvalidArgument, std::string(op), "expects ", expected, " input(s), got ",
         count);
  }
}

Tensor run(const prim::Params& params, const prim::Operands& in, Backend& backend,
           const DimBindings& bindings) {
  return std::visit(
      [&](const auto& p) { return std::decay_t<decltype(p)>::execute(p, in, backend, bindings); },
      params);
}

}  // namespace

Tensor execute(const prim::Params& params, const prim::Operands& inputs, Backend& backend,
               const DimBindings& bindings) {
  return std::visit(
      [&](const auto& p) {
        using P = std::decay_t<decltype(p)>;
        std::size_t expected = 0;
        if constexpr (std::is_same_v<P, prim::Concatenate>) {
          expected = p.count;
        } else {
          expected = static_cast<std::size_t>(P::kArity);
        }
        if (inputs.size() != expected) {
          if constexpr (requires { P::kKinds; }) {
            check_input_count(P::kind_name(P::kind_of(p)), expected, inputs.size());
          } else {
            check_input_count(P::kName, expected, inputs.size());
          }
        }
        return P::execute(p, inputs, backend, bindings);
      },
      params);
}

Tensor execute_primitive(const PrimitiveOp& op, std::span<const Tensor> inputs, Backend& backend,
                         const DimBindings& bindings) {
  check_input_count(op.name(), op.input_count(), inputs.size());
  return run(op.params(), prim::Operands{inputs, {}}, backend, bindings);
}

namespace detail {

Tensor execute_primitive_refs(const PrimitiveOp& op, std::span<const Tensor* const> inputs,
                              Backend& backend) {
  check_input_count(op.name(), op.input_count(), inputs.size());
  static const DimBindings kNone;
  return run(op.params(), prim::Operands{{}, inputs}, backend, kNone);
}

}  // namespace detail

}  // namespace tenferro
