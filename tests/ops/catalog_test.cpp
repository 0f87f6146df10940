// The primitive catalog: every kind enumerated once, with the facts its
// parameter struct declares, construction by name, and the AD rules every
// entry has.

#include <set>

#include "tenferro/ad/rules.hpp"
#include "tenferro/ops/catalog.hpp"
#include "test_util.hpp"

using namespace tenferro;

namespace {

std::vector<std::string> field_names(const prim::PrimitiveInfo& info) {
  std::vector<std::string> names;
  for (const auto& f : info.fields) names.emplace_back(f.name);
  return names;
}

}  // namespace

TEST(PrimitiveCatalog, EnumeratesEveryKindOnceByKey) {
  const auto catalog = prim::primitive_catalog();
  ASSERT_EQ(static_cast<std::int32_t>(catalog.size()), primitive_kind_count());
  std::set<std::string_view> names, structs;
  for (std::size_t k = 0; k < catalog.size(); ++k) {
    const prim::PrimitiveInfo& info = catalog[k];
    EXPECT_EQ(info.kind_key, static_cast<std::int32_t>(k));
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate name " << info.name;
    EXPECT_EQ(prim::find_primitive(info.name), &info);
    EXPECT_FALSE(info.dtypes.empty()) << info.name;
    EXPECT_FALSE(info.functions.empty()) << info.name;
    EXPECT_FALSE(info.params.empty()) << info.name;
    // An op built from the entry by name has the entry's name, key and arity.
    auto op = make_primitive(info.name, {});
    EXPECT_EQ(op->name(), info.name);
    EXPECT_EQ(op->kind_key(), info.kind_key);
    if (info.arity >= 0) {
      EXPECT_EQ(op->input_count(), static_cast<std::size_t>(info.arity)) << info.name;
    }
    structs.insert(info.params);
  }
  // 28 parameter structs: one entry per elementwise op, the 8 reductions, 2
  // each for var/std, argmax/argmin, tril/triu, convert/cast, cumsum/cumprod
  // and argsort/topk, and 1 for each of the other 19.
  EXPECT_EQ(structs.size(), std::variant_size_v<prim::Params>);
  EXPECT_EQ(structs.size(), 28u);
  EXPECT_EQ(catalog.size(),
            static_cast<std::size_t>(kUnaryOpCount + kBinaryOpCount + 8 + 2 * 6 + 19));
  EXPECT_EQ(prim::find_primitive("no_such_primitive"), nullptr);
}

TEST(PrimitiveCatalog, EntriesListTheParametersACallerSets) {
  // The parameter that selects the kind (sum's ReduceOp) is not listed.
  const auto* sum = prim::find_primitive("sum");
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(sum->params, "Reduce");
  EXPECT_EQ(field_names(*sum), (std::vector<std::string>{"axes", "keepdim"}));
  EXPECT_EQ(sum->fields[0].kind, prim::FieldKind::Axes);
  EXPECT_EQ(sum->fields[1].kind, prim::FieldKind::Flag);
  EXPECT_EQ(sum->arity, 1);

  const auto* pad = prim::find_primitive("pad");
  ASSERT_NE(pad, nullptr);
  EXPECT_EQ(field_names(*pad), (std::vector<std::string>{"low", "high", "interior", "value"}));
  EXPECT_EQ(pad->fields[3].kind, prim::FieldKind::Scalar);
  EXPECT_EQ(pad->functions, (std::vector<std::string_view>{"pad"}));

  const auto* std_dev = prim::find_primitive("std");
  ASSERT_NE(std_dev, nullptr);
  EXPECT_EQ(field_names(*std_dev), (std::vector<std::string>{"axes", "correction", "keepdim"}));
  EXPECT_EQ(std_dev->functions, (std::vector<std::string_view>{"std_dev"}));

  const auto* add = prim::find_primitive("add");
  ASSERT_NE(add, nullptr);
  EXPECT_TRUE(add->fields.empty());
  EXPECT_EQ(add->arity, 2);

  const auto* dot = prim::find_primitive("dot_general");
  ASSERT_NE(dot, nullptr);
  EXPECT_EQ(field_names(*dot), (std::vector<std::string>{"lhs_contracting", "rhs_contracting",
                                                         "lhs_batch", "rhs_batch"}));
  EXPECT_EQ(prim::find_primitive("concatenate")->arity, -1);
  EXPECT_EQ(prim::find_primitive("full")->arity, 0);
  // Internal elementwise ops are reached through unary()/binary() only.
  EXPECT_EQ(prim::find_primitive("frexp_mantissa")->functions,
            (std::vector<std::string_view>{"unary"}));
}

TEST(PrimitiveCatalog, ConstructionByNameEqualsTheStruct) {
  using prim::NamedParam;
  const NamedParam sum_params[] = {{"axes", std::vector<std::int64_t>{0, 1}}, {"keepdim", true}};
  auto by_name = make_primitive("sum", sum_params);
  auto by_struct = make_primitive(prim::Reduce{ReduceOp::Sum, {0, 1}, true});
  EXPECT_TRUE(by_name->equals(*by_struct));
  EXPECT_EQ(by_name->hash(), by_struct->hash());
  EXPECT_EQ(by_name->describe(), "sum(axes=[0, 1], keepdim=true)");

  const NamedParam pad_params[] = {{"low", std::vector<std::int64_t>{1}},
                                   {"high", std::vector<std::int64_t>{2}},
                                   {"interior", std::vector<std::int64_t>{0}},
                                   {"value", 1.5}};
  EXPECT_TRUE(make_primitive("pad", pad_params)
                  ->equals(PrimitiveOp(prim::Pad{{1}, {2}, {0}, Scalar(1.5)})));

  // Integers convert to reals and scalars; none clears an optional scalar.
  const NamedParam var_params[] = {{"axes", std::vector<std::int64_t>{0}},
                                   {"correction", std::int64_t{0}}};
  EXPECT_TRUE(make_primitive("var", var_params)->equals(PrimitiveOp(prim::Variance{{0}, 0.0})));
  const NamedParam clamp_params[] = {{"lo", std::int64_t{2}}, {"hi", std::monostate{}}};
  EXPECT_TRUE(make_primitive("clamp", clamp_params)
                  ->equals(PrimitiveOp(prim::Clamp{Scalar(std::int64_t{2}), std::nullopt})));
  // The kind comes from the name: cast is a lossy Convert, tril a lower Triangle.
  const NamedParam cast_params[] = {{"dtype", DType::I32}};
  EXPECT_TRUE(
      make_primitive("cast", cast_params)->equals(PrimitiveOp(prim::Convert{DType::I32, true})));
  EXPECT_TRUE(make_primitive("triu", {})->equals(PrimitiveOp(prim::Triangle{false, 0})));
  const NamedParam reshape_params[] = {{"shape", SymShape{SymDim::var("n"), 2}}};
  EXPECT_EQ(make_primitive("reshape", reshape_params)->describe(), "reshape(shape=[n, 2])");
}

TEST(PrimitiveCatalog, ConstructionByNameRefusesWhatTheEntryDoesNotTake) {
  using prim::NamedParam;
  EXPECT_TF_ERROR(make_primitive("no_such_primitive", {}), ErrorKind::InvalidArgument);
  const NamedParam unknown[] = {{"dim", std::int64_t{0}}};
  EXPECT_TF_ERROR(make_primitive("sum", unknown), ErrorKind::InvalidArgument);
  const NamedParam wrong_kind[] = {{"keepdim", std::vector<std::int64_t>{1}}};
  EXPECT_TF_ERROR(make_primitive("sum", wrong_kind), ErrorKind::InvalidArgument);
  const NamedParam negative_count[] = {{"count", std::int64_t{-1}}};
  EXPECT_TF_ERROR(make_primitive("concatenate", negative_count), ErrorKind::InvalidArgument);
  // The kind-selecting parameter is fixed by the name.
  const NamedParam kind_param[] = {{"lossy", false}};
  EXPECT_TF_ERROR(make_primitive("cast", kind_param), ErrorKind::InvalidArgument);
  try {
    make_primitive("sum", unknown);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("axes, keepdim"), std::string::npos) << e.what();
  }
}

TEST(PrimitiveCatalog, EveryEntryHasAdRules) {
  const auto ctx = ad::AdContext::with_core_rules();
  for (const prim::PrimitiveInfo& info : prim::primitive_catalog()) {
    const ad::RuleSet* rules = ctx->find(info.name);
    ASSERT_NE(rules, nullptr) << info.name;
    EXPECT_TRUE(rules->jvp || rules->vjp || rules->transpose || rules->non_differentiable)
        << info.name;
  }
}
