// Bad input that used to crash: sizes whose products overflow 64 bits (in the
// direct, eager and traced tiers), deep graphs released on a small stack,
// default-constructed programs, raw_data() of an undefined tensor, and
// non-finite values converted to integers. Each is a typed error now, and the
// runtime keeps working afterwards.

#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tenferro/ad/composite.hpp"
#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/grad_check.hpp"
#include "tenferro/ad/ops.hpp"
#include "tenferro/ad/program.hpp"
#include "tenferro/ad/traced.hpp"
#include "tenferro/ad/transforms.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"
#include "tenferro/backend/fused.hpp"
#include "tenferro/runtime/simple_family.hpp"
#include "test_util.hpp"

using namespace tenferro;

namespace {

constexpr std::int64_t kBig = std::int64_t{1} << 61;

// Runs `fn` on a thread with a 256 KiB stack; returns whether it finished.
bool run_on_small_stack(const std::function<void()>& fn) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  pthread_t thread;
  auto body = [](void* arg) -> void* {
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  const bool started =
      pthread_create(&thread, &attr, body, const_cast<std::function<void()>*>(&fn)) == 0;
  pthread_attr_destroy(&attr);
  if (!started) return false;
  pthread_join(thread, nullptr);
  return true;
}

}  // namespace

TEST(Hardening, ShapeProductsThatOverflowAreTypedErrors) {
  CpuBackend cpu({.num_threads = 1});
  EXPECT_TF_ERROR(zeros({kBig}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(zeros({std::int64_t{1} << 40, std::int64_t{1} << 40}),
                  ErrorKind::InvalidArgument);
  EXPECT_EQ(zeros({0, std::int64_t{1} << 20, std::int64_t{1} << 20}).numel(), 0);
  EXPECT_TF_ERROR(zeros({0, std::int64_t{1} << 62, std::int64_t{1} << 62}),
                  ErrorKind::InvalidArgument);  // its strides would overflow
  EXPECT_TF_ERROR(arange(kBig), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(linspace(0.0, 1.0, kBig), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(eye(std::int64_t{1} << 31), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(neg(zeros({1}).broadcast_to({kBig}), cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(ones({2}).reshape({std::int64_t{1} << 62, std::int64_t{1} << 62, 0, -1}),
                  ErrorKind::InvalidArgument);
  // A stride of 2^60 + 1 must not wrap around into an "in bounds" range.
  double buf[2] = {1, 2};
  const std::int64_t shape[1] = {2}, strides[1] = {(std::int64_t{1} << 60) + 1};
  EXPECT_TF_ERROR(Tensor::wrap(buf, f64, shape, strides, nullptr, Placement{}, sizeof(buf)),
                  ErrorKind::InvalidArgument);
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  const std::int64_t low[1] = {max}, high[1] = {0};
  EXPECT_TF_ERROR(pad(ones({3}), low, high, Scalar(0.0), cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(diag_embed(ones({3}), std::int64_t{1} << 62, cpu), ErrorKind::InvalidArgument);
  // An allocation the machine cannot make is OutOfMemory, not std::bad_alloc.
  EXPECT_TF_ERROR(neg(zeros({1}).broadcast_to({std::int64_t{1} << 58}), cpu),
                  ErrorKind::OutOfMemory);
  // The backend still works.
  EXPECT_EQ(neg(ones({2}), cpu).to_vector<double>(), (std::vector<double>{-1, -1}));
}

TEST(Hardening, OverflowIsTypedInTheEagerAndTracedTiers) {
  auto rt = EagerRuntime::make_cpu();
  const EagerTensor x = rt->tensor(ones({1}));
  EXPECT_TF_ERROR(neg(broadcast_to(x, {kBig})), ErrorKind::InvalidArgument);
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  EXPECT_TF_ERROR(pad(x, {max}, {1}, Scalar(0.0)), ErrorKind::InvalidArgument);
  const TracedTensor t = placeholder(f64, {SymDim::var("n")});
  EXPECT_TF_ERROR(pad(t, {max}, {1}, Scalar(0.0)), ErrorKind::InvalidArgument);
  // A size that only overflows once bound: a run-time error of the Execute phase.
  const Program p =
      compile({sum(t) + sum(traced_full({SymDim::var("n") * SymDim(kBig)}, 1.0, f64))}, {t});
  try {
    (void)run_compiled(*rt->runtime(), p, {ones({4})});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_EQ(e.phase(), ErrorPhase::Execute);
  }
  EXPECT_EQ(sum(x * x).item<double>(), 1.0);  // still usable
}

TEST(Hardening, LongGraphsAreReleasedWithoutRecursion) {
  constexpr int kNodes = 200000;
  // Built and dropped on a 256 KiB stack: one frame per node would overflow it.
  bool eager_ok = false, traced_ok = false;
  ASSERT_TRUE(run_on_small_stack([&] {
    auto rt = EagerRuntime::make_cpu();
    EagerTensor x = rt->variable(Tensor::scalar(1.0));
    EagerTensor y = x;
    for (int i = 0; i < kNodes; ++i) y = neg(y);
    eager_ok = y.item<double>() == 1.0;
    y = EagerTensor();  // drops the chain of recorded nodes
  }));
  EXPECT_TRUE(eager_ok);
  ASSERT_TRUE(run_on_small_stack([&] {
    TracedTensor t = placeholder(f64, {});
    for (int i = 0; i < kNodes; ++i) t = neg(t);
    traced_ok = t.rank() == 0;
    t = TracedTensor();  // drops the chain of graph nodes
  }));
  EXPECT_TRUE(traced_ok);
}

TEST(Hardening, DefaultConstructedProgramsAreTypedErrors) {
  const Program p;
  EXPECT_TF_ERROR(p.input_count(), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(p.output_count(), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(p.node_count(), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(p.fingerprint(), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(p.to_string(), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(p.constants(), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(p.call({}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(p.input_meta(0), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(bind_dimensions(p, {}), ErrorKind::InvalidArgument);
  const PreparedProgram pp;
  EXPECT_TF_ERROR(pp.step_count(), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(pp.program(), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(pp.epoch(), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(pp.fused_group_count(), ErrorKind::InvalidArgument);
  // Out-of-range metas of a real program are typed too.
  const TracedTensor x = placeholder(f64, {2});
  const Program q = compile({x + x}, {x});
  EXPECT_TF_ERROR(q.input_meta(1), ErrorKind::AxisOutOfBounds);
  EXPECT_TF_ERROR(q.output_meta(3), ErrorKind::AxisOutOfBounds);
}

TEST(Hardening, UndefinedTensorsAndNonFiniteConversions) {
  EXPECT_TF_ERROR(Tensor().raw_data(), ErrorKind::InvalidArgument);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(Scalar(nan).to_int(), 0);
  EXPECT_EQ(Scalar(inf).to_int(), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(Scalar(-inf).to<std::int64_t>(), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(Scalar(1e30).to<std::int64_t>(), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(Scalar(-2.7).to<std::int64_t>(), -2);
  EXPECT_TRUE(std::isnan(full({2}, nan).to_vector<double>()[1]));
}

TEST(Hardening, ExtremeStepsOptionsAndEmptyFunctions) {
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  const std::int64_t min = std::numeric_limits<std::int64_t>::min();
  const Tensor r = arange(5);
  EXPECT_EQ(r.slice(0, std::nullopt, std::nullopt, max).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{0}));
  EXPECT_EQ(r.slice(0, std::nullopt, std::nullopt, min).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{4}));
  EXPECT_EQ(r.slice(0, 1, std::nullopt, 2).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{1, 3}));

  auto rt = EagerRuntime::make_cpu();
  const TracedTensor t = placeholder(f64, {4});
  const Program p = compile({exp(t) * 2.0 + 1.0}, {t});
  const Tensor in[1] = {ones({4})};
  for (std::int64_t block : {std::int64_t{0}, kMaxFusionBlock + 1, max}) {
    PrepareOptions options;
    options.fusion_block = block;
    EXPECT_TF_ERROR(prepare(*rt->runtime(), p, InputSignature::of(in), options),
                    ErrorKind::InvalidArgument);
  }
  // mvlgamma unrolls p terms: a huge p is refused before building anything.
  EXPECT_TF_ERROR(mvlgamma(t, 1000000000), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(mvlgamma(rt->tensor(full({2}, 5.0)), 1000000000), ErrorKind::InvalidArgument);
  // Empty callables are typed errors, not std::bad_function_call.
  const EagerTensor x = rt->variable(ones({2}));
  EXPECT_TF_ERROR(grad(EagerFn{}, x), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(jvp(EagerFn{}, x, x), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(grad_many(EagerFnN{}, {x}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(check_gradients(EagerFnN{}, {x}), ErrorKind::InvalidArgument);
}

TEST(Hardening, NoGradGuardIsBoundToItsThread) {
  auto guard = std::make_unique<NoGradGuard>();
  EXPECT_FALSE(grad_recording_enabled());
  bool other_after = false;
  std::thread([&] {
    guard.reset();  // destroyed here, on another thread
    other_after = grad_recording_enabled();
  }).join();
  EXPECT_TRUE(other_after);               // this thread's recording was never touched
  EXPECT_TRUE(grad_recording_enabled());  // the making thread records again
}

namespace {
// An engine that prepares nothing: installing it only moves the epoch.
class NoEngine final : public ExtensionEngine {
 public:
  PrepareOutcome prepare(const PrepareRequest&) const override {
    return tenferro::Unsupported{"test engine"};
  }
};
}  // namespace

TEST(Hardening, RunCompiledRetriesWhenAnotherThreadReconfigures) {
  auto rt = EagerRuntime::make_cpu();
  Runtime& runtime = *rt->runtime();
  const TracedTensor t = placeholder(f64, {SymDim::var("n")});
  const Program p = compile({sum(exp(t))}, {t});
  // The installer reconfigures the runtime 200 times while this thread keeps
  // running the program, at least 500 times and until the installer is done.
  std::atomic<int> installs{0};
  const std::uint64_t epoch_before = runtime.epoch();  // read before the installer starts
  std::thread installer([&] {
    for (int i = 0; i < 200; ++i) {
      auto m = std::make_shared<SimpleModule>("t.churn" + std::to_string(i));
      m->engine(FamilyId("t.churn" + std::to_string(i) + ".v1"), cpu_engine_id(),
                std::make_shared<NoEngine>());
      runtime.install_module(m);
      installs.fetch_add(1);
    }
  });
  int errors = 0, runs = 0;
  while (runs < 500 || installs.load() < 200) {
    try {
      (void)run_compiled(runtime, p, {ones({3})});
    } catch (const Error&) {
      ++errors;
    }
    ++runs;
  }
  installer.join();
  EXPECT_EQ(errors, 0);
  EXPECT_GE(runtime.epoch(), epoch_before + 200);  // every install moved the epoch
}

// One prepared program run on four threads at once, on a backend of two
// threads: its fused groups (a pass on raw pointers with a fused sum, a
// pass with a clamp step that runs through tensor views, and a pair of
// arithmetic steps), each prepared once on the backend, give every run the
// bits of a run alone.
TEST(Hardening, OnePreparedProgramRunsOnSeveralThreadsAtOnce) {
  auto runtime = Runtime::builder()
                     .backend(std::make_shared<CpuBackend>(
                         CpuBackendOptions{.num_threads = 2, .parallel_threshold = 1000}))
                     .build();
  const TracedTensor x = placeholder(f64, {20000}), w = placeholder(f64, {20000});
  const Program p = compile(
      {sum(exp(x) * w + x), clamp(x * w - x, Scalar(-0.1), Scalar(0.2)), x * 0.5 + w}, {x, w});
  Generator gen(31);
  const std::vector<Tensor> in{rand({20000}, f64, gen), rand({20000}, f64, gen)};
  const PreparedProgram plan = prepare(*runtime, p, InputSignature::of(in));
  EXPECT_EQ(plan.fused_group_count(), 3u);
  const std::vector<Tensor> want = run(*runtime, plan, in);
  auto same_bits = [](const Tensor& a, const Tensor& b) {
    return a.shape() == b.shape() &&
           std::memcmp(a.raw_data(), b.raw_data(), a.numel() * itemsize(a.dtype())) == 0;
  };
  std::atomic<int> runs{0}, mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        const std::vector<Tensor> got = run(*runtime, plan, in);
        for (std::size_t k = 0; k < want.size(); ++k)
          if (!same_bits(got[k], want[k])) mismatches.fetch_add(1);
        runs.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(runs.load(), 100);
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(Hardening, OneRuleOneKindInEveryTier) {
  CpuBackend cpu({.num_threads = 1});
  auto rt = EagerRuntime::make_cpu();
  // matmul of bool: DTypeMismatch in the direct, eager and traced tiers.
  const Tensor b = ones({2, 2}, DType::Bool);
  EXPECT_TF_ERROR(matmul(b, b, cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(matmul(rt->tensor(b), rt->tensor(b)), ErrorKind::DTypeMismatch);
  const TracedTensor tb = placeholder(DType::Bool, {2, 2});
  EXPECT_TF_ERROR(matmul(tb, tb), ErrorKind::DTypeMismatch);
  // stack of rank-0 operands gives a vector in every tier.
  const Tensor s = Tensor::scalar(2.0);
  const Tensor xs[2] = {s, s};
  EXPECT_EQ(stack(xs, 0, cpu).shape(), (Shape{2}));
  const EagerTensor es[2] = {rt->tensor(s), rt->tensor(s)};
  EXPECT_EQ(stack(es, 0).shape(), (Shape{2}));
  const TracedTensor t0 = placeholder(f64, {});
  const TracedTensor ts[2] = {t0, t0};
  EXPECT_EQ(stack(ts, 0).shape(), (SymShape{2}));
  // reshape with -1 in every tier (traced: when the sizes are constant).
  EXPECT_EQ(ones({2, 3}).reshape({-1}).shape(), (Shape{6}));
  EXPECT_EQ(reshape(rt->tensor(ones({2, 3})), {-1}).shape(), (Shape{6}));
  EXPECT_EQ(reshape(placeholder(f64, {2, 3}), {-1}).shape(), (SymShape{6}));
}

TEST(Hardening, ThreadCountsOutOfRangeAreTypedErrors) {
  EXPECT_TF_ERROR(CpuBackend({.num_threads = -1}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(CpuBackend({.num_threads = 100000}), ErrorKind::InvalidArgument);
  CpuBackend cpu({.num_threads = 2});
  EXPECT_TF_ERROR(cpu.set_num_threads(-3), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(cpu.set_num_threads(1 << 20), ErrorKind::InvalidArgument);
  EXPECT_EQ(cpu.num_threads(), 2);  // unchanged
  EXPECT_EQ(neg(ones({2}), cpu).to_vector<double>(), (std::vector<double>{-1, -1}));
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
namespace {

int thread_count() {
  return static_cast<int>(std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                                        std::filesystem::directory_iterator{}));
}

// In a child process whose address space is capped a little above its current
// size, asks for 1000 threads (8 MiB of stack each): the system refuses them.
// Exit codes: 0 ok, 1-6 which check failed; a hang is killed by alarm().
int refused_threads_child() {
  alarm(60);
  CpuBackend small({.num_threads = 2});
  const int before = thread_count();
  rlimit old{};
  getrlimit(RLIMIT_AS, &old);
  std::ifstream statm("/proc/self/statm");
  long pages = 0;
  statm >> pages;
  rlimit capped = old;
  capped.rlim_cur =
      static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (rlim_t{256} << 20);
  if (setrlimit(RLIMIT_AS, &capped) != 0) return 1;
  try {
    CpuBackend big({.num_threads = 1000});
    return 2;  // the cap did not bite
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::OutOfMemory) return 3;
  }
  if (thread_count() != before) return 4;  // a started worker was left behind
  try {
    small.set_num_threads(1000);
    return 2;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::OutOfMemory) return 3;
  }
  if (thread_count() != before || small.num_threads() != 2) return 5;
  setrlimit(RLIMIT_AS, &old);
  CpuBackend after({.num_threads = 4});
  return neg(ones({2}), after).to_vector<double>() == std::vector<double>{-1, -1} ? 0 : 6;
}

}  // namespace

TEST(Hardening, RefusedThreadsAreTypedErrorsAndLeaveNoThreadBehind) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(refused_threads_child());
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child was killed (signal "
                                 << (WIFSIGNALED(status) ? WTERMSIG(status) : 0)
                                 << "): a crash, or a hang stopped by alarm()";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}
#endif

TEST(Hardening, ResizingThePoolWhileOtherThreadsRunOps) {
  // Jobs already running finish on the pool they started on; the resize neither
  // deadlocks nor frees a pool under a running job.
  CpuBackend cpu({.num_threads = 2, .parallel_threshold = 1024});
  const Tensor x = ones({std::int64_t{1} << 15});
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0}, runs{0};
  std::vector<std::thread> users;
  for (int t = 0; t < 2; ++t) {
    users.emplace_back([&] {
      while (!stop.load()) {
        if (sum(neg(x, cpu), cpu).item<double>() != -32768.0) ++wrong;
        ++runs;
      }
    });
  }
  for (int i = 0; i < 200; ++i) cpu.set_num_threads(1 + i % 4);
  while (runs.load() < 50) std::this_thread::yield();
  stop = true;
  for (auto& u : users) u.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(cpu.num_threads(), 4);
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
namespace {

std::int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

}  // namespace

// Nodes in the long eager chain: 10^6 by default (about 10 s and 0.9 GB in a
// release build), 10^7 with TENFERRO_LONG_TESTS=1 (about 70 s and 8.6 GB: an
// eager node holds its value, about 860 bytes for a scalar).
int eager_chain_length() {
  const char* v = std::getenv("TENFERRO_LONG_TESTS");
  return v != nullptr && std::string(v) == "1" ? 10'000'000 : 1'000'000;
}

TEST(Hardening, LongEagerGraphOnASmallStack) {
  // (Release build only: the sanitizers' bookkeeping makes this too slow.)
  // Recorded, differentiated (backward is iterative) and dropped, all on a
  // 256 KiB stack.
  const int n = eager_chain_length() + 1;  // odd: d/dx = -1
  bool value_ok = false, grad_ok = false;
  ASSERT_TRUE(run_on_small_stack([&] {
    auto rt = EagerRuntime::make_cpu();
    EagerTensor x = rt->variable(Tensor::scalar(1.0));
    EagerTensor y = x;
    for (int i = 0; i < n; ++i) y = neg(y);
    value_ok = y.item<double>() == -1.0;
    y.backward();
    grad_ok = x.grad().item<double>() == -1.0;
    y = EagerTensor();
  }));
  EXPECT_TRUE(value_ok);
  EXPECT_TRUE(grad_ok);
}

TEST(Hardening, TenMillionNodeTracedGraph) {
  bool ok = false;
  ASSERT_TRUE(run_on_small_stack([&] {
    TracedTensor x = placeholder(f64, {});
    TracedTensor t = x;
    for (int i = 0; i < 10'000'000; ++i) t = neg(t);
    ok = t.rank() == 0;
    t = TracedTensor();
  }));
  EXPECT_TRUE(ok);
}

TEST(Hardening, ResidentSetStaysFlatOverAMillionEagerSteps) {
  auto rt = EagerRuntime::make_cpu();
  EagerTensor x = rt->variable(Tensor::from_col_major<double>({4}, {0.1, 0.2, 0.3, 0.4}));
  EagerTensor w = rt->tensor(Tensor::from_col_major<double>({4}, {1.0, -1.0, 0.5, 2.0}));
  auto step = [&] {
    EagerTensor y = sum(exp(x) * w + x);
    y.backward();
    x.clear_grad();
  };
  constexpr int kWarm = 100'000, kSteps = 1'000'000;
  for (int i = 0; i < kWarm; ++i) step();
  const std::int64_t warm = resident_bytes();
  for (int i = kWarm; i < kSteps; ++i) step();
  const std::int64_t grown = resident_bytes() - warm;
  EXPECT_LT(grown, std::int64_t{4} << 20)
      << "resident set grew by " << grown << " bytes over " << kSteps - kWarm << " steps";
  EagerTensor y = sum(exp(x) * w + x);
  y.backward();
  EXPECT_NEAR(x.grad().value().to_vector<double>()[0], std::exp(0.1) + 1.0, 1e-12);
}
#endif
// Findings of the op-sequence fuzzer (tests/fuzz/targets/op_sequence.cpp),
// each the same error kind (or the same value) in the direct, eager and
// traced tiers now.
TEST(Hardening, OpSequenceFuzzFindingsAgreeAcrossTiers) {
  CpuBackend cpu({.num_threads = 1});
  auto rt = EagerRuntime::make_cpu();
  const Tensor m = ones({2, 3}), v = ones({3});
  // stack of operands of different ranks: RankMismatch (eager and traced
  // inserted the new axis past the end of the shorter shape).
  EXPECT_TF_ERROR(stack({m, v}, 2, cpu), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(stack({rt->tensor(m), rt->tensor(v)}, 2), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(stack({placeholder(f64, {2, 3}), placeholder(f64, {3})}, 2),
                  ErrorKind::RankMismatch);
  // matmul of a rank-0 bool: the dtype is checked before the rank everywhere.
  const Tensor b0 = Tensor::scalar(true);
  EXPECT_TF_ERROR(matmul(b0, v, cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(matmul(rt->tensor(b0), rt->tensor(v)), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(matmul(placeholder(DType::Bool, {}), placeholder(f64, {3})),
                  ErrorKind::DTypeMismatch);
  // A constant shape beyond 2^59 elements is no tensor's shape, traced too.
  constexpr std::int64_t k62 = std::int64_t{1} << 62;
  EXPECT_TF_ERROR(placeholder(f64, {k62}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(placeholder(f64, {0, k62}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(broadcast_to(placeholder(f64, {1}), {k62}), ErrorKind::InvalidArgument);
  // broadcast_to an impossible target that is also incompatible: its size first.
  const Tensor e30 = zeros({3, 0});
  EXPECT_TF_ERROR(e30.broadcast_to({0, k62}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(broadcast_to(rt->tensor(e30), {0, k62}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(broadcast_to(placeholder(f64, {3, 0}), {0, k62}), ErrorKind::InvalidArgument);
  // reshape to extents whose product overflows: InvalidArgument, never a
  // wrapped element count.
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  for (const Shape& target : {Shape{k62, 4}, Shape{2, kMax}, Shape{k62, 4, 0}, Shape{-1, k62, 4}}) {
    EXPECT_TF_ERROR(reshape(v, target, cpu), ErrorKind::InvalidArgument);
    EXPECT_TF_ERROR(v.reshape(target), ErrorKind::InvalidArgument);
    EXPECT_TF_ERROR(reshape(rt->tensor(v), target), ErrorKind::InvalidArgument);
    EXPECT_TF_ERROR(reshape(placeholder(f64, {3}), target), ErrorKind::InvalidArgument);
  }
  // slice with stride INT64_MAX takes one element in every tier, and its
  // transpose rule puts the cotangent back there.
  const Tensor x = Tensor::from_col_major({3}, std::vector<double>{1, 2, 3});
  const Shape start{1}, limit{3}, step{kMax};
  EXPECT_EQ(slice(x, start, limit, step, cpu).to_vector<double>(), std::vector<double>{2});
  EXPECT_EQ(slice(rt->tensor(x), start, limit, step).value().to_vector<double>(),
            std::vector<double>{2});
  const TracedTensor tx = placeholder(f64, {3});
  const TracedTensor ty = slice(tx, start, limit, step);
  EXPECT_EQ(ty.shape(), (SymShape{1}));
  const auto out = run_compiled(*rt->runtime(), compile({ty, grad(sum(ty), tx)}, {tx}), {x});
  EXPECT_EQ(out[0].to_vector<double>(), std::vector<double>{2});
  EXPECT_EQ(out[1].to_vector<double>(), (std::vector<double>{0, 1, 0}));
  const EagerTensor g =
      grad([&](const EagerTensor& a) { return sum(slice(a, start, limit, step)); }, rt->tensor(x));
  EXPECT_EQ(g.value().to_vector<double>(), (std::vector<double>{0, 1, 0}));
  // matmul checks the inner extents before it broadcasts the batch axes.
  const Tensor wide = zeros({0, 0, std::int64_t{1} << 40});
  EXPECT_TF_ERROR(matmul(v, wide, cpu), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(matmul(rt->tensor(v), rt->tensor(wide)), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(matmul(placeholder(f64, {3}), placeholder(f64, {0, 0, std::int64_t{1} << 40})),
                  ErrorKind::ShapeMismatch);
  // Derivatives of programs that run: pow with a bool exponent, and an
  // empty diagonal at an offset of 2^59 + 1 (zeros, no huge block).
  const Tensor e = cast(Tensor::from_col_major({2}, std::vector<std::int32_t>{1, 0}), bool_, cpu);
  const Tensor p = Tensor::from_col_major({2}, std::vector<double>{3, 5});
  const EagerTensor gp =
      grad([&](const EagerTensor& q) { return sum(pow(q, rt->tensor(e))); }, rt->tensor(p));
  EXPECT_EQ(gp.value().to_vector<double>(), (std::vector<double>{1, 0}));
  const TracedTensor tp = placeholder(f64, {2});
  const auto gpt =
      run_compiled(*rt->runtime(), compile({grad(sum(pow(tp, constant(e))), tp)}, {tp}), {p});
  EXPECT_EQ(gpt[0].to_vector<double>(), (std::vector<double>{1, 0}));
  // atan2 of a bool and a float: d/dx atan2(b, x) = -b / (b^2 + x^2).
  const EagerTensor ga =
      grad([&](const EagerTensor& q) { return sum(atan2(rt->tensor(e), q)); }, rt->tensor(p));
  EXPECT_NEAR(ga.value().to_vector<double>()[0], -1.0 / 10.0, 1e-15);
  EXPECT_EQ(ga.value().to_vector<double>()[1], 0.0);
  const auto gat =
      run_compiled(*rt->runtime(), compile({grad(sum(atan2(constant(e), tp)), tp)}, {tp}), {p});
  EXPECT_EQ(gat[0].to_vector<double>(), ga.value().to_vector<double>());
  const std::int64_t far = (std::int64_t{1} << 59) + 1;
  const EagerTensor gd =
      grad([&](const EagerTensor& q) { return sum(diagonal(q, far)); }, rt->tensor(ones({1, 4})));
  EXPECT_EQ(gd.value().to_vector<double>(), std::vector<double>(4, 0.0));
  // kron's extent products are checked (the direct tier multiplied
  // 2^40 * 2^40 unchecked: UBSan's signed overflow).
  const Tensor k40 = zeros({std::int64_t{1} << 40, 0});
  EXPECT_TF_ERROR(kron(k40, k40, cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(kron(rt->tensor(k40), rt->tensor(k40)), ErrorKind::InvalidArgument);
  const TracedTensor tk = placeholder(f64, {std::int64_t{1} << 40, 0});
  EXPECT_TF_ERROR(kron(tk, tk), ErrorKind::InvalidArgument);
  // A 2^60-element kron is refused before the product allocates (issue 52
  // item 3): operands are stride-0 views of one element.
  const Tensor k30 = Tensor::scalar(1.0).broadcast_to({std::int64_t{1} << 30});
  EXPECT_TF_ERROR(kron(k30, k30, cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(kron(rt->tensor(k30), rt->tensor(k30)), ErrorKind::InvalidArgument);
  const TracedTensor t30 = placeholder(f64, {std::int64_t{1} << 30});
  EXPECT_TF_ERROR(kron(t30, t30), ErrorKind::InvalidArgument);
  // index_select checks its output shape before the index values (the
  // traced tier refuses the shape when the op is built).
  const Tensor wide_empty = zeros({1, 0, std::int64_t{1} << 59});
  const Tensor picks = Tensor::from_col_major({3}, std::vector<std::int64_t>{0, 5, 9});
  EXPECT_TF_ERROR(index_select(wide_empty, 1, picks, cpu), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(index_select(rt->tensor(wide_empty), 1, rt->tensor(picks)),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(
      index_select(placeholder(f64, {1, 0, std::int64_t{1} << 59}), 1, placeholder(i64, {3})),
      ErrorKind::InvalidArgument);
  // The runtime keeps working.
  EXPECT_EQ(add(rt->tensor(v), rt->tensor(v)).value().to_vector<double>(),
            (std::vector<double>{2, 2, 2}));
}
