// Stubs of the native indexing kernels' inner loops (kernels/index.inc has the loops, index.cpp the Python
// entry points). Index 0 is float32, 1 float64.
#pragma once
#include "dispatch_stub.h"

namespace tt {

// y[j] += alpha * x[j] for j < n, both contiguous (alpha == 1 adds exactly)
using AxpyFn = void (*)(char* y, const char* x, int64_t n, double alpha);
extern Stub<AxpyFn> axpy_stub[2];

}  // namespace tt
