// Internal helpers under the eager tier's hot path: the thread-local object
// pool (tensor/object_pool.hpp) and the allocation-free stable sort
// (tensor/small_sort.hpp).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "../../src/tensor/object_pool.hpp"
#include "../../src/tensor/small_sort.hpp"

namespace {

using tenferro::detail::kPooledMaxBytes;
using tenferro::detail::make_pooled;
using tenferro::detail::pool_allocate;
using tenferro::detail::pool_deallocate;
using tenferro::detail::PooledVector;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif

TEST(SmallStableSort, SamePermutationAsStdStableSort) {
  std::mt19937 gen(7);
  for (int n = 0; n <= 40; ++n) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<std::pair<int, int>> v(static_cast<std::size_t>(n));
      std::uniform_int_distribution<int> key(0, 1 + n / 3);  // many equal keys
      for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = {key(gen), i};
      auto expected = v;
      auto by_key = [](const auto& a, const auto& b) { return a.first < b.first; };
      std::stable_sort(expected.begin(), expected.end(), by_key);
      tenferro::detail::small_stable_sort(v.begin(), v.end(), by_key);
      ASSERT_EQ(v, expected) << "n = " << n << ", trial " << trial;
    }
  }
}

TEST(ObjectPool, FreedBlocksAreReusedWithinTheirSizeClass) {
  if (kAsan) GTEST_SKIP() << "under AddressSanitizer the pool passes through to operator new";
  void* a = pool_allocate(100);
  std::memset(a, 0xAB, 100);
  pool_deallocate(a, 100);
  void* b = pool_allocate(120);  // the same 128-byte class: the block just freed
  EXPECT_EQ(a, b);
  std::memset(b, 0xCD, 120);
  void* c = pool_allocate(300);  // another class: another block
  EXPECT_NE(b, c);
  pool_deallocate(c, 300);
  pool_deallocate(b, 120);
}

TEST(ObjectPool, LargeBlocksAndManyBlocksStayUsable) {
  std::vector<std::pair<void*, std::size_t>> blocks;
  for (std::size_t i = 0; i < 5000; ++i) {  // more than a list keeps of the small classes
    const std::size_t bytes = 1 + (i * 37) % (2 * kPooledMaxBytes);
    void* p = pool_allocate(bytes);
    std::memset(p, static_cast<int>(i & 0xFF), bytes);
    blocks.emplace_back(p, bytes);
  }
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const auto* p = static_cast<const unsigned char*>(blocks[i].first);
    ASSERT_EQ(p[0], i & 0xFF);
    ASSERT_EQ(p[blocks[i].second - 1], i & 0xFF);
  }
  for (auto [p, bytes] : blocks) pool_deallocate(p, bytes);
}

TEST(ObjectPool, BlocksCrossThreadsAndThreadsReleaseTheirLists) {
  // Made here, freed on a worker (joining its list), which then exits.
  std::vector<void*> made;
  for (int i = 0; i < 300; ++i) {
    void* p = pool_allocate(200);
    std::memset(p, 1, 200);
    made.push_back(p);
  }
  std::thread worker([&] {
    for (void* p : made) pool_deallocate(p, 200);
    void* q = pool_allocate(200);  // from the worker's list now
    std::memset(q, 2, 200);
    pool_deallocate(q, 200);
  });
  worker.join();
  int destroyed = 0;
  struct Counted {
    int* count;
    explicit Counted(int* c) : count(c) {}
    ~Counted() { ++*count; }
  };
  std::thread other([&] {
    auto s = make_pooled<Counted>(&destroyed);
    std::weak_ptr<Counted> w = s;
    s.reset();
    EXPECT_TRUE(w.expired());
  });
  other.join();
  EXPECT_EQ(destroyed, 1);
}

TEST(ObjectPool, PooledVectorsGrowPastThePooledSizes) {
  PooledVector<long> v;
  for (long i = 0; i < 1000; ++i) v.push_back(i * i);  // 8000 bytes: past the pool
  long sum = 0;
  for (long x : v) sum += x;
  EXPECT_EQ(sum, 332833500);
  v.clear();
  v.shrink_to_fit();
  EXPECT_EQ(v.capacity(), 0u);
}

}  // namespace
