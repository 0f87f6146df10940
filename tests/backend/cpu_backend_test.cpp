#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../../src/cpu/thread_pool.hpp"
#include "test_util.hpp"

using namespace tenferro;

TEST(CpuBackend, PooledAllocationReusesBuffers) {
  CpuBackend cpu(CpuBackendOptions{1, 1 << 20, 1 << 16});
  {
    auto a = cpu.empty({100}, f64);
    EXPECT_TRUE(a.is_contiguous());
    EXPECT_EQ(a.numel(), 100);
  }
  auto s = cpu.pool_stats();
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.returns, 1u);
  EXPECT_EQ(s.cached_buffers, 1u);
  auto b = cpu.empty({90}, f64);  // same size class (1 KiB)
  s = cpu.pool_stats();
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.cached_buffers, 0u);
  cpu.reset_pool();
  EXPECT_EQ(cpu.pool_stats().hits, 0u);
}

TEST(CpuBackend, PoolIsBounded) {
  CpuBackend cpu(CpuBackendOptions{1, 4096, 1 << 16});
  { auto a = cpu.empty({10000}, f64); }  // 80 KB > bound: freed, not kept
  auto s = cpu.pool_stats();
  EXPECT_EQ(s.drops, 1u);
  EXPECT_EQ(s.cached_bytes, 0u);
  EXPECT_LE(s.cached_bytes, s.max_bytes);
}

// Above 1 MiB a class is a quarter octave: 1.3 MiB takes the 1.5 MiB class
// (counted as such), a 1.4 MiB request reuses it, 1.6 MiB (1.75 MiB class)
// does not; 2 MiB is a class of its own. The default limit keeps 2 GiB.
TEST(CpuBackend, LargeBuffersTakeQuarterOctaveClasses) {
  EXPECT_EQ(CpuBackendOptions{}.pool_max_bytes, std::size_t{2} << 30);
  CpuBackend cpu(CpuBackendOptions{1});
  constexpr std::int64_t kMiB = (1 << 20) / 8;  // f64 elements per MiB
  { auto a = cpu.empty({kMiB * 13 / 10}, f64); }
  auto s = cpu.pool_stats();
  EXPECT_EQ(s.cached_bytes, std::size_t{3} << 19);  // 1.5 MiB
  { auto b = cpu.empty({kMiB * 14 / 10}, f64); }
  s = cpu.pool_stats();
  EXPECT_EQ(s.hits, 1u);
  { auto c = cpu.empty({kMiB * 16 / 10}, f64); }
  s = cpu.pool_stats();
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.misses, 2u);
  EXPECT_EQ(s.cached_bytes, (std::size_t{3} << 19) + (std::size_t{7} << 18));  // + 1.75 MiB
  { auto d = cpu.empty({kMiB * 2}, f64); }
  s = cpu.pool_stats();
  EXPECT_EQ(s.misses, 3u);
  EXPECT_EQ(s.cached_buffers, 3u);
  { auto e = cpu.empty({kMiB * 2}, f64); }
  EXPECT_EQ(cpu.pool_stats().hits, 2u);
}

TEST(CpuBackend, TensorsOutliveTheBackend) {
  Tensor t, u;
  {
    CpuBackend cpu;
    t = cpu.empty({4}, f64);
    t.mutable_data<double>()[3] = 7;
    u = cpu.empty({1000}, f64);
    { Tensor cached = cpu.empty({8}, f64); }  // returned to the pool while it lives
    EXPECT_EQ(cpu.pool_stats().cached_buffers, 1u);
  }
  // The closed pool takes nothing back: the buffers are freed as the tensors
  // go (the sanitizer build's leak check fails the test otherwise).
  EXPECT_EQ(t.numel(), 4);
  EXPECT_EQ(t.data<double>()[3], 7);
  u = Tensor();
  t = Tensor();
}

TEST(CpuBackend, SessionReentryIsTypedError) {
  CpuBackend cpu(CpuBackendOptions{1});
  auto s = cpu.session();
  EXPECT_EQ(CpuSession::current(cpu), s.get());
  EXPECT_TF_ERROR(cpu.session(), ErrorKind::RuntimeState);
  CpuBackend other(CpuBackendOptions{1});
  {
    auto s2 = other.session();  // another backend nests fine
    EXPECT_EQ(CpuSession::current(other), s2.get());
  }
  EXPECT_EQ(CpuSession::current(other), nullptr);
  { ScopedCpuSession reuse(cpu); }  // reuses the open session instead of failing
  s.reset();
  EXPECT_EQ(CpuSession::current(cpu), nullptr);
}

TEST(CpuBackend, ParallelForCoversRangeOnceAndPropagatesErrors) {
  CpuBackend cpu(CpuBackendOptions{2});
  EXPECT_EQ(cpu.num_threads(), 2);
  std::vector<std::atomic<int>> hits(1000);
  cpu.parallel_for(1000, 10, [&](std::int64_t b, std::int64_t e) {
    for (auto i = b; i < e; ++i) hits[static_cast<std::size_t>(i)]++;
  });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  // Jobs of up to 64 chunks give each thread its own chunks first (3 threads:
  // 12 chunks); larger ones (20 threads: 80 chunks) take them in turn. Either
  // way every element runs once, in every one of many jobs in a row.
  for (int threads : {3, 20}) {
    CpuBackend many(CpuBackendOptions{threads});
    std::vector<std::atomic<int>> seen(1000);
    for (int round = 0; round < 50; ++round) {
      many.parallel_for(1000, 10, [&](std::int64_t b, std::int64_t e) {
        for (auto i = b; i < e; ++i) seen[static_cast<std::size_t>(i)]++;
      });
    }
    for (auto& h : seen) EXPECT_EQ(h.load(), 50) << threads << " threads";
  }
  EXPECT_TF_ERROR(cpu.parallel_for(100, 1,
                                   [&](std::int64_t b, std::int64_t) {
                                     if (b > 0) fail(ErrorKind::Internal, "body", "boom");
                                   }),
                  ErrorKind::Internal);
  // Nested parallel_for runs serially (one level of parallelism).
  std::atomic<int> inner_calls{0};
  cpu.parallel_for(4, 1, [&](std::int64_t, std::int64_t) {
    cpu.parallel_for(100, 1, [&](std::int64_t b, std::int64_t e) {
      EXPECT_EQ(b, 0);
      EXPECT_EQ(e, 100);
      inner_calls++;
    });
  });
  // Four chunks (up to four per thread, for balance when a thread starts late).
  EXPECT_EQ(inner_calls.load(), 4);
  cpu.set_num_threads(1);
  EXPECT_EQ(cpu.num_threads(), 1);
  EXPECT_TF_ERROR(cpu.set_num_threads(-1), ErrorKind::InvalidArgument);
}

TEST(CpuBackend, ConcurrentUsersFromTwoThreads) {
  CpuBackend cpu(CpuBackendOptions{2});
  std::atomic<std::int64_t> total{0};
  auto work = [&] {
    for (int r = 0; r < 50; ++r) {
      ScopedCpuSession session(cpu);
      auto t = cpu.empty({64}, f64);
      cpu.parallel_for(64, 8, [&](std::int64_t b, std::int64_t e) { total += e - b; });
    }
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  EXPECT_EQ(total.load(), 2 * 50 * 64);
}

TEST(CpuBackend, AttachmentsAreMadeOnceAndReleasedWithTheBackend) {
  std::weak_ptr<void> kept;
  std::atomic<int> made{0};
  {
    CpuBackend cpu({.num_threads = 2});
    auto make = [&]() -> std::shared_ptr<void> {
      ++made;
      return std::make_shared<int>(42);
    };
    std::vector<std::shared_ptr<void>> got(4);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < got.size(); ++t)
      threads.emplace_back([&, t] { got[t] = cpu.attachment("test.value", make); });
    for (auto& t : threads) t.join();
    for (const auto& g : got) EXPECT_EQ(g, got[0]);  // racing threads get one object
    EXPECT_GE(made.load(), 1);
    EXPECT_EQ(*std::static_pointer_cast<int>(cpu.attachment("test.value", make)), 42);
    const int after_race = made.load();
    (void)cpu.attachment("test.value", make);
    EXPECT_EQ(made.load(), after_race);  // warm: not made again
    EXPECT_NE(cpu.attachment("test.other", make), got[0]);
    kept = got[0];
    got.clear();
    EXPECT_FALSE(kept.expired());  // the backend holds it
  }
  EXPECT_TRUE(kept.expired());  // released with the backend
}

// Blocks of 4 MiB and more carry the transparent-huge-page advice (the
// mapping's VmFlags in /proc/self/smaps show "hg"); smaller ones do not ask.
namespace {
// The VmFlags of the mapping holding address p ("" when not found).
std::string vm_flags_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    const auto dash = line.find('-');
    const auto space = line.find(' ');
    if (dash != std::string::npos && space != std::string::npos && dash < space &&
        line.find_first_not_of("0123456789abcdef") == dash) {
      const auto lo = std::stoull(line.substr(0, dash), nullptr, 16);
      const auto hi = std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16);
      inside = lo <= at && at < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}
}  // namespace

const int kProbe = 0;  // an address in a mapping of this program

TEST(CpuBackend, LargeBlocksAskForHugePages) {
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled") ||
      vm_flags_of(&kProbe).empty()) {
    GTEST_SKIP() << "no transparent huge pages or no /proc/self/smaps here";
  }
  CpuBackend cpu({.num_threads = 1});
  const Tensor big = cpu.empty(Shape{std::int64_t{1} << 20}, f64);  // 8 MiB
  const auto* mid = static_cast<const char*>(big.raw_data()) + (std::size_t{1} << 22);
  EXPECT_NE(vm_flags_of(mid).find(" hg"), std::string::npos) << vm_flags_of(mid);
  const Tensor heap = zeros({std::int64_t{1} << 20}, f64);  // tensor storage, same allocator
  const auto* mid2 = static_cast<const char*>(heap.raw_data()) + (std::size_t{1} << 22);
  EXPECT_NE(vm_flags_of(mid2).find(" hg"), std::string::npos) << vm_flags_of(mid2);
  EXPECT_EQ(big.to_vector<double>().size(), std::size_t{1} << 20);
}

TEST(ThreadPool, ParkSendsTheSpinningWorkerToSleep) {
  // A spin far longer than the test: only park() ends it.
  tenferro::detail::ThreadPool pool(2, std::chrono::minutes(10));
  std::vector<std::atomic<int>> hits(4);
  const std::function<void(std::int64_t)> job = [&](std::int64_t i) {
    hits[static_cast<std::size_t>(i)]++;
  };
  pool.run(4, job);
  const std::uint64_t before = pool.sleeps();
  // Between jobs the worker keeps watching for the next one...
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(pool.sleeps(), before);
  // ...until a caller parks the pool before handing the cores to BLAS or FFTW.
  pool.park();
  std::uint64_t after = before;
  for (int i = 0; i < 6000 && after == before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    after = pool.sleeps();
  }
  EXPECT_EQ(after, before + 1);
  // A parked worker is woken by the next job; every chunk still runs once.
  for (int round = 0; round < 20; ++round) pool.run(4, job);
  for (auto& h : hits) EXPECT_EQ(h.load(), 21);
}

TEST(CpuBackend, ParkThreadsLeavesLaterParallelWorkWhole) {
  for (int threads : {1, 2}) {
    CpuBackend cpu(CpuBackendOptions{threads});
    std::vector<std::atomic<int>> seen(1000);
    for (int round = 0; round < 10; ++round) {
      cpu.park_threads();
      cpu.parallel_for(1000, 10, [&](std::int64_t b, std::int64_t e) {
        for (auto i = b; i < e; ++i) seen[static_cast<std::size_t>(i)]++;
      });
    }
    for (auto& h : seen) EXPECT_EQ(h.load(), 10) << threads << " threads";
  }
}
