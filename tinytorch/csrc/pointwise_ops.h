// Op codes and stubs of the native pointwise kernels (kernels/pointwise.inc has the loops, pointwise.cpp the
// Python entry points).
#pragma once
#include "dispatch_stub.h"
// the BinaryOp / UnaryOp codes, their names and is_comparison: generated at build time from
// tinytorch/kernels/formulas.py (tinytorch/kernels/native_gen.py)
#include "pointwise_ops_generated.h"

namespace tt {

// (data, strides, n, scalars, op): one 1-d loop of `op`, per dtype (float32, float64, float16, bfloat16)
using OpLoop1d = void (*)(char** data, const int64_t* strides, int64_t n, const double* scalars, int op);
extern Stub<OpLoop1d> binary_stub[4];
extern Stub<OpLoop1d> unary_stub[4];
extern Stub<Loop1d> where_stub[4];

}  // namespace tt
