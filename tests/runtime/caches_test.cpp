#include <thread>

#include "runtime_fixtures.hpp"

using namespace rtest;
using Mode = ScriptedEngine::Mode;

TEST(PlanCache, HitMissCounts) {
  auto rt = make_runtime();
  rt->install_module(example::make_example_module());
  auto op = std::make_shared<example::ScaleBy>(2.0);
  rt->apply(op, {vec({1, 2})});
  rt->apply(op, {vec({3, 4})});                                       // same signature: hit
  rt->apply(std::make_shared<example::ScaleBy>(2.0), {vec({5, 6})});  // equal op: hit
  rt->apply(op, {vec({1, 2, 3})});                                    // new shape: miss
  rt->apply(std::make_shared<example::ScaleBy>(3.0), {vec({1, 2})});  // new params: miss
  auto s = rt->cache_stats().plans;
  EXPECT_EQ(s.misses, 3u);
  EXPECT_EQ(s.hits, 2u);
  EXPECT_EQ(s.entries, 3u);
  EXPECT_EQ(s.prepares, 3u);
  rt->clear_caches();
  EXPECT_EQ(rt->cache_stats().plans.entries, 0u);
}

TEST(PlanCache, LruEvictionAtCapacityOne) {
  auto rt = make_runtime(RuntimeOptions{1});
  auto engine = std::make_shared<ScriptedEngine>(Mode::Echo);
  rt->install_module(std::make_shared<OneFamilyModule>("t.m", "t.echo.v1", engine));
  auto op = std::make_shared<TestOp>("t.echo.v1", 1, 1);
  rt->apply(op, {vec({1})});
  rt->apply(op, {vec({1, 2})});  // evicts the first
  rt->apply(op, {vec({1})});     // prepared again
  auto s = rt->cache_stats().plans;
  EXPECT_EQ(s.entries, 1u);
  EXPECT_EQ(s.evictions, 2u);
  EXPECT_EQ(engine->prepares.load(), 3);
}

TEST(PlanCache, SingleFlightPreparesOnce) {
  auto rt = make_runtime();
  auto engine = std::make_shared<ScriptedEngine>(Mode::Slow);
  rt->install_module(std::make_shared<OneFamilyModule>("t.m", "t.slow.v1", engine));
  auto op = std::make_shared<TestOp>("t.slow.v1", 1, 1);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&] { rt->apply(op, {vec({1, 2})}); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(engine->prepares.load(), 1);
  auto s = rt->cache_stats().plans;
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.hits, 3u);
}

TEST(ExtensionCaches, TypedLruWithLimitsAndStats) {
  ExtensionCacheStore store;
  store.set_limits("f.a.v1", "plans", {2, 100});
  store.put<int>({"f.a.v1", "plans", "x"}, std::make_shared<const int>(1), 10);
  store.put<int>({"f.a.v1", "plans", "y"}, std::make_shared<const int>(2), 10);
  EXPECT_EQ(*store.get<int>({"f.a.v1", "plans", "x"}), 1);  // x is now most recent
  store.put<int>({"f.a.v1", "plans", "z"}, std::make_shared<const int>(3), 10);  // evicts y
  EXPECT_EQ(store.get<int>({"f.a.v1", "plans", "y"}), nullptr);
  auto s = store.stats();
  EXPECT_EQ(s.entries, 2u);
  EXPECT_EQ(s.bytes, 20u);
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.evictions, 1u);
  // Byte limit.
  store.put<int>({"f.a.v1", "plans", "big"}, std::make_shared<const int>(4), 95);
  EXPECT_LE(store.stats().bytes, 100u);
  EXPECT_EQ(store.stats().entries, 1u);
  // Wrong type is a typed error.
  EXPECT_TF_ERROR(store.get<double>({"f.a.v1", "plans", "big"}), ErrorKind::InvalidArgument);
  EXPECT_EQ(store.limits("f.a.v1", "plans").max_entries, 2u);
  EXPECT_EQ(store.limits("f.other.v1", "x").max_entries, 256u);  // default
}

TEST(ExtensionCaches, SelectorsClearWhatTheyName) {
  ExtensionCacheStore store;
  auto put = [&](const char* f, const char* c) {
    store.put<int>({f, c, "k"}, std::make_shared<const int>(0), 1);
  };
  put("f.a.v1", "one");
  put("f.a.v1", "two");
  put("f.b.v1", "one");
  EXPECT_EQ(store.stats(ExtensionCacheSelector::family("f.a.v1")).entries, 2u);
  store.clear(ExtensionCacheSelector::named("f.a.v1", "one"));
  EXPECT_EQ(store.stats().entries, 2u);
  EXPECT_EQ(store.stats(ExtensionCacheSelector::named("f.a.v1", "one")).clears, 1u);
  store.clear(ExtensionCacheSelector::family("f.b.v1"));
  EXPECT_EQ(store.stats().entries, 1u);
  store.clear();
  EXPECT_EQ(store.stats().entries, 0u);
  EXPECT_EQ(store.stats().clears, 5u);  // one per named cache per clear: 1 + 1 + 3
}

TEST(ExtensionCaches, RuntimeOwnsAndAggregatesFamilyCaches) {
  auto rt = make_runtime();
  rt->install_module(example::make_example_module());
  auto x = vec({1});
  rt->apply(std::make_shared<example::ScaleBy>(2.0), {x});
  rt->apply(std::make_shared<example::ScaleBy>(2.0), {x});
  rt->apply(std::make_shared<example::ScaleBy>(5.0), {x});
  auto s = rt->cache_stats().extensions;
  EXPECT_EQ(s.entries, 2u);  // one per k
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(
      *rt->extension_caches().get<int>({"example.scale_by.v1", "scales", std::to_string(2.0)}), 2);
  EXPECT_EQ(rt->extension_caches().limits("example.scale_by.v1", "scales").max_entries, 8u);
  rt->clear_caches(ExtensionCacheSelector::family("example.scale_by.v1"));
  EXPECT_EQ(rt->cache_stats().extensions.entries, 0u);
  EXPECT_GT(rt->cache_stats().plans.entries, 0u);  // plans untouched by a selector clear
}
