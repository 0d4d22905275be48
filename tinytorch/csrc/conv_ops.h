// Stubs of the sliding-window kernels whose inner loops are vectorized per CPU capability (kernels/conv.inc has
// the loops, conv.cpp the Python entry points): max pooling and convolution's products over shifted rows.
#pragma once
#include "dispatch_stub.h"

namespace tt {

struct PoolGeom {
  int64_t kh, kw, dh, dw, ph, pw, sh, sw;
};

constexpr int64_t kMaxPoolTaps = 64;  // kh * kw of the windows the vector path takes

// Max pooling of one (H, W) plane (rows rs bytes apart, elements cs bytes apart) into oh x ow values (T) and
// flat h*W+w int64 indices. Output columns [lo, hi) have windows inside [0, W) along W and cs == sizeof(T):
// they take the vector path; lo = hi = 0 sends every window to the scalar loop. `end` (the end of the input's
// memory, or nullptr) bounds the reads of whole vectors past the last window of a row.
using MaxPoolPlane = void (*)(const char* plane, int64_t rs, int64_t cs, int64_t H, int64_t W, const PoolGeom& g,
                              int64_t oh, int64_t ow, int64_t lo, int64_t hi, const char* end, void* values,
                              int64_t* indices);
extern Stub<MaxPoolPlane> max_pool_plane_stub[2];  // float32, float64

// Stride-1 convolution as a GEMM over shifted rows (conv.cpp's "wide" layout): with a zero-padded image flattened
// to one row, tap k = (c, i, j) of every output position p is src[off[k] + p], so no im2col copy is needed.
// kConvMR output rows by kConvNV vectors of 32 bytes are one register block; P is always a multiple of
// conv_block_cols(sizeof(T)) and the reads src[off[k] + p] for p < P lie inside the caller's buffer.
constexpr int64_t kConvMR = 4;
constexpr int64_t kConvNV = 3;
constexpr int64_t conv_block_cols(int64_t item) { return kConvNV * 32 / item; }

// out[r * ldo + p] = sum_k a[(r / MR) * K * MR + k * MR + r % MR] * src[off[k] + p] for r < M, p < P (a: the
// weights packed as K x MR panels, rows past M zero).
using ConvShiftedGemm = void (*)(const void* a, int64_t M, int64_t K, const void* src, const int64_t* off, int64_t P,
                                 void* out, int64_t ldo);
// gw[r * ldw + k] += sum_{i < nimg} sum_{p < P} dy[i][r * lddy + p] * src[i][off[k] + p] for r < M, k < K: the
// sums of several images taken together (one horizontal sum of the vector accumulators per block, not per image).
using ConvShiftedGemmWgrad = void (*)(const void* const* dy, const void* const* src, int64_t nimg, int64_t lddy,
                                      int64_t M, const int64_t* off, int64_t K, int64_t P, void* gw, int64_t ldw);
extern Stub<ConvShiftedGemm> conv_shifted_gemm_stub[2];              // float32, float64
extern Stub<ConvShiftedGemmWgrad> conv_shifted_gemm_wgrad_stub[2];  // float32, float64

}  // namespace tt
