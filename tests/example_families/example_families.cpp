#include "example_families/example_families.hpp"

#include <functional>

namespace example {

using tenferro::Tensor;

std::size_t hash_value(const ScaleParams& p) {
  return std::hash<double>{}(p.k);
}

tenferro::InferenceResult ScaleBy::infer(std::span<const tenferro::TensorMeta> inputs) const {
  if (!tenferro::is_inexact(inputs[0].dtype)) {
    tenferro::fail(tenferro::ErrorKind::DTypeMismatch, std::string(name()),
                   "needs a floating or complex input, got ", tenferro::name(inputs[0].dtype));
  }
  return {{inputs[0]}, {}};
}

tenferro::InferenceResult Swap::infer(std::span<const tenferro::TensorMeta> inputs) const {
  if (inputs[0].dtype != inputs[1].dtype) {
    tenferro::fail(tenferro::ErrorKind::DTypeMismatch, std::string(name()),
                   "inputs differ in dtype");
  }
  return {{inputs[1], inputs[0]}, {tenferro::ShapeConstraint::same_shape(0, 1)}};
}

namespace {
template <class T>
void scale(const T* in, T* out, std::int64_t n, double k) {
  const T factor = tenferro::Scalar(k).to<T>();
  for (std::int64_t i = 0; i < n; ++i) out[i] = in[i] * factor;
}
}  // namespace

std::shared_ptr<tenferro::SimpleModule> make_example_module() {
  auto module = std::make_shared<tenferro::SimpleModule>("example.families");
  module->family<ScaleBy>([](const ScaleBy& op, tenferro::ExecutionScope& scope,
                             tenferro::ExtensionCaches& caches, std::span<const Tensor> in) {
    // The kernel wants compact data: ask for it explicitly, once.
    Tensor x = scope.compact(in[0]);
    Tensor y = scope.backend().empty(x.shape(), x.dtype());
    const std::int64_t n = x.numel();
    switch (x.dtype()) {
      case tenferro::DType::F32:
        scale(x.data<float>(), y.mutable_data<float>(), n, op.k());
        break;
      case tenferro::DType::F64:
        scale(x.data<double>(), y.mutable_data<double>(), n, op.k());
        break;
      case tenferro::DType::C64:
        scale(x.data<tenferro::c64_t>(), y.mutable_data<tenferro::c64_t>(), n, op.k());
        break;
      case tenferro::DType::C128:
        scale(x.data<tenferro::c128_t>(), y.mutable_data<tenferro::c128_t>(), n, op.k());
        break;
      default:
        tenferro::fail(tenferro::ErrorKind::DTypeMismatch, "example.scale_by.v1",
                       "unsupported dtype");
    }
    auto count = caches.get<int>("scales", std::to_string(op.k()));
    caches.put<int>("scales", std::to_string(op.k()),
                    std::make_shared<const int>(count ? *count + 1 : 1), sizeof(int));
    return std::vector<Tensor>{y};
  });
  module->family<Swap>([](const Swap&, tenferro::ExecutionScope&, tenferro::ExtensionCaches&,
                          std::span<const Tensor> in) {
    return std::vector<Tensor>{in[1], in[0]};  // borrowed, no copy
  });
  module->cache(tenferro::FamilyId("example.scale_by.v1"), "scales", {8, 1024});
  return module;
}

}  // namespace example
