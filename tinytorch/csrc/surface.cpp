// The argument checks of tinytorch's public functions in C: the common path of the wrapper that
// tinytorch/_surface.py's `translated_errors` puts around every public function and Tensor method.
//
// _surface.py's Python wrapper is the reference (TINYTORCH_NATIVE=0 runs it): it hands a call to a
// `__torch_function__` handler, refuses a non-bool where PyTorch's parser wants a bool, an int outside int64,
// reads `pin_memory` and `out=`, then calls the function and turns the exceptions its Python code trips over
// into PyTorch's. This function does the same checks for a call that passes them all (no handler, no
// pin_memory, no out=, every bool a bool, every int in int64) and calls the function; every other call goes
// to the Python wrapper unchanged, before anything has run. An exception the function raises goes to the same
// Python handler the reference uses (`on_error`), so both paths translate it one way.
#include "common.h"

namespace tt {
namespace {

PyObject* s_hook = nullptr;  // "_torch_function_hook"
PyObject* s_pin_memory = nullptr;
PyObject* s_out = nullptr;

// A bool parameter (kind "bool") must get a bool; any other checked parameter (a Tensor, a dtype) must not
// get None: the same test as _surface._check_bools.
bool bools_pass(PyObject* bools, PyObject* args, PyObject* kwargs) {
  Py_ssize_t nargs = PyTuple_GET_SIZE(args);
  for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(bools); ++k) {
    PyObject* spec = PyTuple_GET_ITEM(bools, k);  // (position or -1, name, is the kind "bool")
    Py_ssize_t i = PyLong_AsSsize_t(PyTuple_GET_ITEM(spec, 0));
    PyObject* v = nullptr;
    if (i >= 0 && i < nargs) v = PyTuple_GET_ITEM(args, i);
    else if (kwargs) v = PyDict_GetItemWithError(kwargs, PyTuple_GET_ITEM(spec, 1));
    if (!v) {
      if (PyErr_Occurred()) PyErr_Clear();
      continue;
    }
    bool want_bool = PyTuple_GET_ITEM(spec, 2) == Py_True;
    if (want_bool ? Py_TYPE(v) != &PyBool_Type : v == Py_None) return false;
  }
  return true;
}

bool fits_int64(PyObject* v) {
  if (!PyLong_CheckExact(v)) return true;
  int overflow = 0;
  PyLong_AsLongLongAndOverflow(v, &overflow);
  if (PyErr_Occurred()) PyErr_Clear();
  return overflow == 0;
}

bool ints_pass(PyObject* args, PyObject* kwargs) {
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); ++i)
    if (!fits_int64(PyTuple_GET_ITEM(args, i))) return false;
  if (kwargs) {
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PyDict_Next(kwargs, &pos, &k, &v))
      if (!fits_int64(v)) return false;
  }
  return true;
}

// surface_call(spec, args, kwargs): spec is (fn, reference, on_error, surface globals, bools, check ints,
// out position (-2: none, -1: keyword-only), reads pin_memory).
PyObject* py_surface_call(PyObject*, PyObject* const* a, Py_ssize_t n) {
  if (n != 3 || !PyTuple_Check(a[0]) || PyTuple_GET_SIZE(a[0]) != 8 || !PyTuple_Check(a[1]) ||
      (a[2] != Py_None && !PyDict_Check(a[2]))) {
    PyErr_SetString(PyExc_TypeError, "surface_call(spec, args, kwargs)");
    return nullptr;
  }
  if (!s_hook) {
    s_hook = PyUnicode_InternFromString("_torch_function_hook");
    s_pin_memory = PyUnicode_InternFromString("pin_memory");
    s_out = PyUnicode_InternFromString("out");
    if (!s_hook || !s_pin_memory || !s_out) return nullptr;
  }
  PyObject* spec = a[0];
  PyObject* args = a[1];
  PyObject* kwargs = (a[2] != Py_None && PyDict_GET_SIZE(a[2])) ? a[2] : nullptr;
  PyObject* fn = PyTuple_GET_ITEM(spec, 0);
  PyObject* reference = PyTuple_GET_ITEM(spec, 1);
  PyObject* hook = PyDict_GetItemWithError(PyTuple_GET_ITEM(spec, 3), s_hook);
  if (!hook && PyErr_Occurred()) return nullptr;
  long out_at = PyLong_AsLong(PyTuple_GET_ITEM(spec, 6));
  bool slow = (hook && hook != Py_None) ||
              (kwargs && PyTuple_GET_ITEM(spec, 7) == Py_True && PyDict_Contains(kwargs, s_pin_memory) == 1) ||
              !bools_pass(PyTuple_GET_ITEM(spec, 4), args, kwargs) ||
              (PyTuple_GET_ITEM(spec, 5) == Py_True && !ints_pass(args, kwargs)) ||
              (out_at != -2 && ((kwargs && PyDict_Contains(kwargs, s_out) == 1) ||
                                (out_at >= 0 && PyTuple_GET_SIZE(args) > out_at)));
  if (slow) return PyObject_Call(reference, args, kwargs);
  PyObject* r = PyObject_Call(fn, args, kwargs);
  if (r || !(PyErr_ExceptionMatches(PyExc_AttributeError) || PyErr_ExceptionMatches(PyExc_TypeError) ||
             PyErr_ExceptionMatches(PyExc_MemoryError) || PyErr_ExceptionMatches(PyExc_ValueError)))
    return r;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (tb) PyException_SetTraceback(value, tb);
  PyObject* call[3] = {args, kwargs ? kwargs : a[2], value};
  r = PyObject_Vectorcall(PyTuple_GET_ITEM(spec, 2), call, 3, nullptr);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  return r;
}

}  // namespace

PyMethodDef surface_methods[] = {
    {"surface_call", (PyCFunction)(void (*)(void))py_surface_call, METH_FASTCALL,
     "surface_call(spec, args, kwargs): the checks of a public function's wrapper (_surface.translated_errors) "
     "and the call, for a call that needs none of the wrapper's Python branches"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace tt
