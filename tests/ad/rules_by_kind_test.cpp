// AdContext finds a core primitive's rules by its kind key (Op::kind_key()),
// not by its name: every primitive kind has one key, keys and names map one
// to one, and the lookup by key returns the rule set registered under the name.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "tenferro/ad/rules.hpp"
#include "tenferro/ops/primitives.hpp"

using namespace tenferro;

namespace {

// One PrimitiveOp of every kind: each parameter type value-initialised, every
// elementwise and reduction enumerator, and both values of each flag that
// changes the name.
template <std::size_t... I>
void add_defaults(std::vector<prim::Params>& out, std::index_sequence<I...>) {
  (out.emplace_back(std::variant_alternative_t<I, prim::Params>{}), ...);
}

std::vector<std::shared_ptr<const PrimitiveOp>> every_kind() {
  std::vector<prim::Params> params;
  add_defaults(params, std::make_index_sequence<std::variant_size_v<prim::Params>>{});
  for (int i = 0; i < kUnaryOpCount; ++i) params.emplace_back(prim::Unary{static_cast<UnaryOp>(i)});
  for (int i = 0; i < kBinaryOpCount; ++i)
    params.emplace_back(prim::Binary{static_cast<BinaryOp>(i)});
  for (std::size_t i = 0; i < std::size(kReduceOps); ++i)
    params.emplace_back(prim::Reduce{static_cast<ReduceOp>(i), {0}, false});
  for (const bool flag : {false, true}) {
    prim::Variance v;
    v.take_sqrt = flag;
    params.emplace_back(v);
    prim::ArgReduce a;
    a.is_max = flag;
    params.emplace_back(a);
    prim::Triangle t;
    t.lower = flag;
    params.emplace_back(t);
    prim::Convert c;
    c.lossy = flag;
    params.emplace_back(c);
    prim::Cumulative cu;
    cu.op = flag ? ReduceOp::Prod : ReduceOp::Sum;
    params.emplace_back(cu);
    prim::Argsort s;
    s.k = flag ? 2 : -1;
    params.emplace_back(s);
  }
  std::vector<std::shared_ptr<const PrimitiveOp>> ops;
  for (prim::Params& p : params) ops.push_back(make_primitive(std::move(p)));
  return ops;
}

}  // namespace

TEST(RulesByKind, KeysAndNamesCorrespondOneToOne) {
  std::map<std::int32_t, std::string> name_of_key;
  std::map<std::string, std::int32_t> key_of_name;
  for (const auto& op : every_kind()) {
    const std::int32_t key = op->kind_key();
    ASSERT_GE(key, 0) << op->name();
    ASSERT_LT(key, primitive_kind_count()) << op->name();
    const std::string nm(op->name());
    const auto [k, new_key] = name_of_key.try_emplace(key, nm);
    EXPECT_EQ(k->second, nm) << "key " << key << " is shared by two names";
    const auto [n, new_name] = key_of_name.try_emplace(nm, key);
    EXPECT_EQ(n->second, key) << nm << " has two keys";
  }
  // Every key is some kind's: the table has no unused slot.
  EXPECT_EQ(static_cast<std::int32_t>(name_of_key.size()), primitive_kind_count());
}

TEST(RulesByKind, LookupByKindMatchesLookupByName) {
  const auto ctx = ad::AdContext::with_core_rules();
  int with_rules = 0;
  for (const auto& op : every_kind()) {
    const ad::RuleSet* by_name = ctx->find(op->name());
    EXPECT_EQ(ctx->find(*op), by_name) << op->name();  // first lookup fills the slot
    EXPECT_EQ(ctx->find(*op), by_name) << op->name();  // the second reads it
    if (by_name != nullptr) ++with_rules;
  }
  // Every core primitive kind has its rules.
  EXPECT_EQ(with_rules, static_cast<int>(every_kind().size()));
}
