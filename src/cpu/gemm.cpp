#include "cpu/gemm.hpp"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "cpu/target_clones.hpp"
#include "tensor/dispatch.hpp"
#include "tensor/strided.hpp"

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

// ---- small real matrices --------------------------------------------------------

// Real GEMMs with every side at most kSmallSide skip BLAS: its per-call cost
// (argument checks, packing, dispatch; about 150 ns) dwarfs the work, and a
// batch of 1024 4 x 4 products spent 90% of its time there. The loop below
// keeps a column of C in registers and adds op(A)'s columns scaled by op(B)'s
// entries (vectorised along m), in order of p (GCC fuses the multiply-adds
// where the instruction set has them and its tuning prefers them: in the
// AVX-512 form's 64-byte vectors and the scalar rows).
constexpr std::int64_t kSmallSide = 16;

template <class T>
struct SmallGemm {
  std::int64_t m, n, k;
  const T* a;
  std::int64_t a_rs, a_cs;  // element (i, p) of op(A) at i * a_rs + p * a_cs
  const T* b;
  std::int64_t b_rs, b_cs;  // element (p, j) of op(B) at p * b_rs + j * b_cs
  T* c;
  const std::int64_t* a_off;
  const std::int64_t* b_off;
};

// Columns j .. j + NJ - 1 of C for op(A) with contiguous columns (a_rs = 1):
// C[:, j] = sum over p of op(A)[:, p] * op(B)[p, j], each column in registers
// as VB-byte vectors, then at most one 32-byte (VB = 64) and one 16-byte
// vector and scalars (whole loads only: a partial one would stall store
// forwarding). Several columns at a time give the multiply-adds independent
// chains (a 16 x 16 product was bound by the latency of its four) and load
// op(A)'s column once for all of them; every element still adds its terms in
// order of p.
template <class T, int VB, int M, int NJ>
[[gnu::always_inline]] inline void small_gemm_columns(const SmallGemm<T>& g, const T* __restrict a,
                                                      const T* __restrict b, T* __restrict c,
                                                      std::int64_t j) {
  using V [[gnu::vector_size(VB)]] = T;
  using V4 [[gnu::vector_size(32)]] = T;
  using V2 [[gnu::vector_size(16)]] = T;
  constexpr int kW = VB / sizeof(T), kW4 = 32 / sizeof(T), kW2 = 16 / sizeof(T);
  constexpr int kNV = M / kW;
  constexpr int kN4 = VB > 32 ? (M % kW) / kW4 : 0;
  constexpr int kO2 = kNV * kW + kN4 * kW4;  // first row after the wide vectors
  constexpr int kN2 = (M - kO2) / kW2;
  constexpr int kO1 = kO2 + kN2 * kW2;
  constexpr int kN1 = M - kO1;
  V acc[NJ][kNV + 1] = {};
  V4 acc4[NJ] = {};
  V2 acc2[NJ] = {};
  T acc1[NJ][kN1 + 1] = {};
  for (std::int64_t p = 0; p < g.k; ++p) {
    T bpj[NJ];
    for (int q = 0; q < NJ; ++q) bpj[q] = b[p * g.b_rs + (j + q) * g.b_cs];
    const T* ap = a + p * g.a_cs;
    for (int v = 0; v < kNV; ++v) {
      V x;
      std::memcpy(&x, ap + v * kW, sizeof x);
      for (int q = 0; q < NJ; ++q) acc[q][v] += x * (V{} + bpj[q]);
    }
    if constexpr (kN4 == 1) {
      V4 x;
      std::memcpy(&x, ap + kNV * kW, sizeof x);
      for (int q = 0; q < NJ; ++q) acc4[q] += x * (V4{} + bpj[q]);
    }
    if constexpr (kN2 == 1) {
      V2 x;
      std::memcpy(&x, ap + kO2, sizeof x);
      for (int q = 0; q < NJ; ++q) acc2[q] += x * (V2{} + bpj[q]);
    }
    for (int i = 0; i < kN1; ++i)
      for (int q = 0; q < NJ; ++q) acc1[q][i] += ap[kO1 + i] * bpj[q];
  }
  for (int q = 0; q < NJ; ++q) {
    T* cj = c + (j + q) * M;
    for (int v = 0; v < kNV; ++v) std::memcpy(cj + v * kW, &acc[q][v], sizeof(V));
    if constexpr (kN4 == 1) std::memcpy(cj + kNV * kW, &acc4[q], sizeof(V4));
    if constexpr (kN2 == 1) std::memcpy(cj + kO2, &acc2[q], sizeof(V2));
    for (int i = 0; i < kN1; ++i) cj[kO1 + i] = acc1[q][i];
  }
}

// The last n - j < 2 * NJ columns: NJ, NJ / 2, ..., 1 at a time.
template <class T, int VB, int M, int NJ>
[[gnu::always_inline]] inline void small_gemm_last_columns(const SmallGemm<T>& g,
                                                           const T* __restrict a,
                                                           const T* __restrict b, T* __restrict c,
                                                           std::int64_t j) {
  if (j + NJ <= g.n) {
    small_gemm_columns<T, VB, M, NJ>(g, a, b, c, j);
    j += NJ;
  }
  if constexpr (NJ > 1) small_gemm_last_columns<T, VB, M, NJ / 2>(g, a, b, c, j);
}

// op(A) has M rows (a compile-time count, so each column of C lives in
// registers), columns NJ at a time; with op(A)'s columns strided, scalars.
template <class T, int VB, int NJ, int M>
[[gnu::always_inline]] inline void small_gemm_fixed(const SmallGemm<T>& g, std::int64_t lo,
                                                    std::int64_t hi) {
  for (std::int64_t batch = lo; batch < hi; ++batch) {
    const T* __restrict a = g.a + g.a_off[batch];
    const T* __restrict b = g.b + g.b_off[batch];
    T* __restrict c = g.c + batch * M * g.n;
    if (g.a_rs == 1) {
      std::int64_t j = 0;
      for (; j + NJ <= g.n; j += NJ) small_gemm_columns<T, VB, M, NJ>(g, a, b, c, j);
      if constexpr (NJ > 1) small_gemm_last_columns<T, VB, M, NJ / 2>(g, a, b, c, j);
      continue;
    }
    for (std::int64_t j = 0; j < g.n; ++j) {
      T acc[M] = {};
      for (std::int64_t p = 0; p < g.k; ++p) {
        const T bpj = b[p * g.b_rs + j * g.b_cs];
        const T* ap = a + p * g.a_cs;
        for (int i = 0; i < M; ++i) acc[i] += ap[i * g.a_rs] * bpj;
      }
      for (int i = 0; i < M; ++i) c[j * M + i] = acc[i];
    }
  }
}

template <class T, int VB, int NJ, int... Ms>
[[gnu::always_inline]] inline void small_gemm_range(const SmallGemm<T>& g, std::int64_t lo,
                                                    std::int64_t hi,
                                                    std::integer_sequence<int, Ms...>) {
  // M = 1 .. kSmallSide: the case whose M is g.m.
  (void)((g.m == Ms + 1 ? (small_gemm_fixed<T, VB, NJ, Ms + 1>(g, lo, hi), true) : false) || ...);
}

// Processors with AVX-512 get 64-byte vectors and eight columns at a time
// (32 vector registers; their multiply-adds fuse): 16 x 16 x 256 f64 in
// 60 -> 44 us, 4 x 4 x 1024 in 12.9 -> 10.9 us on a Zen 4. The others keep
// 32-byte vectors and two columns (16 registers).
#if TENFERRO_HAS_TARGET_AVX512
TENFERRO_TARGET_AVX512 void small_gemm_run_avx512(const SmallGemm<float>& g, std::int64_t lo,
                                                  std::int64_t hi) {
  small_gemm_range<float, 64, 8>(g, lo, hi, std::make_integer_sequence<int, kSmallSide>{});
}
TENFERRO_TARGET_AVX512 void small_gemm_run_avx512(const SmallGemm<double>& g, std::int64_t lo,
                                                  std::int64_t hi) {
  small_gemm_range<double, 64, 8>(g, lo, hi, std::make_integer_sequence<int, kSmallSide>{});
}
#endif
TENFERRO_TARGET_CLONES_AVX2 void small_gemm_run_avx2(const SmallGemm<float>& g, std::int64_t lo,
                                                     std::int64_t hi) {
  small_gemm_range<float, 32, 2>(g, lo, hi, std::make_integer_sequence<int, kSmallSide>{});
}
TENFERRO_TARGET_CLONES_AVX2 void small_gemm_run_avx2(const SmallGemm<double>& g, std::int64_t lo,
                                                     std::int64_t hi) {
  small_gemm_range<double, 32, 2>(g, lo, hi, std::make_integer_sequence<int, kSmallSide>{});
}

template <class T>
void small_gemm_run_as(SmallGemmForm form, const SmallGemm<T>& g, std::int64_t lo,
                       std::int64_t hi) {
#if TENFERRO_HAS_TARGET_AVX512
  if (form == SmallGemmForm::Vec64) {
    small_gemm_run_avx512(g, lo, hi);
    return;
  }
#endif
  (void)form;
  small_gemm_run_avx2(g, lo, hi);
}

template <class T>
void small_gemm_run(const SmallGemm<T>& g, std::int64_t lo, std::int64_t hi) {
  static const SmallGemmForm best =
      small_gemm_form_available(SmallGemmForm::Vec64) ? SmallGemmForm::Vec64 : SmallGemmForm::Vec32;
  small_gemm_run_as(best, g, lo, hi);
}

template <class T>
void small_batched(CpuBackend& backend, std::int64_t m, std::int64_t n, std::int64_t k,
                   const GemmOperand& a, const GemmOperand& b, T* c,
                   std::span<const std::int64_t> a_off, std::span<const std::int64_t> b_off) {
  const SmallGemm<T> g{m,
                       n,
                       k,
                       static_cast<const T*>(a.data),
                       a.trans ? a.ld : 1,
                       a.trans ? 1 : a.ld,
                       static_cast<const T*>(b.data),
                       b.trans ? b.ld : 1,
                       b.trans ? 1 : b.ld,
                       c,
                       a_off.data(),
                       b_off.data()};
  const std::int64_t batches = static_cast<std::int64_t>(a_off.size());
  const std::int64_t grain = std::max<std::int64_t>(1, backend.parallel_threshold() / (m * n * k));
  if (batches <= grain) {
    small_gemm_run(g, 0, batches);
  } else {
    backend.parallel_for(batches, grain,
                         [&](std::int64_t lo, std::int64_t hi) { small_gemm_run(g, lo, hi); });
  }
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
    // Large matrices: BLAS uses its own threads.
    if (work >= kSmallGemmWork) backend.park_threads();
    run(0, batches);
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

bool small_gemm_form_available(SmallGemmForm form) {
#if TENFERRO_HAS_TARGET_AVX512
  if (form == SmallGemmForm::Vec64) return cpu_has_avx512f();
#endif
  return form == SmallGemmForm::Vec32;
}

void small_gemm_with(SmallGemmForm form, DType dtype, std::int64_t m, std::int64_t n,
                     std::int64_t k, const void* a, const void* b, void* c) {
  if (!small_gemm_form_available(form)) {
    throw Error(ErrorKind::Unsupported, "small_gemm_with",
                "this processor cannot run the requested small GEMM form; check "
                "small_gemm_form_available first");
  }
  if (m < 1 || n < 1 || k < 1 || m > kSmallSide || n > kSmallSide || k > kSmallSide) {
    throw Error(ErrorKind::InvalidArgument, "small_gemm_with",
                "every side must be in [1, 16] for the small GEMM kernel");
  }
  const std::int64_t zero = 0;
  auto run = [&]<class T>(T* out) {
    const SmallGemm<T> g{
        m, n, k, static_cast<const T*>(a), 1, m, static_cast<const T*>(b), 1, k, out, &zero, &zero};
    small_gemm_run_as(form, g, 0, 1);
  };
  if (dtype == DType::F64) {
    run(static_cast<double*>(c));
  } else if (dtype == DType::F32) {
    run(static_cast<float*>(c));
  } else {
    throw Error(ErrorKind::InvalidArgument, "small_gemm_with",
                "the small GEMM kernel takes f32 or f64 only");
  }
}

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
    } else if constexpr (std::is_floating_point_v<T>) {
      if (m <= kSmallSide && n <= kSmallSide && k <= kSmallSide) {
        small_batched<T>(backend, m, n, k, a, b, static_cast<T*>(c), a_off, b_off);
      } else {
        blas_batched<T>(backend, m, n, k, a, b, static_cast<T*>(c), a_off, b_off);
      }
    } else {
      blas_batched<T>(backend, m, n, k, a, b, static_cast<T*>(c), a_off, b_off);
    }
  });
}

}  // namespace tenferro::cpu
