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
#include <thread>
#include <vector>

namespace tenferro::detail {

class ThreadPool {
 public:
  /// Starts num_threads - 1 workers; if the system refuses one, joins those
  /// already started and throws OutOfMemory.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  /// Runs chunk(i) for i in [0, num_chunks); returns when all are done.
  void run(std::int64_t num_chunks, const std::function<void(std::int64_t)>& chunk);
  /// True on a pool worker or on a caller while it runs a job.
  static bool inside_task();

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
  static constexpr std::chrono::microseconds kSpin{200};
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
