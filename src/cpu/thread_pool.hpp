#pragma once
// A fixed pool of worker threads running chunked jobs. The caller takes part
// in every job; a job started from inside a pool task runs serially on the
// calling thread (one level of parallelism).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace tenferro::detail {

class ThreadPool {
 public:
  /// How long an idle worker watches for the next job before sleeping on a
  /// condition variable. Waking a sleeping worker costs 200-300 us on a
  /// virtual machine (a futex and an interrupt to a halted virtual CPU), and
  /// a worker that misses a job that way tends to miss the next ones too (the
  /// caller runs the job alone, for longer than a short spin). A few
  /// milliseconds, like libgomp's default spin, keeps a chain of parallel ops
  /// on both threads: 2T add of 2^20 doubles, 600 calls in blocks of 30,
  /// calls at one-thread speed 93-96 -> 39-53 with 3 ms against 200 us.
  /// A pool of more threads than the machine has cores keeps the short spin
  /// of old instead: there, spinning workers take the cores from the ones
  /// with work.
  static constexpr std::chrono::microseconds kWorkerSpin{3000};
  static constexpr std::chrono::microseconds kOversubscribedSpin{200};

  /// Starts num_threads - 1 workers; if the system refuses one, joins those
  /// already started and throws OutOfMemory. worker_spin: the idle workers'
  /// watch (default: kWorkerSpin, or kOversubscribedSpin for more threads
  /// than cores).
  explicit ThreadPool(int num_threads,
                      std::optional<std::chrono::microseconds> worker_spin = std::nullopt);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  /// Runs chunk(i) for i in [0, num_chunks); returns when all are done.
  void run(std::int64_t num_chunks, const std::function<void(std::int64_t)>& chunk);
  /// True on a pool worker or on a caller while it runs a job.
  static bool inside_task();
  /// Ends the idle workers' wait for the next job: they sleep until it comes.
  /// For a caller about to hand the cores to a library with threads of its
  /// own (OpenBLAS, FFTW), which a spinning worker would compete with.
  void park() { parked_.fetch_add(1, std::memory_order_release); }
  /// How many times a worker has gone to sleep waiting for a job.
  std::uint64_t sleeps() {
    std::lock_guard<std::mutex> lock(mutex_);
    return sleeps_;
  }

 private:
  void worker_loop(int participant);
  void stop_and_join();
  void drain(const std::function<void(std::int64_t)>& chunk, int participant);
  void finish_chunk();

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // one job at a time
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(std::int64_t)>* job_ = nullptr;
  std::uint64_t generation_ = 0;
  // generation_ for the lock-free spin of idle workers (changes with it, and on stop).
  std::atomic<std::uint64_t> published_{0};
  // Bumped by park(); a worker stops spinning when it changes.
  std::atomic<std::uint64_t> parked_{0};
  std::uint64_t published_parked_ = 0;  // parked_ when the job was published; under mutex_
  const std::chrono::microseconds worker_spin_;
  // How long the caller watches for the workers' last chunks.
  static constexpr std::chrono::microseconds kCallerSpin{200};
  std::uint64_t sleeps_ = 0;  // under mutex_
  std::int64_t total_ = 0;
  std::atomic<std::int64_t> next_{0};
  // Jobs of at most kAffine chunks: participant p (the caller is 0, worker k
  // is k + 1) first takes chunks p, p + size(), ..., so a chain of jobs over
  // the same data gives each thread the same parts of it each time (they stay
  // in its core's caches), then claims whatever the others have not started.
  static constexpr std::int64_t kAffine = 64;
  std::atomic<bool> claimed_[kAffine] = {};
  // Changed under mutex_; atomic so that the caller can watch them without it.
  std::atomic<std::int64_t> pending_{0};
  std::atomic<int> active_workers_{0};
  std::exception_ptr error_;
  bool stop_ = false;
};

}  // namespace tenferro::detail
