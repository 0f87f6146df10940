#include "backend/cpu/gemm.hpp"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <span>
#include <type_traits>
#include <vector>

#include "internal/dispatch.hpp"
#include "internal/strided.hpp"

namespace tenferro::cpu {

namespace {

// OpenBLAS runs GEMMs below about 64^3 multiply-adds on one thread; such
// batches are split across our pool instead (one level of parallelism).
constexpr double kSmallGemmWork = 64.0 * 64.0 * 64.0;
// Rough cost of one GEMM call in multiply-add units, for the batch grain.
constexpr std::int64_t kCallOverhead = 256;

// Only the cblas forms taking alpha/beta by pointer are used for complex; no
// BLAS function returning a complex value by value is ever called.
void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k,
               const float* a, blasint lda, const float* b, blasint ldb, float* c, blasint ldc) {
  cblas_sgemm(CblasColMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
}
void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k,
               const double* a, blasint lda, const double* b, blasint ldb, double* c, blasint ldc) {
  cblas_dgemm(CblasColMajor, ta, tb, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc);
}
void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k,
               const c64_t* a, blasint lda, const c64_t* b, blasint ldb, c64_t* c, blasint ldc) {
  const c64_t one(1.0f, 0.0f), zero(0.0f, 0.0f);
  cblas_cgemm(CblasColMajor, ta, tb, m, n, k, &one, a, lda, b, ldb, &zero, c, ldc);
}
void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k,
               const c128_t* a, blasint lda, const c128_t* b, blasint ldb, c128_t* c, blasint ldc) {
  const c128_t one(1.0, 0.0), zero(0.0, 0.0);
  cblas_zgemm(CblasColMajor, ta, tb, m, n, k, &one, a, lda, b, ldb, &zero, c, ldc);
}

blasint to_blasint(std::int64_t v, const char* what) {
  if (v > static_cast<std::int64_t>(INT_MAX)) {
    fail(ErrorKind::Unsupported, "dot_general", what, " = ", v,
         " exceeds the 32-bit BLAS integer range; split the contraction into smaller pieces");
  }
  return static_cast<blasint>(v);
}

// Element offsets of every matrix of the batch, in column-major batch order.
void batch_offsets(const Shape& batch_shape, const GemmOperand& a, const GemmOperand& b,
                   std::vector<std::int64_t>& a_off, std::vector<std::int64_t>& b_off) {
  if (a.batch_strides.size() != batch_shape.size() ||
      b.batch_strides.size() != batch_shape.size()) {
    throw Error(ErrorKind::Internal, "dot_general", "batch strides do not match the batch rank");
  }
  detail::StridedPlan<2> plan(batch_shape, {a.batch_strides.span(), b.batch_strides.span()});
  a_off.resize(static_cast<std::size_t>(plan.numel));
  b_off.resize(static_cast<std::size_t>(plan.numel));
  std::size_t pos = 0;
  plan.run([&](std::int64_t n, const auto& off, const auto& inc) {
    for (std::int64_t i = 0; i < n; ++i, ++pos) {
      a_off[pos] = off[0] + i * inc[0];
      b_off[pos] = off[1] + i * inc[1];
    }
  });
}

template <class T>
void blas_batched(CpuBackend& backend, std::int64_t m, std::int64_t n, std::int64_t k,
                  const GemmOperand& a, const GemmOperand& b, T* c,
                  std::span<const std::int64_t> a_off, std::span<const std::int64_t> b_off) {
  const blasint bm = to_blasint(m, "m"), bn = to_blasint(n, "n"), bk = to_blasint(k, "k");
  const blasint lda = to_blasint(a.ld, "lda"), ldb = to_blasint(b.ld, "ldb");
  const CBLAS_TRANSPOSE ta = a.trans ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = b.trans ? CblasTrans : CblasNoTrans;
  const T* pa = static_cast<const T*>(a.data);
  const T* pb = static_cast<const T*>(b.data);
  const std::int64_t batches = static_cast<std::int64_t>(a_off.size());
  auto run = [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) {
      const auto u = static_cast<std::size_t>(i);
      blas_gemm(ta, tb, bm, bn, bk, pa + a_off[u], lda, pb + b_off[u], ldb, c + i * m * n, bm);
    }
  };
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (batches > 1 && work < kSmallGemmWork) {
    const std::int64_t per_call = m * n * k + kCallOverhead;
    const std::int64_t grain = std::max<std::int64_t>(1, backend.parallel_threshold() / per_call);
    backend.parallel_for(batches, grain, run);
  } else {
    run(0, batches);  // large matrices: BLAS uses its own threads
  }
}

// Integer GEMM with wrap-around (unsigned) arithmetic so overflow is defined.
// Parallel over (batch, column) jobs.
template <class T>
void int_batched(CpuBackend& backend, std::int64_t m, std::int64_t n, std::int64_t k,
                 const GemmOperand& a, const GemmOperand& b, T* c,
                 std::span<const std::int64_t> a_off, std::span<const std::int64_t> b_off) {
  using U = std::make_unsigned_t<T>;
  const T* pa = static_cast<const T*>(a.data);
  const T* pb = static_cast<const T*>(b.data);
  // Element (r, s) of op(X) sits at r * row_stride + s * col_stride.
  const std::int64_t a_rs = a.trans ? a.ld : 1, a_cs = a.trans ? 1 : a.ld;
  const std::int64_t b_rs = b.trans ? b.ld : 1, b_cs = b.trans ? 1 : b.ld;
  const std::int64_t jobs = static_cast<std::int64_t>(a_off.size()) * n;
  const std::int64_t grain = std::max<std::int64_t>(1, backend.parallel_threshold() / (m * k));
  backend.parallel_for(jobs, grain, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t job = lo; job < hi; ++job) {
      const std::int64_t batch = job / n, j = job % n;
      const T* ab = pa + a_off[static_cast<std::size_t>(batch)];
      const T* bj = pb + b_off[static_cast<std::size_t>(batch)] + j * b_cs;
      U* cj = reinterpret_cast<U*>(c + batch * m * n + j * m);
      if (a_cs == 1) {  // op(A) rows are contiguous: dot products along k
        for (std::int64_t i = 0; i < m; ++i) {
          U acc = 0;
          for (std::int64_t p = 0; p < k; ++p) {
            acc += static_cast<U>(ab[i * a_rs + p]) * static_cast<U>(bj[p * b_rs]);
          }
          cj[i] = acc;
        }
      } else {  // op(A) columns are contiguous: axpy along m
        std::fill(cj, cj + m, U{0});
        for (std::int64_t p = 0; p < k; ++p) {
          const U bpj = static_cast<U>(bj[p * b_rs]);
          const T* ap = ab + p * a_cs;
          for (std::int64_t i = 0; i < m; ++i) cj[i] += static_cast<U>(ap[i]) * bpj;
        }
      }
    }
  });
}

}  // namespace

void gemm_batched(CpuBackend& backend, DType dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                  const GemmOperand& a, const GemmOperand& b, void* c, const Shape& batch_shape) {
  if (m <= 0 || n <= 0 || k <= 0) {
    throw Error(ErrorKind::Internal, "dot_general", "gemm_batched needs positive m, n, k");
  }
  // One matrix (no batch axes), the common case, needs no offset lists.
  static constexpr std::int64_t kOrigin[1] = {0};
  std::vector<std::int64_t> a_list, b_list;
  std::span<const std::int64_t> a_off(kOrigin), b_off(kOrigin);
  if (!batch_shape.empty() || !a.batch_strides.empty() || !b.batch_strides.empty()) {
    batch_offsets(batch_shape, a, b, a_list, b_list);  // checks the batch ranks
    a_off = a_list;
    b_off = b_list;
  }
  detail::dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw Error(ErrorKind::Internal, "dot_general", "gemm_batched called with bool");
    } else if constexpr (std::is_integral_v<T>) {
      int_batched<T>(backend, m, n, k, a, b, static_cast<T*>(c), a_off, b_off);
    } else {
      blas_batched<T>(backend, m, n, k, a, b, static_cast<T*>(c), a_off, b_off);
    }
  });
}

}  // namespace tenferro::cpu
