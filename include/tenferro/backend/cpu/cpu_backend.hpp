#pragma once
// The CPU backend: a thread pool (whose size also drives OpenBLAS), a bounded
// size-class buffer pool, and the BLAS/LAPACK provider (OpenBLAS from Debian).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "tenferro/backend/backend.hpp"

namespace tenferro {

struct CpuBackendOptions {
  /// Threads for our kernels and for BLAS; 0 means the number of cores.
  int num_threads = 0;
  /// Largest number of bytes the buffer pool keeps for reuse (freed buffers
  /// beyond it go back to the system). Reuse spares large buffers the page
  /// faults of fresh memory (about 0.4 ms per MiB on the project's machine):
  /// a network whose intermediates reach 256 MiB ran 1.5x faster with 2 GiB
  /// than with 512 MiB. Lower it where memory is short; reset_pool() frees
  /// what is cached.
  std::size_t pool_max_bytes = std::size_t{2} << 30;
  /// Elementwise and reduction kernels go parallel only above this many elements.
  std::int64_t parallel_threshold = std::int64_t{1} << 16;
};

struct BufferPoolStats {
  std::uint64_t hits = 0;     // allocations served from the pool
  std::uint64_t misses = 0;   // allocations that went to the heap
  std::uint64_t returns = 0;  // buffers given back and kept
  std::uint64_t drops = 0;    // buffers given back and freed (pool full)
  std::size_t cached_bytes = 0;
  std::size_t cached_buffers = 0;
  std::size_t max_bytes = 0;
};

class CpuBackend;

/// An entered CPU session: while it lives, ops on its backend from this thread
/// reuse it instead of entering one per op. Entering a second session of the
/// same backend on the same thread is a RuntimeState error. Not movable.
class CpuSession final : public BackendSession {
 public:
  explicit CpuSession(CpuBackend& backend);
  ~CpuSession() override;

  CpuBackend& backend() const { return backend_; }
  /// The session this thread has entered on `backend`, or nullptr.
  static CpuSession* current(const CpuBackend& backend);

 private:
  CpuBackend& backend_;
  CpuSession* previous_;
};

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(CpuBackendOptions options = {});
  ~CpuBackend() override;

  std::string_view kind() const override { return "cpu"; }
  EngineId engine_id() const override { return cpu_engine_id(); }
  Placement placement() const override { return Placement{}; }
  /// Any host memory (wrapped buffers of every host ordinal included).
  bool accepts(Placement p) const override { return p.is_host(); }
  /// A CpuSession (with `reuse`, nothing when this thread holds one already).
  std::unique_ptr<BackendSession> enter_session(bool reuse = false) override;
  using Backend::empty;
  /// Pooled allocation (reuses a cached buffer of the same size class).
  Tensor empty(std::span<const std::int64_t> shape, DType dtype) override;

  int num_threads() const;
  /// Sets our pool size and the OpenBLAS thread count (applied on session entry).
  /// Safe while other threads run ops: jobs already running finish on the old
  /// pool, later ones use the new one. InvalidArgument for n < 0 or n > 4096;
  /// OutOfMemory, with the old pool kept, if the system refuses the threads.
  void set_num_threads(int n);
  std::int64_t parallel_threshold() const { return options_.parallel_threshold; }

  BufferPoolStats pool_stats() const;
  /// Frees every cached buffer and zeroes the counters.
  void reset_pool();

  /// Enters a session on this thread (RuntimeState if one is already active).
  std::unique_ptr<CpuSession> session() { return std::make_unique<CpuSession>(*this); }

  // ---- the kernels of Backend, on our threads, BLAS and vector code ----------
  void copy(const Tensor& src, const Tensor& dst) override;
  void cast(const Tensor& src, const Tensor& dst) override;
  void fill(const Tensor& dst, Scalar value) override;
  void unary(UnaryOp op, const Tensor& x, const Tensor& out) override;
  void binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) override;
  void polygamma(std::int64_t n, const Tensor& x, const Tensor& out) override;
  void where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) override;
  void clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi,
             const Tensor& out) override;
  void zero_triangle(const Tensor& t, std::int64_t k, bool keep_lower) override;
  void reduce(ReduceOp op, const Tensor& x, std::span<const bool> reduced,
              const Tensor& out) override;
  void variance(const Tensor& x, std::span<const bool> reduced, double correction, bool root,
                const Tensor& out) override;
  void arg_reduce(bool is_max, const Tensor& x, std::int64_t axis, const Tensor& out) override;
  void cumulate(const Tensor& t, std::int64_t axis, bool product, bool reverse) override;
  void cumulate_into(const Tensor& x, const Tensor& out, std::int64_t axis, bool product,
                     bool reverse) override;
  void argsort(const Tensor& x, std::int64_t axis, bool descending, const Tensor& out) override;
  void sort_into(const Tensor& x, std::int64_t axis, bool descending, const Tensor& values,
                 const Tensor& indices) override;
  Tensor normalize_indices(const Tensor& index, std::int64_t extent, std::int64_t axis,
                           const char* op) override;
  void gather(const Tensor& x, const Tensor& index, std::int64_t axis, const Tensor& out) override;
  void scatter_add(const Tensor& src, const Tensor& index, std::int64_t axis,
                   const Tensor& out) override;
  void gemm(DType dtype, std::int64_t m, std::int64_t n, std::int64_t k, const GemmOperand& a,
            const GemmOperand& b, void* c, const Shape& batch_shape) override;
  bool runs_fused_passes() const override { return true; }
  void fused_elementwise(const FusedElementwise& pass, std::span<const Tensor> externals,
                         std::int64_t block, const Tensor& out) override;
  void fused_reduce_all(const FusedElementwise& pass, std::span<const Tensor> externals,
                        std::span<const std::int64_t> shape, ReduceOp op, std::int64_t block,
                        const Tensor& out) override;
  /// Works out once which steps run together on raw pointers and how large
  /// a block fits the L1 cache (what fused_elementwise redoes per call).
  std::unique_ptr<PreparedFusedPass> prepare_fused(const CheckedFusedPass& pass) override;

  // ---- for backend and kernel authors --------------------------------------
  /// Runs body(begin, end) over [0, n) in chunks of at least `grain`, on the
  /// pool when there is more than one chunk and we are not already inside a
  /// pool task (one level of parallelism). Exceptions from body propagate.
  template <class Body>
  void parallel_for(std::int64_t n, std::int64_t grain, Body&& body) {
    // Small work runs inline: no std::function, no pool hand-off.
    if (n <= 0) return;
    if (n <= grain || num_threads_.load(std::memory_order_relaxed) == 1) {
      body(std::int64_t{0}, n);
      return;
    }
    parallel_for_pool(n, grain,
                      std::function<void(std::int64_t, std::int64_t)>(std::forward<Body>(body)));
  }
  void parallel_for_pool(std::int64_t n, std::int64_t grain,
                         const std::function<void(std::int64_t, std::int64_t)>& body);
  /// Applies the thread setting to OpenBLAS (done on session entry).
  void apply_blas_threads();
  /// Call before handing the cores to a library that runs threads of its own
  /// (a BLAS or LAPACK call large enough to go parallel, a threaded FFTW
  /// plan): our pool's idle workers, which watch for the next job for a few
  /// milliseconds after each one, stop watching and sleep instead of
  /// competing with that library's threads.
  void park_threads();

 private:
  friend class CpuSession;
  struct Impl;
  CpuBackendOptions options_;
  std::atomic<int> num_threads_{1};
  std::unique_ptr<Impl> impl_;
};

/// For op implementations: the CPU backend behind `backend`, or an Unsupported
/// error naming `op` when it is another kind.
CpuBackend& require_cpu(Backend& backend, const char* op);

/// Enters a session for the duration of one op unless this thread already has
/// one on the backend.
class ScopedCpuSession {
 public:
  explicit ScopedCpuSession(CpuBackend& backend);
  ~ScopedCpuSession();
  ScopedCpuSession(const ScopedCpuSession&) = delete;
  ScopedCpuSession& operator=(const ScopedCpuSession&) = delete;

 private:
  std::optional<CpuSession> owned_;
};

}  // namespace tenferro
