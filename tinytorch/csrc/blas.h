// The BLAS GEMM of the native kernels: the cblas_?gemm that NumPy itself links (OpenBLAS in NumPy's wheels),
// found by Python at import and handed to set_blas as raw function addresses, so tinytorch links no BLAS of its
// own and both libraries share one thread setting.
#pragma once
#include <cstdint>

namespace tt {

enum : int { kRowMajor = 101, kNoTrans = 111, kTrans = 112 };

// True once set_blas has received both addresses.
bool blas_available();

// Row-major C (m x n, leading dimension ldc) = alpha * op(A) @ op(B) + beta * C, op(X) = X or X^T.
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

}  // namespace tt
