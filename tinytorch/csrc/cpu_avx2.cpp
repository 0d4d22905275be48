// The inner loops (kernels/*.inc) compiled for the CPU capability "avx2"; dispatch_stub.h picks at run time.
// Standard headers come first so that only our loops get the target attribute.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <type_traits>

#include "dispatch_stub.h"

#define TT_CAPABILITY cpu_avx2
#define TT_CAPABILITY_INDEX tt::CAP_AVX2
#define TT_HAS_ROUND 1  // SSE4.1 roundps: floorf is one instruction
#define TT_HAS_FMA 1  // vec_math.h's multiply-adds as FMA instructions
#pragma GCC target("avx2,fma,f16c")
#include "kernels/all.inc"
