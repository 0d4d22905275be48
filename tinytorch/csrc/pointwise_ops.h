// Op codes and stubs of the native pointwise kernels (kernels/pointwise.inc has the loops, pointwise.cpp the
// Python entry points).
#pragma once
#include "dispatch_stub.h"

namespace tt {

enum BinaryOp : int {
  BIN_ADD, BIN_ADD_ALPHA, BIN_SUB, BIN_SUB_ALPHA, BIN_MUL, BIN_DIV, BIN_MAXIMUM, BIN_MINIMUM,
  BIN_EQ, BIN_NE, BIN_LT, BIN_LE, BIN_GT, BIN_GE,  // comparisons: bool output
  BIN_THRESHOLD_BACKWARD, BIN_SIGMOID_BACKWARD, BIN_TANH_BACKWARD, BIN_GELU_BACKWARD, BIN_GELU_TANH_BACKWARD,
  BIN_SILU_BACKWARD, BIN_COUNT
};
inline bool is_comparison(int op) { return op >= BIN_EQ && op <= BIN_GE; }

enum UnaryOp : int {
  UN_NEG, UN_ABS, UN_EXP, UN_SQRT, UN_RSQRT, UN_RECIPROCAL, UN_TANH, UN_SIGMOID, UN_RELU, UN_SILU, UN_GELU,
  UN_GELU_TANH, UN_SQUARE, UN_CLAMP, UN_COUNT
};

// (data, strides, n, scalars, op): one 1-d loop of `op`, per dtype (float32, float64, float16, bfloat16)
using OpLoop1d = void (*)(char** data, const int64_t* strides, int64_t n, const double* scalars, int op);
extern Stub<OpLoop1d> binary_stub[4];
extern Stub<OpLoop1d> unary_stub[4];
extern Stub<Loop1d> where_stub[4];

}  // namespace tt
