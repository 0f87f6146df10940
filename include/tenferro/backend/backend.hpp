#pragma once
// The backend interface. A backend owns memory, threads and vendor libraries
// for one placement, and runs the kernels below. The direct operations
// (elementwise.hpp, reduce.hpp, structural.hpp, ...) validate their operands,
// apply the dtype and shape rules, allocate outputs with empty() and then
// call these kernels through a Backend&: they never name a concrete backend,
// so a CUDA backend slots in beside the CPU one by implementing this class.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "tenferro/core/id.hpp"
#include "tenferro/tensor/tensor.hpp"

namespace tenferro {

// Defined with their ops (elementwise.hpp, reduce.hpp, fused.hpp).
enum class UnaryOp : unsigned char;
enum class BinaryOp : unsigned char;
enum class ReduceOp : unsigned char;
struct FusedElementwise;
class CheckedFusedPass;

/// A checked fused pass (fused.hpp) as one backend runs it: what the backend
/// works out of the pass alone (which steps it runs together, how it blocks
/// them) worked out once, by Backend::prepare_fused, for many runs. The
/// traced tier's prepared programs hold their fused groups so. Valid while
/// the backend that made it lives; run() may be called from several threads
/// at once.
class PreparedFusedPass {
 public:
  PreparedFusedPass() = default;
  PreparedFusedPass(const PreparedFusedPass&) = delete;
  PreparedFusedPass& operator=(const PreparedFusedPass&) = delete;
  virtual ~PreparedFusedPass();
  /// What CheckedFusedPass::run(externals, shape, backend, block) gives, bit
  /// for bit, without its checks: the caller guarantees what run() checks
  /// (the externals' count and dtypes, that they broadcast to `shape` and
  /// the backend reads them, `block` in [1, kMaxFusionBlock]).
  virtual Tensor run(std::span<const Tensor> externals, std::span<const std::int64_t> shape,
                     std::int64_t block) const = 0;
};

/// One operand of Backend::gemm. Element (0, 0) of batch 0 lives at `data`;
/// the stored matrix is column-major with leading dimension `ld` and is read
/// transposed when `trans` is set. `batch_strides` (elements, any sign, 0 for
/// a broadcast axis) move between the matrices of the batch.
struct GemmOperand {
  const void* data = nullptr;
  bool trans = false;
  std::int64_t ld = 1;
  Strides batch_strides;
};

/// A session one thread holds on one backend (Backend::enter_session):
/// while it lives, the backend's work from this thread runs in it (the CPU
/// backend applies its thread setting to BLAS once, at entry). Released by
/// its destructor, on the thread that entered it.
class BackendSession {
 public:
  BackendSession() = default;
  BackendSession(const BackendSession&) = delete;
  BackendSession& operator=(const BackendSession&) = delete;
  virtual ~BackendSession();
};

class Backend {
 public:
  Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;
  virtual ~Backend();

  /// What kind of backend this is, in a word ("cpu"): messages name it.
  /// A string with static storage duration (a literal).
  virtual std::string_view kind() const = 0;
  /// The engine a runtime registers this backend as
  /// (Runtime::builder().backend(b)); by default "tenferro.<kind>.v1".
  virtual EngineId engine_id() const;
  /// Enters a session on this backend for the calling thread. Entering one
  /// while this thread already holds a session of this backend is a
  /// RuntimeState error, unless `reuse`: then the session held goes on and
  /// the one returned enters nothing. The default session holds nothing (a
  /// backend with no per-thread state).
  virtual std::unique_ptr<BackendSession> enter_session(bool reuse = false);
  /// Where tensors allocated by this backend live.
  virtual Placement placement() const = 0;
  /// Uninitialised compact column-major tensor in this backend's memory.
  virtual Tensor empty(std::span<const std::int64_t> shape, DType dtype) = 0;
  /// Whether this backend can read tensors placed at `p` without a transfer.
  virtual bool accepts(Placement p) const { return p == placement(); }
  Tensor empty(std::initializer_list<std::int64_t> shape, DType dtype) {
    return empty(std::span<const std::int64_t>(shape.begin(), shape.size()), dtype);
  }

  // ---- kernels -------------------------------------------------------------
  // What the direct ops call once they have validated. For every kernel the
  // operands are defined, readable by this backend (accepts()), already in
  // the dtype the kernel computes in and of the shape it names (broadcast
  // views allowed); `out` was allocated by the caller, has distinct elements,
  // and overlaps no operand unless it is that operand's exact view. Kernels
  // may run on several threads and throw only for data-dependent errors
  // (an index out of range). A backend that lacks a kernel keeps the default,
  // which throws Unsupported naming the op and this backend's kind.

  /// dst[i] = src[i] converted to dst's dtype (complex -> real keeps the real
  /// part, x -> bool is x != 0); one shape, any strides; no overlap.
  virtual void copy(const Tensor& src, const Tensor& dst);
  /// As copy, but with cast()'s lossy conversion rules.
  virtual void cast(const Tensor& src, const Tensor& dst);
  /// Every element of dst = value converted to dst's dtype.
  virtual void fill(const Tensor& dst, Scalar value);
  /// out = op(x); x is in the op's compute dtype, out in its result dtype.
  virtual void unary(UnaryOp op, const Tensor& x, const Tensor& out);
  /// out = op(a, b); a and b in the compute dtype, broadcast to out's shape.
  virtual void binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out);
  /// out = polygamma(n, x), x in out's (floating) dtype.
  virtual void polygamma(std::int64_t n, const Tensor& x, const Tensor& out);
  /// out = cond ? a : b; cond bool, a and b in out's dtype, all of out's shape.
  virtual void where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out);
  /// out = min(max(x, lo), hi) with absent bounds skipped; x real or integer.
  virtual void clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi,
                     const Tensor& out);
  /// Zeroes, in place, the part of every matrix [m, n, batch...] of t outside
  /// the triangle on or below (keep_lower) / on or above diagonal k.
  virtual void zero_triangle(const Tensor& t, std::int64_t k, bool keep_lower);
  /// out = op over the axes marked in `reduced` of x (x and out in the
  /// result dtype; out's shape has extent 1 or drops each reduced axis).
  virtual void reduce(ReduceOp op, const Tensor& x, std::span<const bool> reduced,
                      const Tensor& out);
  /// Variance (standard deviation when `root`) over the marked axes with
  /// `correction` (1 unbiased); x floating or complex, out real.
  virtual void variance(const Tensor& x, std::span<const bool> reduced, double correction,
                        bool root, const Tensor& out);
  /// out (i64) = index of the largest (is_max) or smallest value along `axis`,
  /// the first one on ties, NaN winning; the axis is non-empty.
  virtual void arg_reduce(bool is_max, const Tensor& x, std::int64_t axis, const Tensor& out);
  /// In place along `axis`: running sum or product, from the end when `reverse`.
  virtual void cumulate(const Tensor& t, std::int64_t axis, bool product, bool reverse);
  /// out = the running sum or product of x along `axis` (out: x's shape, the
  /// cumulative dtype). The default copies x into out and calls cumulate; a
  /// backend may read x and write out in one pass.
  virtual void cumulate_into(const Tensor& x, const Tensor& out, std::int64_t axis, bool product,
                             bool reverse);
  /// out (i64) = the first out.shape()[axis] indices of a stable sort of each
  /// lane of x along `axis`; x real, compact.
  virtual void argsort(const Tensor& x, std::int64_t axis, bool descending, const Tensor& out);
  /// indices (i64) as argsort gives them, and values (x's dtype, the shape
  /// of indices) = x at those indices along `axis`: sort and topk. The
  /// default runs argsort, then gather.
  virtual void sort_into(const Tensor& x, std::int64_t axis, bool descending, const Tensor& values,
                         const Tensor& indices);
  /// A compact i64 copy of `index` (i32 or i64) with negative entries
  /// counted from the end of an axis of `extent`; an entry outside
  /// [-extent, extent) is AxisOutOfBounds naming `op` and `axis`.
  virtual Tensor normalize_indices(const Tensor& index, std::int64_t extent, std::int64_t axis,
                                   const char* op);
  /// out[..., i, ...] = x[..., index[..., i, ...], ...] along `axis`; index
  /// i64, in range, of out's shape.
  virtual void gather(const Tensor& x, const Tensor& index, std::int64_t axis, const Tensor& out);
  /// out[..., index[..., i, ...], ...] += src[..., i, ...] along `axis`.
  virtual void scatter_add(const Tensor& src, const Tensor& index, std::int64_t axis,
                           const Tensor& out);
  /// For every index b of `batch_shape`: C_b = op(A_b) op(B_b) with op(A_b)
  /// m x k and op(B_b) k x n, C compact [m, n, batch...] at `c`; m, n, k > 0,
  /// dtype not bool.
  virtual void gemm(DType dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                    const GemmOperand& a, const GemmOperand& b, void* c, const Shape& batch_shape);
  /// Whether this backend runs fused passes (fused_elementwise and
  /// fused_reduce_all): the traced tier fuses elementwise chains, and the
  /// composites run fused, only on a backend that does.
  virtual bool runs_fused_passes() const { return false; }
  /// Runs a validated fused pass (fused.hpp) into the compact `out`, every
  /// external broadcasting to out's shape, in blocks of `block` elements.
  virtual void fused_elementwise(const FusedElementwise& pass, std::span<const Tensor> externals,
                                 std::int64_t block, const Tensor& out);
  /// Runs a validated fused pass over `shape` and reduces its result over
  /// every element into the rank-0 `out` (op Sum, Prod or Mean; the last
  /// step's dtype inexact, out's the same), as reduce() over all axes of
  /// fused_elementwise's result would.
  virtual void fused_reduce_all(const FusedElementwise& pass, std::span<const Tensor> externals,
                                std::span<const std::int64_t> shape, ReduceOp op,
                                std::int64_t block, const Tensor& out);
  /// `pass` prepared for runs on this backend. The default keeps a copy and
  /// runs it through empty() and fused_elementwise / fused_reduce_all.
  virtual std::unique_ptr<PreparedFusedPass> prepare_fused(const CheckedFusedPass& pass);

  /// Copies `src` (this backend's, any strides) into compact column-major
  /// host memory at `dst` (src.numel() elements of src's dtype): the one way
  /// results come back from a backend's memory. The default reads a tensor
  /// in host memory; a backend with memory of its own implements it.
  virtual void read(const Tensor& src, void* dst);
  /// Copies compact column-major host memory at `src` (dst.numel() elements
  /// of dst's dtype) into `dst` (this backend's, any strides): the way host
  /// data enters a backend's memory. The default writes host memory.
  virtual void write(const void* src, const Tensor& dst);

  /// State that code built on this backend keeps for as long as the backend
  /// lives: the object stored under `key`, made by `make()` on first use
  /// (made outside any lock; if two threads race, one object wins and both
  /// get it). The direct tier of the families keeps its runtime here, so
  /// plans persist across calls (EagerRuntime::attached). Thread-safe.
  /// Attachments are released before the backend's own resources.
  std::shared_ptr<void> attachment(std::string_view key,
                                   const std::function<std::shared_ptr<void>()>& make);

 protected:
  /// Releases every attachment; a derived backend calls it first in its
  /// destructor, while its memory and threads still exist.
  void release_attachments();
  /// Unsupported: `op` needs `kernel`, which this backend does not have
  /// (what the defaults throw).
  [[noreturn]] void no_kernel(std::string_view op, std::string_view kernel) const;

 private:
  struct Attachments;
  std::unique_ptr<Attachments> attachments_;
};

/// A compact copy of any tensor on `backend` (its contiguous()).
Tensor copy(const Tensor& x, Backend& backend);
/// A compact host copy of `t`, read through `backend` (Backend::read): `t`
/// itself when it is compact host memory.
Tensor to_host(const Tensor& t, Backend& backend);
/// A host tensor in `backend`'s memory (Backend::write): the tensor itself
/// when the backend reads host memory.
Tensor from_host(const Tensor& t, Backend& backend);
/// A tensor of `shape` filled with `value` (converted to `dtype`), in the
/// backend's memory.
Tensor full(std::span<const std::int64_t> shape, Scalar value, DType dtype, Backend& backend);
inline Tensor full(std::initializer_list<std::int64_t> shape, Scalar value, DType dtype,
                   Backend& backend) {
  return full(std::span<const std::int64_t>(shape.begin(), shape.size()), value, dtype, backend);
}

namespace detail {
/// The operand check of every operation: `x` is defined (InvalidArgument)
/// and readable by `backend` (ContextMismatch: a tensor of another device),
/// naming `op` and `what`.
[[noreturn]] void operand_error(const Tensor& x, const Backend& backend, std::string_view op,
                                std::string_view what);
inline void require_operand(const Tensor& x, const Backend& backend, std::string_view op,
                            std::string_view what = "input") {
  if (!x.defined() || !backend.accepts(x.placement())) [[unlikely]] {
    operand_error(x, backend, op, what);
  }
}
}  // namespace detail

}  // namespace tenferro
