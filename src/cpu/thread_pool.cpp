#include "cpu/thread_pool.hpp"

#include <algorithm>
#include <chrono>
#include <system_error>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#endif

#include "tenferro/core/error.hpp"

namespace tenferro::detail {

namespace {
thread_local bool t_inside_task = false;

// More threads than the machine reports cores (an unknown count, 0, is not).
bool oversubscribed(int num_threads) {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores != 0 && static_cast<unsigned>(num_threads) > cores;
}
}  // namespace

bool ThreadPool::inside_task() {
  return t_inside_task;
}

ThreadPool::ThreadPool(int num_threads, std::optional<std::chrono::microseconds> worker_spin)
    : worker_spin_(worker_spin                   ? *worker_spin
                   : oversubscribed(num_threads) ? kOversubscribedSpin
                                                 : kWorkerSpin) {
  workers_.reserve(static_cast<std::size_t>(std::max(num_threads - 1, 0)));
  for (int i = 1; i < num_threads; ++i) {
    try {
      workers_.emplace_back([this, i] { worker_loop(i); });
    } catch (const std::system_error& e) {
      // The system refused another thread (a process or memory limit). Stop
      // and join the ones already running so none is left behind.
      stop_and_join();
      fail(ErrorKind::OutOfMemory, "thread pool", "could not start thread ", i + 1, " of ",
           num_threads, " (", e.what(),
           "); ask for fewer threads (CpuBackendOptions::num_threads or set_num_threads)");
    }
  }
}

ThreadPool::~ThreadPool() {
  stop_and_join();
}

void ThreadPool::stop_and_join() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    published_.fetch_add(1, std::memory_order_release);  // ends any spin
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
  workers_.clear();
}

void ThreadPool::drain(const std::function<void(std::int64_t)>& chunk, int participant) {
  auto run_one = [&](std::int64_t i) {
    try {
      chunk(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    finish_chunk();
  };
  if (total_ <= kAffine) {
    const std::int64_t stride = size();
    for (std::int64_t i = participant; i < total_; i += stride)
      if (!claimed_[i].exchange(true, std::memory_order_acq_rel)) run_one(i);
    for (std::int64_t i = 0; i < total_; ++i)
      if (!claimed_[i].exchange(true, std::memory_order_acq_rel)) run_one(i);
    return;
  }
  for (;;) {
    const std::int64_t i = next_.fetch_add(1);
    if (i >= total_) return;
    run_one(i);
  }
}

void ThreadPool::finish_chunk() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (--pending_ == 0) done_.notify_all();
}

namespace {
void cpu_relax() {
#if defined(__x86_64__) || defined(_M_X64)
  _mm_pause();
#endif
}
}  // namespace

void ThreadPool::worker_loop(int participant) {
  t_inside_task = true;
  std::uint64_t seen = 0;
  std::uint64_t parked = parked_.load(std::memory_order_acquire);
  for (;;) {
    const std::function<void(std::int64_t)>* job = nullptr;
    // Back-to-back jobs (a chain of parallel ops) find the worker still
    // awake: it watches for the next job for a while before sleeping on the
    // condition variable, unless a caller parks the pool first.
    const auto spin_until = std::chrono::steady_clock::now() + worker_spin_;
    while (published_.load(std::memory_order_acquire) == seen &&
           parked_.load(std::memory_order_acquire) == parked &&
           std::chrono::steady_clock::now() < spin_until) {
      for (int k = 0; k < 64; ++k) cpu_relax();
    }
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!stop_ && generation_ == seen) ++sleeps_;
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      // A park() after the job's publication (after run() returns, say)
      // ends the next spin; one before it is over.
      parked = published_parked_;
      job = job_;
      if (job == nullptr) continue;  // woke after that job had already finished
      ++active_workers_;
    }
    drain(*job, participant);
    std::lock_guard<std::mutex> lock(mutex_);
    if (--active_workers_ == 0) done_.notify_all();
  }
}

void ThreadPool::run(std::int64_t num_chunks, const std::function<void(std::int64_t)>& chunk) {
  if (num_chunks <= 0) return;
  if (num_chunks == 1 || workers_.empty() || t_inside_task) {
    for (std::int64_t i = 0; i < num_chunks; ++i) chunk(i);
    return;
  }
  std::lock_guard<std::mutex> run_lock(run_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &chunk;
    total_ = num_chunks;
    next_.store(0);
    for (std::int64_t i = 0; i < std::min(num_chunks, kAffine); ++i)
      claimed_[i].store(false, std::memory_order_relaxed);
    pending_ = num_chunks;
    error_ = nullptr;
    ++generation_;
    published_parked_ = parked_.load(std::memory_order_acquire);
    published_.store(generation_, std::memory_order_release);
  }
  wake_.notify_all();
  t_inside_task = true;
  drain(chunk, 0);
  t_inside_task = false;
  // The workers' last chunks usually end within microseconds of ours: watch
  // for that briefly before sleeping on the condition variable, whose
  // wake-up (a futex and, on a virtual machine, an interrupt to a halted
  // virtual CPU) costs 200-300 us on the project's 2-core VM.
  const auto spin_until = std::chrono::steady_clock::now() + kCallerSpin;
  while ((pending_.load(std::memory_order_acquire) != 0 ||
          active_workers_.load(std::memory_order_acquire) != 0) &&
         std::chrono::steady_clock::now() < spin_until) {
    for (int k = 0; k < 16; ++k) cpu_relax();
  }
  std::exception_ptr error;
  {
    // Wait for all chunks and for every worker to leave the job, so `chunk`
    // is no longer referenced when we return.
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0 && active_workers_ == 0; });
    job_ = nullptr;
    error = error_;
    error_ = nullptr;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace tenferro::detail
