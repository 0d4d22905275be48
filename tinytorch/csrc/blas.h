// The BLAS GEMM of the native kernels: the cblas_?gemm that NumPy itself links (OpenBLAS in NumPy's wheels),
// found by Python at import and handed to set_blas as raw function addresses, so tinytorch links no BLAS of its
// own and both libraries share one thread setting.
#pragma once
#include <cstdint>

namespace tt {

enum : int { kRowMajor = 101, kNoTrans = 111, kTrans = 112 };

// True once set_blas has received both addresses.
bool blas_available();

// The BLAS's thread count for the native GEMMs: 1 while the pool splits large products (set_gemm_pool(True)),
// else the pool's size (torch.set_num_threads).
int blas_kernel_threads();

// While one of these lives, the BLAS runs with `n` threads; the count it had comes back when the last one (on
// any thread) goes. NumPy's OpenBLAS keeps one process-wide count (a pthreads build), so this is per call, not
// per thread: NumPy calls the user makes outside tinytorch's kernels keep NumPy's own threads. Nested and
// concurrent scopes share the outermost one's count. Nothing happens when set_blas found no thread controls, or
// for n <= 0.
class BlasThreads {
 public:
  explicit BlasThreads(int n);
  ~BlasThreads();
  BlasThreads(const BlasThreads&) = delete;
  BlasThreads& operator=(const BlasThreads&) = delete;

 private:
  bool active_ = false;
};

// Row-major C (m x n, leading dimension ldc) = alpha * op(A) @ op(B) + beta * C, op(X) = X or X^T: on the calling
// thread in the packed GEMM (tile_gemm.h) where the CPU has one, else in the BLAS (blas_gemm).
// The same in the BLAS, with the thread count blas_kernel_threads() for products too large for one thread.
void blas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void blas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
               const double* b, int64_t ldb, double beta, double* c, int64_t ldc);
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

}  // namespace tt
