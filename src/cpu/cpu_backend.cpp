#include "tenferro/backend/cpu/cpu_backend.hpp"

#include <cblas.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "cpu/thread_pool.hpp"
#include "tensor/host_alloc.hpp"
#include "tensor/object_pool.hpp"

namespace tenferro {

namespace {

// ---- buffer pool --------------------------------------------------------------

// The pool's lock: held for a list push or pop (a cleared pool frees its
// buffers under it, rarely). An uncontended std::mutex pair cost about 110
// instructions of a 4-element op's 3000; this one is an exchange and a store.
// Waiters yield rather than spin (2-core machines run more threads than cores).
class SpinLock {
 public:
  void lock() noexcept {
    while (held_.exchange(true, std::memory_order_acquire)) {
      while (held_.load(std::memory_order_relaxed)) std::this_thread::yield();
    }
  }
  void unlock() noexcept { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

struct PoolState {
  SpinLock spin;
  bool closed = false;  // the backend is gone: buffers are freed, not cached
  // Free buffers by size class (class_index), so a lookup is an index, not
  // a hash.
  std::array<std::vector<void*>, 256> free_by_class;
  BufferPoolStats stats;

  ~PoolState() { release_all(); }
  void release_all() {
    for (auto& list : free_by_class) {
      for (void* p : list) std::free(p);
      list.clear();
    }
    stats.cached_bytes = 0;
    stats.cached_buffers = 0;
  }
};

// Size classes: powers of two up to 1 MiB; above, four per octave (2^k
// times 1, 1.25, 1.5, 1.75), so a large buffer wastes at most a quarter of
// its request (a 272 MB operand copy took a 512 MiB class before) and the
// pool's byte limit holds more of them.
constexpr std::size_t kFineClassesFrom = std::size_t{1} << 20;

std::size_t size_class(std::size_t nbytes) {
  const std::size_t pow2 = std::bit_ceil(std::max<std::size_t>(nbytes, 64));
  if (pow2 <= kFineClassesFrom) return pow2;
  const std::size_t base = pow2 / 2, step = base / 4;
  return base + (nbytes - base + step - 1) / step * step;
}

// The free list of class `cls` (at least 64 bytes): 4 log2(cls) plus its
// quarter (0 for the powers of two).
std::size_t class_index(std::size_t cls) {
  const auto k = static_cast<std::size_t>(std::bit_width(cls) - 1);
  const std::size_t base = std::size_t{1} << k;
  return 4 * k + (cls - base) / (base / 4);
}

void* heap_alloc(std::size_t cls) {
  return detail::host_alloc(cls, "empty");
}

// A buffer from the pool, returned to it when the last tensor lets go. It
// shares ownership of the pool state (one reference count each way; a weak
// reference cost a lock() on every release); a closed pool (its backend is
// gone) takes nothing back.
class PooledStorage final : public Storage {
 public:
  PooledStorage(void* data, std::size_t nbytes, std::size_t cls, std::shared_ptr<PoolState> pool)
      : Storage(data, nbytes, Placement{}), cls_(cls), pool_(std::move(pool)) {}
  ~PooledStorage() override {
    {
      std::lock_guard<SpinLock> lock(pool_->spin);
      if (!pool_->closed) {
        if (pool_->stats.cached_bytes + cls_ <= pool_->stats.max_bytes) {
          pool_->free_by_class[class_index(cls_)].push_back(data());
          pool_->stats.cached_bytes += cls_;
          ++pool_->stats.cached_buffers;
          ++pool_->stats.returns;
          return;
        }
        ++pool_->stats.drops;
      }
    }
    std::free(data());
  }

 private:
  std::size_t cls_;
  std::shared_ptr<PoolState> pool_;
};

// More threads than this is a mistake (a count in the wrong unit, an
// uninitialised value), not a machine.
constexpr int kMaxThreads = 4096;

int resolve_threads(int n, const char* op) {
  if (n < 0) fail(ErrorKind::InvalidArgument, op, "thread count must be >= 0, got ", n);
  if (n > kMaxThreads) {
    fail(ErrorKind::InvalidArgument, op, "thread count ", n, " is above the limit of ", kMaxThreads,
         "; pass 0 for one thread per core");
  }
  if (n > 0) return n;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(std::min<unsigned>(hw, kMaxThreads));
}

thread_local CpuSession* t_current_session = nullptr;

}  // namespace

struct CpuBackend::Impl {
  std::shared_ptr<PoolState> pool = std::make_shared<PoolState>();
  std::mutex pool_config_mutex;
  // The worker pool. set_num_threads swaps in a new one while other threads
  // may be running jobs: each job holds its own reference, so the old pool
  // lives (and is joined) until the last job that started on it returns.
  std::mutex threads_mutex;
  std::shared_ptr<detail::ThreadPool> threads;
  std::atomic<int> num_threads{1};

  std::shared_ptr<detail::ThreadPool> current_threads() {
    std::lock_guard<std::mutex> lock(threads_mutex);
    return threads;
  }
};

CpuBackend::CpuBackend(CpuBackendOptions options)
    : options_(options), impl_(std::make_unique<Impl>()) {
  const int n = resolve_threads(options.num_threads, "CpuBackend");
  impl_->threads = std::make_shared<detail::ThreadPool>(n);
  impl_->num_threads.store(n);
  num_threads_.store(n, std::memory_order_relaxed);
  impl_->pool->stats.max_bytes = options.pool_max_bytes;
}

CpuBackend::~CpuBackend() {
  release_attachments();  // while the pool and the threads still exist
  // Tensors may outlive the backend and hold the pool state: close it so
  // their buffers are freed when they go, and free what it caches now.
  std::lock_guard<SpinLock> lock(impl_->pool->spin);
  impl_->pool->closed = true;
  impl_->pool->release_all();
}

Tensor CpuBackend::empty(std::span<const std::int64_t> shape, DType dtype) {
  const std::int64_t n = shape_numel(shape, "empty");
  const std::size_t nbytes = static_cast<std::size_t>(n) * itemsize(dtype);
  const std::size_t cls = size_class(nbytes);
  void* data = nullptr;
  {
    std::lock_guard<SpinLock> lock(impl_->pool->spin);
    auto& list = impl_->pool->free_by_class[class_index(cls)];
    if (!list.empty()) {
      data = list.back();
      list.pop_back();
      impl_->pool->stats.cached_bytes -= cls;
      --impl_->pool->stats.cached_buffers;
      ++impl_->pool->stats.hits;
    } else {
      ++impl_->pool->stats.misses;
    }
  }
  if (data == nullptr) data = heap_alloc(cls);
  auto storage = detail::make_pooled<PooledStorage>(data, nbytes, cls, impl_->pool);
  return Tensor::from_storage(std::move(storage), dtype, Shape(shape), col_major_strides(shape), 0);
}

int CpuBackend::num_threads() const {
  return impl_->num_threads.load();
}

void CpuBackend::set_num_threads(int n) {
  const int resolved = resolve_threads(n, "set_num_threads");
  if (detail::ThreadPool::inside_task()) {
    fail(ErrorKind::RuntimeState, "set_num_threads",
         "cannot resize the pool from inside a pool task");
  }
  // One resize at a time; jobs already running keep their pool (see Impl).
  std::lock_guard<std::mutex> config(impl_->pool_config_mutex);
  if (resolved == impl_->num_threads.load()) return;
  auto fresh = std::make_shared<detail::ThreadPool>(resolved);  // may throw: nothing changed
  std::shared_ptr<detail::ThreadPool> old;
  {
    std::lock_guard<std::mutex> lock(impl_->threads_mutex);
    old = std::exchange(impl_->threads, std::move(fresh));
    impl_->num_threads.store(resolved);
    num_threads_.store(resolved, std::memory_order_relaxed);
  }
  old.reset();  // joins the old workers unless a running job still holds them
  if (CpuSession::current(*this) != nullptr) apply_blas_threads();
}

void CpuBackend::apply_blas_threads() {
  const int n = impl_->num_threads.load();
  if (openblas_get_num_threads() == n) return;
  // OpenBLAS's thread count is process-wide and openblas_set_num_threads is
  // not thread-safe (it starts and retires its server threads): sessions
  // entered at once on several threads, or by backends of different sizes,
  // must not call it concurrently (the likely cause of a hang at process
  // exit, after the test had passed, seen once in
  // Hardening.ResizingThePoolWhileOtherThreadsRunOps, whose user threads
  // enter sessions while the pool is resized).
  static std::mutex blas_threads_mutex;
  std::lock_guard<std::mutex> lock(blas_threads_mutex);
  if (openblas_get_num_threads() != n) openblas_set_num_threads(n);
}

BufferPoolStats CpuBackend::pool_stats() const {
  std::lock_guard<SpinLock> lock(impl_->pool->spin);
  return impl_->pool->stats;
}

void CpuBackend::reset_pool() {
  std::lock_guard<SpinLock> lock(impl_->pool->spin);
  impl_->pool->release_all();
  const std::size_t max = impl_->pool->stats.max_bytes;
  impl_->pool->stats = BufferPoolStats{};
  impl_->pool->stats.max_bytes = max;
}

void CpuBackend::parallel_for_pool(std::int64_t n, std::int64_t grain,
                                   const std::function<void(std::int64_t, std::int64_t)>& body) {
  if (n <= 0) return;
  grain = std::max<std::int64_t>(grain, 1);
  const std::int64_t max_chunks = (n + grain - 1) / grain;
  if (detail::ThreadPool::inside_task()) {
    body(0, n);
    return;
  }
  const std::shared_ptr<detail::ThreadPool> threads = impl_->current_threads();
  // Up to four chunks per thread, each thread taking its own first (the same
  // parts of the data every call: ThreadPool's affinity) and then any the
  // others have not started: a thread that starts late (woken from sleep)
  // leaves its share to the others instead of holding up the join (2T sum of
  // 2048^2 doubles: 750-830 -> 645-705 us).
  const std::int64_t chunks = std::min<std::int64_t>(max_chunks, threads->size() * 4);
  if (chunks <= 1) {
    body(0, n);
    return;
  }
  const std::int64_t per = (n + chunks - 1) / chunks;
  threads->run(chunks, [&](std::int64_t c) {
    const std::int64_t b = c * per;
    const std::int64_t e = std::min(n, b + per);
    if (b < e) body(b, e);
  });
}

void CpuBackend::park_threads() {
  if (num_threads_.load(std::memory_order_relaxed) > 1) impl_->current_threads()->park();
}

// ---- sessions --------------------------------------------------------------------

CpuSession::CpuSession(CpuBackend& backend) : backend_(backend), previous_(t_current_session) {
  for (CpuSession* s = t_current_session; s != nullptr; s = s->previous_) {
    if (&s->backend_ == &backend) {
      throw Error(ErrorKind::RuntimeState, "session",
                  "this thread is already inside a session of this backend; run the op in "
                  "the existing session instead of entering a new one");
    }
  }
  backend.apply_blas_threads();
  t_current_session = this;
}

CpuSession::~CpuSession() {
  t_current_session = previous_;
}

CpuSession* CpuSession::current(const CpuBackend& backend) {
  for (CpuSession* s = t_current_session; s != nullptr; s = s->previous_) {
    if (&s->backend_ == &backend) return s;
  }
  return nullptr;
}

std::unique_ptr<BackendSession> CpuBackend::enter_session(bool reuse) {
  if (reuse && CpuSession::current(*this) != nullptr) return std::make_unique<BackendSession>();
  return std::make_unique<CpuSession>(*this);
}

CpuBackend& require_cpu(Backend& backend, const char* op) {
  auto* cpu = dynamic_cast<CpuBackend*>(&backend);
  if (cpu == nullptr) {
    fail(ErrorKind::Unsupported, op, "this op has kernels for the CPU backend only, not the ",
         backend.kind(), " backend; run it on a CpuBackend");
  }
  return *cpu;
}

ScopedCpuSession::ScopedCpuSession(CpuBackend& backend) {
  if (CpuSession::current(backend) == nullptr) owned_.emplace(backend);
}
ScopedCpuSession::~ScopedCpuSession() = default;

}  // namespace tenferro
