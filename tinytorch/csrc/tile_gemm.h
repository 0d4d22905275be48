// The register-blocked product of small tiles (kernels/attention.inc's microkernel, one copy per CPU capability),
// for callers whose products are too small for a BLAS call to pay its packing and dispatch: batched matmul's
// many small products (blas.cpp) and the fused attention kernel's tiles.
#pragma once
#include <cstdint>

#include "dispatch_stub.h"

namespace tt {

// C (m x n, row stride ldc) = A B with A read as A[i * rsa + p * csa] (m x k, so A^T costs no copy) and B
// row-major (k x n, row stride ldb, columns contiguous); single-threaded.
using TileGemm = void (*)(int64_t m, int64_t n, int64_t k, const void* a, int64_t rsa, int64_t csa, const void* b,
                          int64_t ldb, void* c, int64_t ldc);
extern Stub<TileGemm> tile_gemm_stub[2];  // float32, float64

// The products worth it: below this many multiply-adds the microkernel beats a BLAS call (64 x 64 x 64).
constexpr int64_t kTileGemmMacs = 64 * 64 * 64;

}  // namespace tt

namespace tt {

// C (m x n, row stride ldc) = alpha * A B + beta * C (beta = 0: C is not read) with A read as A[i * rsa + p * csa]
// and B as B[p * rsb + j * csb] (either operand transposed at no cost); alpha and beta point to scalars of the
// product's dtype; k >= 1; single-threaded (blas.cpp splits a product over the pool). The AVX2 and AVX-512
// capabilities have one (kernels/gemm.inc); get() is null on CPUs without them, where the BLAS runs every product.
using PackedGemm = void (*)(int64_t m, int64_t n, int64_t k, const void* alpha, const void* a, int64_t rsa,
                            int64_t csa, const void* b, int64_t rsb, int64_t csb, const void* beta, void* c,
                            int64_t ldc);
extern Stub<PackedGemm> packed_gemm_stub[2];  // float32, float64

}  // namespace tt
