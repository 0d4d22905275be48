// The inner loops (kernels/*.inc) compiled for the CPU capability "avx2"; dispatch_stub.h picks at run time.
// Standard headers come first so that only our loops get the target attribute.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <type_traits>
#include <vector>

#include <immintrin.h>  // the packed GEMM's microkernel (kernels/gemm.inc) is written in intrinsics

#include "dispatch_stub.h"

#define TT_CAPABILITY cpu_avx2
#define TT_CAPABILITY_INDEX tt::CAP_AVX2
#define TT_HAS_ROUND 1  // SSE4.1 roundps: floorf is one instruction
#define TT_HAS_FMA 1  // vec_math.h's multiply-adds as FMA instructions
#define TT_GEMM_VBYTES 32  // the packed GEMM's vector width
#define TT_GEMM_INLINE inline __attribute__((always_inline))
#pragma GCC target("avx2,fma,f16c")
#include "kernels/all.inc"
