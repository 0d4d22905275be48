// Python entry points of the native pointwise kernels: binary ops (with broadcasting and a Python-number
// operand), unary ops, comparisons and where. Every entry returns NotImplemented for inputs it does not
// handle (dtypes other than float32/float64, mixed dtypes), and the Python wrapper runs the NumPy kernel.
#include "common.h"
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

static int float_index(DType d) {
  if (d == DType::bf16 && g_bfloat16_npy_type < 0) return -1;
  return d == DType::f32 ? 0 : d == DType::f64 ? 1 : d == DType::f16 ? 2 : d == DType::bf16 ? 3 : -1;
}

// Runs the iterator with the GIL released when the work is worth a thread.
static void run_iter(const TensorIter& it, OpLoop1d fn, int op, const double* sc) {
  OpLoopCtx ctx{fn, op, sc};
  auto body = [&] {
    // worker threads read the context through the loop's scalars pointer, not thread-local state
    it.run([](char** d, const int64_t* s, int64_t n, const double* p) {
      const OpLoopCtx* c = reinterpret_cast<const OpLoopCtx*>(p);
      c->fn(d, s, n, c->scalars, c->op);
    }, reinterpret_cast<const double*>(&ctx));
  };
  if (it.numel() >= kGrainSizeGIL) {
    Py_BEGIN_ALLOW_THREADS
    body();
    Py_END_ALLOW_THREADS
  } else {
    body();
  }
}

static DType first_dtype(PyObject* const* xs, int n) {
  for (int i = 0; i < n; ++i)
    if (is_array(xs[i])) return dtype_of(arr(xs[i]));
  return DType::unsupported;
}

// binary(op, a, b, scalar0=None): out = op(a, b)
static PyObject* py_binary(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 3) return not_implemented();
  int op = (int)PyLong_AsLong(args[0]);
  DType dt = first_dtype(args + 1, 2);
  int fi = float_index(dt);
  if (fi < 0 || op < 0 || op >= BIN_COUNT) return not_implemented();
  // PyTorch multiplies a 16-bit tensor by a Python number in float32 (the number is not rounded to the tensor's
  // dtype first); these loops would round it: leave that case to NumPy
  if (fi >= 2 && !(is_array(args[1]) && is_array(args[2]))) return not_implemented();
  double sc[1] = {1.0};
  if (nargs > 3 && args[3] != Py_None && !as_double(args[3], &sc[0])) return not_implemented();
  TensorIter it;
  if (!it.build(args + 1, 2, dt, is_comparison(op) ? NPY_BOOL : npy_type(dt))) {
    if (PyErr_Occurred()) return nullptr;
    return not_implemented();
  }
  run_iter(it, binary_stub[fi].get(), op, sc);
  return reinterpret_cast<PyObject*>(it.output());
}

// binary_(op, dst, other, alpha=None): dst = op(dst, other) in place (Tensor.add_ and friends); None, or
// NotImplemented when dst's dtype has no loop, other has another dtype, or the two overlap partially
static PyObject* py_binary_inplace(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 3 || !is_array(args[1])) return not_implemented();
  int op = (int)PyLong_AsLong(args[0]);
  PyArrayObject* dst = arr(args[1]);
  DType dt = dtype_of(dst);
  int fi = float_index(dt);
  if (fi < 0 || op < 0 || op >= BIN_COUNT || is_comparison(op)) return not_implemented();
  double sc[1] = {1.0};
  if (nargs > 3 && args[3] != Py_None && !as_double(args[3], &sc[0])) return not_implemented();
  TensorIter it;
  if (!it.build_into(dst, args + 1, 2, dt)) {
    if (PyErr_Occurred()) return nullptr;
    return not_implemented();
  }
  run_iter(it, binary_stub[fi].get(), op, sc);
  Py_RETURN_NONE;
}

// unary(op, a, s0, s1, s2, s3): out = op(a) with up to four scalar attributes
static PyObject* py_unary(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 2 || !is_array(args[1])) return not_implemented();
  int op = (int)PyLong_AsLong(args[0]);
  DType dt = dtype_of(arr(args[1]));
  int fi = float_index(dt);
  if (fi < 0 || op < 0 || op >= UN_COUNT) return not_implemented();
  double sc[4] = {0, 0, 0, 0};
  for (Py_ssize_t i = 2; i < nargs && i < 6; ++i)
    if (args[i] != Py_None && !as_double(args[i], &sc[i - 2])) return not_implemented();
  TensorIter it;
  if (!it.build(args + 1, 1, dt, npy_type(dt))) {
    if (PyErr_Occurred()) return nullptr;
    return not_implemented();
  }
  run_iter(it, unary_stub[fi].get(), op, sc);
  return reinterpret_cast<PyObject*>(it.output());
}

// where(cond, a, b): cond a bool array, a and b arrays or numbers of one float dtype
static PyObject* py_where(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3 || !is_array(args[0]) || dtype_of(arr(args[0])) != DType::b8) return not_implemented();
  DType dt = first_dtype(args + 1, 2);
  int fi = float_index(dt);
  if (fi < 0) return not_implemented();
  TensorIter it;
  if (!it.build(args, 3, dt, npy_type(dt), DType::b8)) {
    if (PyErr_Occurred()) return nullptr;
    return not_implemented();
  }
  Loop1d loop = where_stub[fi].get();
  if (it.numel() >= kGrainSizeGIL) {
    Py_BEGIN_ALLOW_THREADS
    it.run(loop);
    Py_END_ALLOW_THREADS
  } else {
    it.run(loop);
  }
  return reinterpret_cast<PyObject*>(it.output());
}

static PyObject* names_to_codes(const char* const* names, int count) {
  PyObject* d = PyDict_New();
  if (!d) return nullptr;
  for (int i = 0; i < count; ++i) {
    PyObject* code = PyLong_FromLong(i);
    if (!code || PyDict_SetItemString(d, names[i], code) < 0) {
      Py_XDECREF(code);
      Py_DECREF(d);
      return nullptr;
    }
    Py_DECREF(code);
  }
  return d;
}

// _C.BINARY_OPS and _C.UNARY_OPS: {formula name: op code}, read by backends/cpu/native.py
int add_pointwise_constants(PyObject* m) {
  PyObject* b = names_to_codes(kBinaryOpNames, BIN_COUNT);
  if (!b || PyModule_AddObject(m, "BINARY_OPS", b) < 0) {
    Py_XDECREF(b);
    return -1;
  }
  PyObject* u = names_to_codes(kUnaryOpNames, UN_COUNT);
  if (!u || PyModule_AddObject(m, "UNARY_OPS", u) < 0) {
    Py_XDECREF(u);
    return -1;
  }
  return 0;
}

PyMethodDef pointwise_methods[] = {
    {"binary", (PyCFunction)(void (*)(void))py_binary, METH_FASTCALL, "binary(op, a, b, scalar=None)"},
    {"binary_", (PyCFunction)(void (*)(void))py_binary_inplace, METH_FASTCALL, "binary_(op, dst, other, alpha=None)"},
    {"unary", (PyCFunction)(void (*)(void))py_unary, METH_FASTCALL, "unary(op, a, *scalars)"},
    {"where", (PyCFunction)(void (*)(void))py_where, METH_FASTCALL, "where(cond, a, b)"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace tt
