// Stubs of the native reductions' inner loops (kernels/reduce.inc has the loops, reduce.cpp the plans and the
// Python entry points). Index 0 is float32, 1 float64.
#pragma once
#include "dispatch_stub.h"

namespace tt {

enum ReduceOp : int { RED_SUM = 0, RED_MAX = 1, RED_MIN = 2, RED_COUNT = 3 };
// _C.REDUCE_OPS: {name: ReduceOp}, the codes backends/cpu/native.py passes to reduce / arg_reduce
static const char* const kReduceOpNames[RED_COUNT] = {"sum", "max", "min"};

// op over n contiguous elements: the sum (float32 accumulated in double) or the extreme (NaN when any is NaN)
using RowReduceFn = double (*)(const char* x, int64_t n, int op);
// acc[j] = op(acc[j], rows[r][j]) for every row r < nrows and j < n, each row contiguous: acc is double for
// RED_SUM, the input's type otherwise
using ColReduceFn = void (*)(void* acc, const char* const* rows, int64_t nrows, int64_t n, int op);
// argmax/argmin update of a column block: where x[j] beats best[j] (a NaN beats all but an earlier NaN),
// best[j] = x[j] and idx[j] = i
using ColArgFn = void (*)(void* best, int64_t* idx, const char* x, int64_t n, int64_t i, int op);

// out[j] = the sum of row j for j < m: row j holds n contiguous elements from x + j * stride (bytes)
using RowsSumFn = void (*)(const char* x, int64_t n, int64_t stride, int64_t m, double* out);

// argmax (RED_MAX) / argmin of n >= 1 contiguous elements: the first extreme, or the first NaN; *val gets it
using RowArgFn = int64_t (*)(const char* x, int64_t n, int op, void* val);

extern Stub<RowReduceFn> row_reduce_stub[2];
extern Stub<RowArgFn> row_arg_stub[2];
extern Stub<RowsSumFn> rows_sum_stub[2];
extern Stub<ColReduceFn> col_reduce_stub[2];
extern Stub<ColArgFn> col_arg_stub[2];

}  // namespace tt
