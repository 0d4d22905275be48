// The cpu backend's Backend.wrap fast path: a kernel's result array as (array, flat buffer, strides in elements,
// offset). The Python version (backends/cpu/__init__.py) handles every layout; this one only the common
// C-contiguous result of the expected dtype, in one call instead of five NumPy attribute reads.
#include "common.h"

namespace tt {

int g_bfloat16_npy_type = -1;

// set_bfloat16_type(num): the NumPy type number ml_dtypes registered for bfloat16 (outputs of bfloat16 loops)
static PyObject* py_set_bfloat16_type(PyObject*, PyObject* arg) {
  long n = PyLong_AsLong(arg);
  if (n == -1 && PyErr_Occurred()) return nullptr;
  g_bfloat16_npy_type = (int)n;
  Py_RETURN_NONE;
}

// wrap_contiguous(a, np_dtype) -> (a, a.reshape(-1), strides, 0), or None when `a` is not an ndarray of exactly
// that dtype in row-major order
static PyObject* py_wrap_contiguous(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyArray_CheckExact(args[0])) Py_RETURN_NONE;
  PyArrayObject* a = arr(args[0]);
  PyArray_Descr* want = reinterpret_cast<PyArray_Descr*>(args[1]);
  PyArray_Descr* have = PyArray_DESCR(a);
  if (have != want && !PyArray_EquivTypes(have, want)) Py_RETURN_NONE;
  if (!PyArray_IS_C_CONTIGUOUS(a)) Py_RETURN_NONE;
  int nd = PyArray_NDIM(a);
  npy_intp n = PyArray_SIZE(a);
  PyObject* strides = PyTuple_New(nd);
  if (!strides) return nullptr;
  npy_intp acc = 1;
  for (int d = nd - 1; d >= 0; --d) {
    PyObject* s = PyLong_FromSsize_t(acc);
    if (!s) { Py_DECREF(strides); return nullptr; }
    PyTuple_SET_ITEM(strides, d, s);
    npy_intp dim = PyArray_DIM(a, d);
    acc *= dim > 1 ? dim : 1;
  }
  PyObject* flat;
  if (nd == 1) {
    flat = args[0];
    Py_INCREF(flat);
  } else {
    npy_intp dims[1] = {n};
    Py_INCREF(have);
    flat = PyArray_NewFromDescr(&PyArray_Type, have, 1, dims, nullptr, PyArray_DATA(a),
                                PyArray_FLAGS(a) & (NPY_ARRAY_WRITEABLE | NPY_ARRAY_ALIGNED), nullptr);
    if (!flat) { Py_DECREF(strides); return nullptr; }
    Py_INCREF(args[0]);
    if (PyArray_SetBaseObject(arr(flat), args[0]) < 0) { Py_DECREF(flat); Py_DECREF(strides); return nullptr; }
  }
  PyObject* zero = PyLong_FromLong(0);
  PyObject* r = PyTuple_Pack(4, args[0], flat, strides, zero);
  Py_DECREF(flat);
  Py_DECREF(strides);
  Py_DECREF(zero);
  return r;
}

PyMethodDef storage_methods[] = {
    {"set_bfloat16_type", py_set_bfloat16_type, METH_O, "the NumPy type number of ml_dtypes.bfloat16"},
    {"wrap_contiguous", (PyCFunction)(void (*)(void))py_wrap_contiguous, METH_FASTCALL,
     "wrap_contiguous(a, dtype) -> (a, flat, strides, 0) or None"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace tt
