#include "einsum/semiring_gemm.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "einsum/semiring_kernel.hpp"
#include "tenferro/core/error.hpp"

namespace tenferro::einsum_detail {

namespace semiring {

namespace {

// The packed panels of one run live in memory kept per thread between calls:
// a fresh allocation per call costs page faults (a 192^2 product spent more
// time in them than computing). The block sizes bound it to a few MiB per
// thread.
class PackArena {
 public:
  PackArena() = default;
  PackArena(const PackArena&) = delete;
  PackArena& operator=(const PackArena&) = delete;
  ~PackArena() { release(); }
  /// At least `bytes` bytes aligned to 64, valid until the next call.
  char* get(std::size_t bytes) {
    if (bytes > bytes_) {
      release();
      data_ = static_cast<char*>(::operator new (bytes, std::align_val_t{64}));
      bytes_ = bytes;
    }
    return data_;
  }

 private:
  void release() {
    if (data_ != nullptr) ::operator delete (data_, std::align_val_t{64});
    data_ = nullptr;
    bytes_ = 0;
  }
  char* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace

char* thread_pack_arena(std::size_t bytes) {
  thread_local PackArena arena;
  return arena.get(bytes);
}

}  // namespace semiring

namespace {

using namespace semiring;

std::atomic<int> g_isa_override{0};

struct Kernel {
  ColumnsFn run;
  int nr;  // columns of a register tile: the grain of a column split
};

#if TENFERRO_SEMIRING_X86
bool cpu_supports_avx512f() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return has;
}
bool cpu_supports_avx2() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return has;
}
#endif

template <class R, Mode M>
Kernel pick_kernel() {
  using T = typename R::value_type;
  const int forced = g_isa_override.load(std::memory_order_relaxed);
#if TENFERRO_SEMIRING_X86
  if ((forced == 0 || forced == 512) && cpu_supports_avx512f()) {
    return {&avx512::columns<R, M>, Tile<T, 64, M>::kNR};
  }
  if ((forced == 0 || forced >= 256) && cpu_supports_avx2()) {
    return {&avx2::columns<R, M>, Tile<T, 32, M>::kNR};
  }
#endif
  (void)forced;
  return {&baseline::columns<R, M>, Tile<T, 16, M>::kNR};
}

// ---- batches and threads -------------------------------------------------------------

// Below this many element operations a call runs on the calling thread.
constexpr double kParallelWork = 1 << 20;

// Element offsets of every matrix of the batch (column-major batch order) for
// each operand's strides.
std::vector<std::int64_t> batch_offsets(const Shape& batch_shape, const Strides& strides,
                                        std::int64_t count) {
  std::vector<std::int64_t> off(static_cast<std::size_t>(count), 0);
  const std::size_t rank = batch_shape.size();
  std::vector<std::int64_t> index(rank, 0);
  std::int64_t cur = 0;
  for (std::int64_t b = 0; b < count; ++b) {
    off[static_cast<std::size_t>(b)] = cur;
    for (std::size_t d = 0; d < rank; ++d) {
      if (++index[d] < batch_shape[d]) {
        cur += strides[d];
        break;
      }
      cur -= strides[d] * (batch_shape[d] - 1);
      index[d] = 0;
    }
  }
  return off;
}

struct Problem {
  std::int64_t m, n, k;
  std::size_t value_size;
  const GemmOperand* a;
  const GemmOperand* b;
  const GemmOperand* a_counts;
  const GemmOperand* b_counts;
  void* c;
  double* c_counts;
  std::int64_t* argbest;
  const Shape* batch_shape;
};

void check_batch(const char* op, const Shape& batch_shape,
                 std::initializer_list<const GemmOperand*> operands) {
  for (const GemmOperand* o : operands) {
    if (o->batch_strides.size() != batch_shape.size()) {
      fail(ErrorKind::InvalidArgument, op, "an operand has ", o->batch_strides.size(),
           " batch strides for a batch of rank ", batch_shape.size(),
           "; give one stride per batch axis (0 to broadcast)");
    }
    if (o->ld < 1) {
      fail(ErrorKind::InvalidArgument, op, "leading dimension ", o->ld, " is not positive");
    }
  }
}

void run_batched(const Kernel& kernel, const Problem& pr, CpuBackend* threads) {
  std::int64_t count = 1;
  for (std::int64_t e : *pr.batch_shape) count *= e;
  if (count == 0 || pr.m == 0 || pr.n == 0) return;
  const bool counting = pr.a_counts != nullptr;
  const auto offs = [&](const GemmOperand* o) {
    return o ? batch_offsets(*pr.batch_shape, o->batch_strides, count)
             : std::vector<std::int64_t>{};
  };
  const std::vector<std::int64_t> a_off = offs(pr.a), b_off = offs(pr.b),
                                  ac_off = offs(pr.a_counts), bc_off = offs(pr.b_counts);
  const auto operand = [](const GemmOperand* o, std::int64_t elements, std::size_t size) {
    return Operand{static_cast<const char*>(o->data) + elements * static_cast<std::int64_t>(size),
                   o->trans, o->ld};
  };
  const std::int64_t mn = pr.m * pr.n;
  const auto job_for = [&](std::int64_t b) {
    const auto i = static_cast<std::size_t>(b);
    Job job;
    job.m = pr.m;
    job.n = pr.n;
    job.k = pr.k;
    job.a = operand(pr.a, a_off[i], pr.value_size);
    job.b = operand(pr.b, b_off[i], pr.value_size);
    if (counting) {
      job.a_counts = operand(pr.a_counts, ac_off[i], sizeof(double));
      job.b_counts = operand(pr.b_counts, bc_off[i], sizeof(double));
      job.c_counts = pr.c_counts + b * mn;
    }
    job.c = static_cast<char*>(pr.c) + b * mn * static_cast<std::int64_t>(pr.value_size);
    job.argbest = pr.argbest ? pr.argbest + b * mn : nullptr;
    return job;
  };

  const double work = static_cast<double>(mn) * static_cast<double>(pr.k) * count;
  const int nthreads = threads ? threads->num_threads() : 1;
  if (nthreads <= 1 || work < kParallelWork) {
    for (std::int64_t b = 0; b < count; ++b) kernel.run(job_for(b), 0, pr.n);
    return;
  }
  // Units: (matrix, column piece). A batch smaller than twice the thread
  // count splits each matrix's columns (whole register tiles) into pieces,
  // two per thread: a thread that starts late (another process on its core)
  // leaves the others less to wait for, and each piece packs all of A again
  // (about 2% of a 1024^3 product's time).
  const std::int64_t panels = (pr.n + kernel.nr - 1) / kernel.nr;
  const std::int64_t want = 2 * static_cast<std::int64_t>(nthreads);
  const std::int64_t pieces =
      count >= want ? 1 : std::min<std::int64_t>(panels, (want + count - 1) / count);
  const std::int64_t units = count * pieces;
  const double unit_work = work / static_cast<double>(units);
  const auto grain = static_cast<std::int64_t>(std::max(1.0, kParallelWork / unit_work));
  threads->parallel_for(units, grain, [&](std::int64_t u0, std::int64_t u1) {
    for (std::int64_t u = u0; u < u1; ++u) {
      const std::int64_t b = u / pieces, q = u % pieces;
      const std::int64_t j0 = std::min(pr.n, panels * q / pieces * kernel.nr);
      const std::int64_t j1 = std::min(pr.n, panels * (q + 1) / pieces * kernel.nr);
      if (j0 < j1) kernel.run(job_for(b), j0, j1);
    }
  });
}

template <class T>
void fill(void* c, std::int64_t count, T value) {
  std::fill_n(static_cast<T*>(c), count, value);
}

std::int64_t numel(std::int64_t m, std::int64_t n, const Shape& batch_shape) {
  std::int64_t count = m * n;
  for (std::int64_t e : batch_shape) count *= e;
  return count;
}

template <class R>
Kernel pick_tropical(bool track) {
  return track ? pick_kernel<R, Mode::Track>() : pick_kernel<R, Mode::Plain>();
}

}  // namespace

void set_semiring_isa_for_tests(int isa) {
  g_isa_override.store(isa, std::memory_order_relaxed);
}

void semiring_gemm(Semiring s, DType dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                   const GemmOperand& a, const GemmOperand& b, void* c, const Shape& batch_shape,
                   std::int64_t* argbest, CpuBackend* threads) {
  constexpr const char* kOp = "semiring_gemm";
  if (s == Semiring::Standard) {
    fail(ErrorKind::Unsupported, kOp,
         "the standard semiring is an ordinary GEMM; call Backend::gemm (tenferro::matmul)");
  }
  if (s == Semiring::OrAnd && dtype != DType::Bool) {
    fail(ErrorKind::DTypeMismatch, kOp, "or_and runs over bool, got ", name(dtype),
         "; compare the operands with zero first (tenferro::not_equal)");
  }
  if ((s == Semiring::MaxPlus || s == Semiring::MinPlus) && dtype != DType::F32 &&
      dtype != DType::F64 && dtype != DType::I64) {
    fail(ErrorKind::DTypeMismatch, kOp, name(s), " runs over f32, f64 and i64, got ", name(dtype),
         "; convert the operands (tenferro::cast) to one of those");
  }
  if (s == Semiring::OrAnd && argbest != nullptr) {
    fail(ErrorKind::InvalidArgument, kOp,
         "argbest is defined for max_plus and min_plus only; pass nullptr for or_and");
  }
  if (m < 0 || n < 0 || k < 0) {
    fail(ErrorKind::InvalidArgument, kOp, "negative size m = ", m, ", n = ", n, ", k = ", k);
  }
  check_batch(kOp, batch_shape, {&a, &b});
  const std::int64_t total = numel(m, n, batch_shape);
  if (k == 0) {
    if (argbest) std::fill_n(argbest, total, 0);
    switch (dtype) {
      case DType::F32:
        return fill<float>(c, total,
                           s == Semiring::MaxPlus ? MaxPlusF32::zero() : MinPlusF32::zero());
      case DType::F64:
        return fill<double>(c, total,
                            s == Semiring::MaxPlus ? MaxPlusF64::zero() : MinPlusF64::zero());
      case DType::I64:
        return fill<std::int64_t>(c, total,
                                  s == Semiring::MaxPlus ? MaxPlusI64::zero() : MinPlusI64::zero());
      default:
        return fill<std::uint8_t>(c, total, 0);
    }
  }
  const bool track = argbest != nullptr;
  const bool max = s == Semiring::MaxPlus;
  Kernel kernel{};
  switch (dtype) {
    case DType::F32:
      kernel = max ? pick_tropical<MaxPlusF32>(track) : pick_tropical<MinPlusF32>(track);
      break;
    case DType::F64:
      kernel = max ? pick_tropical<MaxPlusF64>(track) : pick_tropical<MinPlusF64>(track);
      break;
    case DType::I64:
      kernel = max ? pick_tropical<MaxPlusI64>(track) : pick_tropical<MinPlusI64>(track);
      break;
    default:
      kernel = pick_kernel<OrAnd, Mode::Plain>();
      break;
  }
  const Problem pr{m,       n,       k, itemsize(dtype), &a,      &b,
                   nullptr, nullptr, c, nullptr,         argbest, &batch_shape};
  run_batched(kernel, pr, threads);
}

void counting_gemm(DType value_dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                   const GemmOperand& a_values, const GemmOperand& a_counts,
                   const GemmOperand& b_values, const GemmOperand& b_counts, void* c_values,
                   double* c_counts, const Shape& batch_shape, CpuBackend* threads) {
  constexpr const char* kOp = "counting_gemm";
  if (value_dtype != DType::F32 && value_dtype != DType::F64 && value_dtype != DType::I64) {
    fail(ErrorKind::DTypeMismatch, kOp, "the counting tropical values are f32, f64 or i64, got ",
         name(value_dtype), "; convert them (tenferro::cast) to one of those");
  }
  if (m < 0 || n < 0 || k < 0) {
    fail(ErrorKind::InvalidArgument, kOp, "negative size m = ", m, ", n = ", n, ", k = ", k);
  }
  check_batch(kOp, batch_shape, {&a_values, &a_counts, &b_values, &b_counts});
  const std::int64_t total = numel(m, n, batch_shape);
  if (k == 0) {
    std::fill_n(c_counts, total, 0.0);
    switch (value_dtype) {
      case DType::F32:
        return fill<float>(c_values, total, MaxPlusF32::zero());
      case DType::F64:
        return fill<double>(c_values, total, MaxPlusF64::zero());
      default:
        return fill<std::int64_t>(c_values, total, MaxPlusI64::zero());
    }
  }
  Kernel kernel{};
  switch (value_dtype) {
    case DType::F32:
      kernel = pick_kernel<MaxPlusF32, Mode::Count>();
      break;
    case DType::F64:
      kernel = pick_kernel<MaxPlusF64, Mode::Count>();
      break;
    default:
      kernel = pick_kernel<MaxPlusI64, Mode::Count>();
      break;
  }
  const Problem pr{m,         n,         k,         itemsize(value_dtype),
                   &a_values, &b_values, &a_counts, &b_counts,
                   c_values,  c_counts,  nullptr,   &batch_shape};
  run_batched(kernel, pr, threads);
}

}  // namespace tenferro::einsum_detail
