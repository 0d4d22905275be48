// Python entry points of the native pointwise kernels: binary ops (with broadcasting and a Python-number
// operand), unary ops, comparisons and where. Every entry returns NotImplemented for inputs it does not
// handle (dtypes other than float32/float64, mixed dtypes), and the Python wrapper runs the NumPy kernel.
#include <algorithm>
#include <cstring>
#include <initializer_list>

#include "kit.h"
#include "iter.h"
#include "parallel.h"
#include "pointwise_ops.h"

namespace tt {

Stub<OpLoop1d> binary_stub[4];
Stub<OpLoop1d> unary_stub[4];
Stub<Loop1d> where_stub[4];

struct OpLoopCtx {
  OpLoop1d fn;
  int op;
  const double* scalars;
};

// Runs the iterator, without the GIL when the work is worth a thread.
static void run_iter(const TensorIter& it, OpLoop1d fn, int op, const double* sc) {
  OpLoopCtx ctx{fn, op, sc};
  run_released(it.numel(), [&] {
    // worker threads read the context through the loop's scalars pointer, not thread-local state
    it.run([](char** d, const int64_t* s, int64_t n, const double* p) {
      const OpLoopCtx* c = reinterpret_cast<const OpLoopCtx*>(p);
      c->fn(d, s, n, c->scalars, c->op);
    }, reinterpret_cast<const double*>(&ctx));
  });
}

// The dtype of the first array among the operands (the others may be Python numbers).
static DType first_dtype(std::initializer_list<PyObject*> xs) {
  for (PyObject* x : xs)
    if (is_array(x)) return dtype_of(arr(x));
  return DType::unsupported;
}

// An iterator that did not build: its error, or NotImplemented for operands it does not take.
static PyObject* iter_declined() { return declined(PyErr_Occurred() ? -1 : 0); }

// binary(op, a, b, scalar0=None): out = op(a, b)
static TT_ENTRY(py_binary) {
  int op;
  PyObject *a, *b;
  Opt<double> scalar;
  TT_ARGS(op, a, b, scalar);
  const DType dt = first_dtype({a, b});
  const int fi = loop_index(dt, /*with_half=*/true);
  if (fi < 0 || op < 0 || op >= BIN_COUNT) return not_implemented();
  // PyTorch multiplies a 16-bit tensor by a Python number in float32 (the number is not rounded to the tensor's
  // dtype first); these loops would round it: leave that case to NumPy
  if (fi >= 2 && !(is_array(a) && is_array(b))) return not_implemented();
  double sc[1] = {scalar.has ? scalar.v : 1.0};
  TensorIter it;
  PyObject* operands[2] = {a, b};
  if (!it.build(operands, 2, dt, is_comparison(op) ? NPY_BOOL : npy_type(dt))) return iter_declined();
  run_iter(it, binary_stub[fi].get(), op, sc);
  return reinterpret_cast<PyObject*>(it.output());
}

// binary_(op, dst, other, alpha=None): dst = op(dst, other) in place (Tensor.add_ and friends); None, or
// NotImplemented when dst's dtype has no loop, other has another dtype, or the two overlap partially
static TT_ENTRY(py_binary_inplace) {
  int op;
  PyArrayObject* dst;
  PyObject* other;
  Opt<double> alpha;
  TT_ARGS(op, dst, other, alpha);
  const DType dt = dtype_of(dst);
  const int fi = loop_index(dt, /*with_half=*/true);
  if (fi < 0 || op < 0 || op >= BIN_COUNT || is_comparison(op)) return not_implemented();
  double sc[1] = {alpha.has ? alpha.v : 1.0};
  TensorIter it;
  PyObject* operands[2] = {reinterpret_cast<PyObject*>(dst), other};
  if (!it.build_into(dst, operands, 2, dt)) return iter_declined();
  run_iter(it, binary_stub[fi].get(), op, sc);
  Py_RETURN_NONE;
}

// unary(op, a, s0, s1, s2, s3): out = op(a) with up to four scalar attributes
static TT_ENTRY(py_unary) {
  int op;
  PyArrayObject* a;
  Opt<double> s[4];
  TT_ARGS(op, a, s[0], s[1], s[2], s[3]);
  const DType dt = dtype_of(a);
  const int fi = loop_index(dt, /*with_half=*/true);
  if (fi < 0 || op < 0 || op >= UN_COUNT) return not_implemented();
  double sc[4];
  for (int i = 0; i < 4; ++i) sc[i] = s[i].has ? s[i].v : 0.0;
  TensorIter it;
  PyObject* operands[1] = {reinterpret_cast<PyObject*>(a)};
  if (!it.build(operands, 1, dt, npy_type(dt))) return iter_declined();
  run_iter(it, unary_stub[fi].get(), op, sc);
  return reinterpret_cast<PyObject*>(it.output());
}

// where(cond, a, b): cond a bool array, a and b arrays or numbers of one float dtype
static TT_ENTRY(py_where) {
  PyArrayObject* cond;
  PyObject *a, *b;
  TT_ARGS(cond, a, b);
  if (dtype_of(cond) != DType::b8) return not_implemented();
  const DType dt = first_dtype({a, b});
  const int fi = loop_index(dt, /*with_half=*/true);
  if (fi < 0) return not_implemented();
  TensorIter it;
  PyObject* operands[3] = {reinterpret_cast<PyObject*>(cond), a, b};
  if (!it.build(operands, 3, dt, npy_type(dt), DType::b8)) return iter_declined();
  Loop1d loop = where_stub[fi].get();
  run_released(it.numel(), [&] { it.run(loop); });
  return reinterpret_cast<PyObject*>(it.output());
}

// copy(a): a C-contiguous copy of a C-contiguous array (the kernel of clone), its bytes split over the pool in
// chunks of at least kGrainSize floats; NotImplemented for another layout (NumPy's copy keeps the element order)
static TT_ENTRY(py_copy) {
  PyArrayObject* a;
  TT_ARGS(a);
  if (!PyArray_IS_C_CONTIGUOUS(a)) return not_implemented();
  PyArray_Descr* descr = PyArray_DESCR(a);
  Py_INCREF(descr);
  PyArrayObject* out = reinterpret_cast<PyArrayObject*>(
      PyArray_NewFromDescr(&PyArray_Type, descr, PyArray_NDIM(a), PyArray_DIMS(a), nullptr, nullptr, 0, nullptr));
  if (!out) return nullptr;
  const int64_t nbytes = PyArray_NBYTES(a);
  const char* src = static_cast<const char*>(PyArray_DATA(a));
  char* dst = static_cast<char*>(PyArray_DATA(out));
  // chunks of 64-byte lines: no two threads write one cache line
  constexpr int64_t kLine = 64;
  const int64_t lines = (nbytes + kLine - 1) / kLine;
  run_released(nbytes / 4, [&] {
    parallel_for(0, lines, kGrainSize * 4 / kLine, [&](int64_t b, int64_t e) {
      const int64_t lo = b * kLine, hi = std::min(e * kLine, nbytes);
      std::memcpy(dst + lo, src + lo, hi - lo);
    });
  });
  return reinterpret_cast<PyObject*>(out);
}

// _C.BINARY_OPS and _C.UNARY_OPS: {formula name: op code}, read by backends/cpu/native.py
TT_EXPORT_OP_CODES(BINARY_OPS, kBinaryOpNames, BIN_COUNT);
TT_EXPORT_OP_CODES(UNARY_OPS, kUnaryOpNames, UN_COUNT);

PyMethodDef pointwise_methods[] = {
    TT_METHOD("binary", py_binary, "binary(op, a, b, scalar=None)"),
    TT_METHOD("binary_", py_binary_inplace, "binary_(op, dst, other, alpha=None)"),
    TT_METHOD("unary", py_unary, "unary(op, a, *scalars)"),
    TT_METHOD("where", py_where, "where(cond, a, b)"),
    TT_METHOD("copy", py_copy, "copy(a): a C-contiguous copy of a C-contiguous array"),
    {nullptr, nullptr, 0, nullptr}};

}  // namespace tt
