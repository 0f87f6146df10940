// The guard around cgemv_ / zgemv_ (src/distributed/gemv_guard.cpp): with
// x ending against a page that is not mapped, OpenBLAS 0.3.21's kernels
// read past it (m = 2, n = 1, lda = 37 in zgemv 'N' kills the process
// without the guard); through the guard every product equals the plain
// definition, for every trans, strides of both signs, c64 and c128, and
// the definitions ScaLAPACK resolves are the guard's.

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <complex>
#include <cstdint>
#include <vector>

using c64 = std::complex<float>;
using c128 = std::complex<double>;

extern "C" {
void cgemv_(const char*, const int*, const int*, const c64*, const c64*, const int*, const c64*,
            const int*, const c64*, c64*, const int*);
void zgemv_(const char*, const int*, const int*, const c128*, const c128*, const int*, const c128*,
            const int*, const c128*, c128*, const int*);
}

namespace {

/// `count` elements whose last one ends where an unmapped page begins.
template <class T>
class AgainstAGap {
 public:
  explicit AgainstAGap(std::size_t count) {
    page_ = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    pages_ = (count * sizeof(T) + page_ - 1) / page_ + 1;
    base_ = static_cast<char*>(
        mmap(nullptr, pages_ * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    EXPECT_NE(base_, MAP_FAILED);
    EXPECT_EQ(mprotect(base_ + (pages_ - 1) * page_, page_, PROT_NONE), 0);
    data_ = reinterpret_cast<T*>(base_ + (pages_ - 1) * page_) - count;
  }
  ~AgainstAGap() { munmap(base_, pages_ * page_); }
  AgainstAGap(const AgainstAGap&) = delete;
  AgainstAGap& operator=(const AgainstAGap&) = delete;
  T* data() const { return data_; }

 private:
  std::size_t page_ = 0, pages_ = 0;
  char* base_ = nullptr;
  T* data_ = nullptr;
};

template <class T>
using Gemv = void (*)(const char*, const int*, const int*, const T*, const T*, const int*, const T*,
                      const int*, const T*, T*, const int*);

/// Products of every trans, shape and stride against the definition
/// y = alpha op(A) x + beta y; returns how many were checked.
template <class T>
int check_products(Gemv<T> gemv) {
  int checked = 0;
  for (const char trans : {'N', 'T', 'C'}) {
    for (int m = 1; m <= 9; ++m) {
      for (int n = 1; n <= 5; ++n) {
        for (const int lda : {m, 37}) {
          for (const int incx : {1, 3, -2}) {
            const int lx = trans == 'N' ? n : m, ly = trans == 'N' ? m : n;
            const int step = incx < 0 ? -incx : incx;
            const std::size_t len = static_cast<std::size_t>(1 + (lx - 1) * step);
            AgainstAGap<T> x(len);
            for (std::size_t i = 0; i < len; ++i)
              x.data()[i] = T(static_cast<float>(i % 7) - 2.5f, static_cast<float>(i % 3));
            std::vector<T> a(static_cast<std::size_t>(lda) * n), y(static_cast<std::size_t>(ly));
            for (std::size_t i = 0; i < a.size(); ++i)
              a[i] = T(static_cast<float>((i * 5) % 11) - 5.f, static_cast<float>(i % 4) - 1.f);
            for (std::size_t i = 0; i < y.size(); ++i) y[i] = T(1.f, static_cast<float>(i));
            const T alpha(0.5f, -1.f), beta(2.f, 0.25f);
            std::vector<T> want(y);
            for (int i = 0; i < ly; ++i) {
              T acc(0);
              for (int j = 0; j < lx; ++j) {
                // op(A)[i, j] and x's j-th element in BLAS order.
                const T aij = trans == 'N' ? a[static_cast<std::size_t>(i + j * lda)]
                                           : a[static_cast<std::size_t>(j + i * lda)];
                const std::size_t at =
                    static_cast<std::size_t>(incx > 0 ? j * step : (lx - 1 - j) * step);
                acc += (trans == 'C' ? std::conj(aij) : aij) * x.data()[at];
              }
              want[static_cast<std::size_t>(i)] =
                  alpha * acc + beta * y[static_cast<std::size_t>(i)];
            }
            const int one = 1;
            gemv(&trans, &m, &n, &alpha, a.data(), &lda, x.data(), &incx, &beta, y.data(), &one);
            double worst = 0;
            for (int i = 0; i < ly; ++i)
              worst =
                  std::max(worst, static_cast<double>(std::abs(y[static_cast<std::size_t>(i)] -
                                                               want[static_cast<std::size_t>(i)])));
            EXPECT_LT(worst, 1e-4)
                << trans << " m " << m << " n " << n << " lda " << lda << " incx " << incx;
            ++checked;
          }
        }
      }
    }
  }
  return checked;
}

}  // namespace

TEST(GemvGuard, ComplexProductsNeverReadPastX) {
  // The shape OpenBLAS 0.3.21's zgemv_n reads one element past x on.
  {
    AgainstAGap<c128> x(1);
    x.data()[0] = c128(3, 1);
    const std::vector<c128> a(37, c128(1, 0));
    std::vector<c128> y(2, c128(0, 0));
    const c128 one(1, 0), zero(0, 0);
    const int m = 2, n = 1, lda = 37, inc = 1;
    zgemv_("N", &m, &n, &one, a.data(), &lda, x.data(), &inc, &zero, y.data(), &inc);
    EXPECT_EQ(y[0], c128(3, 1));
    EXPECT_EQ(y[1], c128(3, 1));
  }
  const int per_type = 3 * 9 * 5 * 2 * 3;
  EXPECT_EQ(check_products<c64>(cgemv_), per_type);
  EXPECT_EQ(check_products<c128>(zgemv_), per_type);
}

TEST(GemvGuard, ScaLapackResolvesTheGuard) {
  // The process's global definitions (what libscalapack and ELPA bind to)
  // are the guard's.
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "zgemv_"), reinterpret_cast<void*>(&zgemv_));
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "cgemv_"), reinterpret_cast<void*>(&cgemv_));
  EXPECT_NE(dlsym(RTLD_NEXT, "zgemv_"), reinterpret_cast<void*>(&zgemv_));
}
