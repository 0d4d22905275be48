// Shared by the binding files of tinytorch._C: the NumPy C API, the dtypes the native kernels handle, and
// small helpers to read kernel arguments. Kernels see raw buffers (data pointer, shape, strides in bytes),
// never Tensors: the cpu backend hands them the NumPy views of its storages.
#pragma once
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#ifndef TT_NO_IMPORT_ARRAY
#define NO_IMPORT_ARRAY
#endif
#define PY_ARRAY_UNIQUE_SYMBOL tinytorch_ARRAY_API
#include <numpy/arrayobject.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace tt {

// The element types with native loops. Others (integers, bool, complex) return NotImplemented to the Python
// wrapper, which runs the NumPy kernel: the native path is an accelerator, never the only implementation.
enum class DType : int { f32 = 0, f64 = 1, f16 = 2, bf16 = 3, i64 = 4, i32 = 5, b8 = 6, unsupported = 7 };
constexpr int kNumFloatDTypes = 2;  // f32, f64: the loops' dtype axis

inline DType dtype_of(PyArrayObject* a) {
  switch (PyArray_TYPE(a)) {
    case NPY_FLOAT32: return DType::f32;
    case NPY_FLOAT64: return DType::f64;
    case NPY_FLOAT16: return DType::f16;
    case NPY_INT64: return DType::i64;
    case NPY_INT32: return DType::i32;
    case NPY_BOOL: return DType::b8;
    default: break;
  }
  // ml_dtypes' bfloat16 is a user-defined NumPy type: recognise it by name and size
  PyArray_Descr* d = PyArray_DESCR(a);
  if (PyArray_ITEMSIZE(a) == 2 && d->kind == 'V') {
    PyObject* name = PyObject_GetAttrString((PyObject*)d, "name");
    bool bf = name && PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "bfloat16") == 0;
    Py_XDECREF(name);
    if (!name) PyErr_Clear();
    if (bf) return DType::bf16;
  }
  return DType::unsupported;
}

// The NumPy type number of an output of dtype d (bfloat16's is ml_dtypes' registered number, read at import).
extern int g_bfloat16_npy_type;
inline int npy_type(DType d) {
  switch (d) {
    case DType::f32: return NPY_FLOAT32;
    case DType::f64: return NPY_FLOAT64;
    case DType::f16: return NPY_FLOAT16;
    case DType::bf16: return g_bfloat16_npy_type;
    default: return -1;
  }
}

inline bool is_array(PyObject* o) { return PyArray_Check(o); }
inline PyArrayObject* arr(PyObject* o) { return reinterpret_cast<PyArrayObject*>(o); }

// True when the array's elements are contiguous in row-major order.
inline bool c_contig(PyArrayObject* a) { return PyArray_IS_C_CONTIGUOUS(a); }

// A new C-contiguous array of the given shape and NumPy type (nullptr with MemoryError set on failure).
inline PyArrayObject* empty(int ndim, const npy_intp* shape, int type) {
  return reinterpret_cast<PyArrayObject*>(PyArray_EMPTY(ndim, const_cast<npy_intp*>(shape), type, 0));
}

inline PyArrayObject* empty_like_shape(PyArrayObject* a, int type) {
  return empty(PyArray_NDIM(a), PyArray_DIMS(a), type);
}

// A Python float or int as a double (for scalar arguments); false (no error set) when it is neither.
inline bool as_double(PyObject* o, double* v) {
  if (PyFloat_CheckExact(o)) { *v = PyFloat_AS_DOUBLE(o); return true; }
  if (PyLong_CheckExact(o)) {
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred())) { PyErr_Clear(); return false; }
    *v = static_cast<double>(x);
    return true;
  }
  if (PyFloat_Check(o)) { *v = PyFloat_AsDouble(o); return !PyErr_Occurred(); }
  return false;
}

inline PyObject* not_implemented() { Py_RETURN_NOTIMPLEMENTED; }

}  // namespace tt
