#pragma once
// Extension operations: families defined outside the core. A family id has
// the form <library>.<op>.v<N>, e.g. "mylib.scale_by.v1".

#include <concepts>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <typeinfo>

#include "tenferro/core/id.hpp"
#include "tenferro/ops/op.hpp"

namespace tenferro {

/// Builds primitive calls for a lowering; the runtime supplies one that
/// executes immediately, the tracer one that records graph nodes.
class LoweringBuilder {
 public:
  struct Value {
    std::size_t id = 0;
    TensorMeta meta;
  };
  virtual ~LoweringBuilder() = default;
  virtual std::vector<Value> emit(const OpPtr& op, std::span<const Value> inputs) = 0;
};

class ExtensionOp : public Op {
 public:
  virtual const FamilyId& family_id() const = 0;
  std::string_view name() const override { return family_id().str(); }
  bool is_extension() const override { return true; }
  /// Optional serialisation of the parameters (for caches that persist).
  virtual std::optional<std::string> serialize() const { return std::nullopt; }
  /// Optional lowering to core primitives.
  virtual bool has_lowering() const { return false; }
  virtual std::vector<LoweringBuilder::Value> lower(
      LoweringBuilder& builder, std::span<const LoweringBuilder::Value> inputs) const;
};

using ExtensionOpPtr = std::shared_ptr<const ExtensionOp>;

/// Authoring helper: an extension op whose parameters are a struct with
/// operator== and a hash (provide `std::size_t hash_value(const Params&)`
/// found by ADL, or use a Params with no fields). The derived class supplies
/// counts and infer():
///
///   struct ScaleParams { double k; bool operator==(const ScaleParams&) const = default; };
///   std::size_t hash_value(const ScaleParams& p) { return std::hash<double>{}(p.k); }
///   class ScaleBy : public tenferro::ExtensionOpWithParams<ScaleBy, ScaleParams> { ... };
/// An op type that names its family once, as a static member:
///   static constexpr std::string_view kFamily = "mylib.scale_by.v1";
/// ExtensionOpWithParams and SimpleModule::family then take the id from it,
/// so it is never written twice.
template <class OpT>
concept HasFamilyId = requires {
  { OpT::kFamily } -> std::convertible_to<std::string_view>;
};

template <class Derived, class Params>
class ExtensionOpWithParams : public ExtensionOp {
 public:
  ExtensionOpWithParams(std::string family_id, Params params)
      : family_(std::move(family_id)), params_(std::move(params)) {}
  /// The family id from Derived::kFamily (see HasFamilyId).
  explicit ExtensionOpWithParams(Params params) requires requires {
    Derived::kFamily;
  } : family_(std::string(Derived::kFamily)), params_(std::move(params)) {
  }
  const FamilyId& family_id() const override { return family_; }
  const Params& params() const { return params_; }
  std::size_t hash() const override {
    return hash_combine(std::hash<std::string>{}(family_.str()), hash_value(params_));
  }
  bool equals(const Op& other) const override {
    if (typeid(other) != typeid(Derived)) return false;
    const auto& o = static_cast<const Derived&>(other);
    return family_ == o.family_ && params_ == o.params_;
  }

 private:
  FamilyId family_;
  Params params_;
};

/// Parameters for families without parameters.
struct NoParams {
  bool operator==(const NoParams&) const = default;
};
inline std::size_t hash_value(const NoParams&) {
  return 0;
}

}  // namespace tenferro
