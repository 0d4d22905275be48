// NativeKernel: the callable the cpu backend registers for an op with a native implementation. Calling it runs
// entry(*prefix, *args) (a METH_FASTCALL function of this module; `prefix` holds the op code and fixed attributes)
// and, when that returns NotImplemented (a dtype or layout without a native loop) or the call has keyword
// arguments, the op's NumPy kernel `fallback(*args, **kwargs)`. Written in C so the choice costs no Python frame
// per op (vectorcall, PEP 590).
#include "common.h"

#include <cstddef>

namespace tt {

namespace {

struct NativeKernel {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject* entry;
  PyObject* prefix;  // tuple
  PyObject* fallback;
  PyObject* name;
};

constexpr int kMaxArgs = 16;

PyObject* nk_call(PyObject* self_, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  NativeKernel* self = reinterpret_cast<NativeKernel*>(self_);
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  Py_ssize_t np = PyTuple_GET_SIZE(self->prefix);
  if (kwnames == nullptr && nargs + np <= kMaxArgs) {
    PyObject* stack[kMaxArgs];
    for (Py_ssize_t i = 0; i < np; ++i) stack[i] = PyTuple_GET_ITEM(self->prefix, i);
    for (Py_ssize_t i = 0; i < nargs; ++i) stack[np + i] = args[i];
    PyObject* r = PyObject_Vectorcall(self->entry, stack, np + nargs, nullptr);
    if (r != Py_NotImplemented) return r;
    Py_DECREF(r);
  }
  return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

PyObject* nk_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject *entry, *prefix, *fallback, *name;
  static const char* kws[] = {"entry", "prefix", "fallback", "name", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!OU", const_cast<char**>(kws), &entry, &PyTuple_Type, &prefix,
                                   &fallback, &name))
    return nullptr;
  NativeKernel* self = reinterpret_cast<NativeKernel*>(type->tp_alloc(type, 0));
  if (!self) return nullptr;
  self->vectorcall = nk_call;
  Py_INCREF(entry);
  Py_INCREF(prefix);
  Py_INCREF(fallback);
  Py_INCREF(name);
  self->entry = entry;
  self->prefix = prefix;
  self->fallback = fallback;
  self->name = name;
  return reinterpret_cast<PyObject*>(self);
}

int nk_traverse(PyObject* self_, visitproc visit, void* arg) {
  NativeKernel* self = reinterpret_cast<NativeKernel*>(self_);
  Py_VISIT(self->entry);
  Py_VISIT(self->prefix);
  Py_VISIT(self->fallback);
  return 0;
}

void nk_dealloc(PyObject* self_) {
  NativeKernel* self = reinterpret_cast<NativeKernel*>(self_);
  PyObject_GC_UnTrack(self_);
  Py_CLEAR(self->entry);
  Py_CLEAR(self->prefix);
  Py_CLEAR(self->fallback);
  Py_CLEAR(self->name);
  Py_TYPE(self_)->tp_free(self_);
}

PyObject* nk_repr(PyObject* self_) {
  return PyUnicode_FromFormat("<native kernel %U>", reinterpret_cast<NativeKernel*>(self_)->name);
}

PyObject* nk_get_name(PyObject* self_, void*) {
  NativeKernel* self = reinterpret_cast<NativeKernel*>(self_);
  Py_INCREF(self->name);
  return self->name;
}

PyObject* nk_get_fallback(PyObject* self_, void*) {
  NativeKernel* self = reinterpret_cast<NativeKernel*>(self_);
  Py_INCREF(self->fallback);
  return self->fallback;
}

PyGetSetDef nk_getset[] = {
    {"__name__", nk_get_name, nullptr, "the kernel's name", nullptr},
    {"fallback", nk_get_fallback, nullptr, "the NumPy kernel run for inputs without a native loop", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject NativeKernelType = {PyVarObject_HEAD_INIT(nullptr, 0) "tinytorch._C.NativeKernel"};

}  // namespace

int add_native_kernel_type(PyObject* module) {
  NativeKernelType.tp_basicsize = sizeof(NativeKernel);
  NativeKernelType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL;
  NativeKernelType.tp_new = nk_new;
  NativeKernelType.tp_dealloc = nk_dealloc;
  NativeKernelType.tp_traverse = nk_traverse;
  NativeKernelType.tp_call = PyVectorcall_Call;
  NativeKernelType.tp_vectorcall_offset = offsetof(NativeKernel, vectorcall);
  NativeKernelType.tp_repr = nk_repr;
  NativeKernelType.tp_getset = nk_getset;
  NativeKernelType.tp_doc = "NativeKernel(entry, prefix, fallback, name): entry(*prefix, *args), else fallback";
  if (PyType_Ready(&NativeKernelType) < 0) return -1;
  Py_INCREF(&NativeKernelType);
  return PyModule_AddObject(module, "NativeKernel", reinterpret_cast<PyObject*>(&NativeKernelType));
}

}  // namespace tt
