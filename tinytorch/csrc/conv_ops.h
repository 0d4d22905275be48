// Stubs of the sliding-window kernels whose inner loops are vectorized per CPU capability (kernels/conv.inc has
// the loops, conv.cpp the Python entry points).
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

}  // namespace tt
