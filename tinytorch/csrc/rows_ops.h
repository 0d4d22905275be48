// Stubs of the native "row" kernels (kernels/rows.inc has the loops, rows.cpp the Python entry points):
// softmax / log_softmax and their gradients along one dim, and layer norm forward and backward. Index 0 of each
// stub array is float32, index 1 float64.
#pragma once
#include "dispatch_stub.h"

namespace tt {

// the number of adjacent rows a softmax along a non-last dim handles at once (stack arrays of this size)
constexpr int64_t kSoftmaxInnerBlock = 128;

// `rows` contiguous rows of `C` elements from x to y (the softmax dim is the last, contiguous one)
using SoftmaxLastDimFn = void (*)(const char* x, char* y, int64_t rows, int64_t C, bool log);
// one block of `width` adjacent rows of a (C, inner) slab: element (c, j) of the block at x[c * inner + j]
using SoftmaxInnerFn = void (*)(const char* x, char* y, int64_t C, int64_t inner, int64_t width, bool log);
// gradients: g and out laid out as x above, gx written like y
using SoftmaxBackwardLastDimFn = void (*)(const char* g, const char* out, char* gx, int64_t rows, int64_t C,
                                         bool log);
using SoftmaxBackwardInnerFn = void (*)(const char* g, const char* out, char* gx, int64_t C, int64_t inner,
                                       int64_t width, bool log);
// layer norm over `rows` contiguous rows of N elements; w and b may be null; mean/rstd get one value a row
using LayerNormFn = void (*)(const char* x, const char* w, const char* b, char* y, char* mean, char* rstd,
                             int64_t rows, int64_t N, double eps);
// its gradient: gx (may be null) per row; gw / gb (may be null) accumulate their sums over rows into N doubles;
// scratch holds 2 * N elements
using LayerNormBackwardFn = void (*)(const char* g, const char* x, const char* mean, const char* rstd,
                                     const char* w, char* gx, double* gw, double* gb, int64_t rows, int64_t N,
                                     void* scratch);

extern Stub<SoftmaxLastDimFn> softmax_lastdim_stub[2];
extern Stub<SoftmaxInnerFn> softmax_inner_stub[2];
extern Stub<SoftmaxBackwardLastDimFn> softmax_backward_lastdim_stub[2];
extern Stub<SoftmaxBackwardInnerFn> softmax_backward_inner_stub[2];
extern Stub<LayerNormFn> layer_norm_stub[2];
extern Stub<LayerNormBackwardFn> layer_norm_backward_stub[2];

}  // namespace tt
