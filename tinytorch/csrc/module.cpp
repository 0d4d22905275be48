// tinytorch._C: the native kernels of the cpu backend. Each kernel family (pointwise.cpp, ...) exports a
// PyMethodDef table; this file joins them into one module and adds the thread-pool and capability queries.
#define TT_NO_IMPORT_ARRAY  // this file calls import_array()
#include "kit.h"
#include "dispatch_stub.h"
#include "parallel.h"

namespace tt {
int add_native_kernel_type(PyObject* module);
// One family a line: a kernel file's PyMethodDef table (kit.h). Its op codes register themselves
// (TT_EXPORT_OP_CODES), so adding a family is writing its file and adding its line here.
#define TT_FAMILIES(X)      \
  X(pointwise_methods)      \
  X(storage_methods)        \
  X(random_methods)         \
  X(optim_methods)          \
  X(reduce_methods)         \
  X(index_methods)          \
  X(rows_methods)           \
  X(blas_methods)           \
  X(conv_methods)           \
  X(attention_methods)      \
  X(dispatch_methods)       \
  X(surface_methods)        \
  X(generated_methods)

#define TT_DECLARE_FAMILY(t) extern PyMethodDef t[];
TT_FAMILIES(TT_DECLARE_FAMILY)
#undef TT_DECLARE_FAMILY

namespace {
struct OpCodeTable {
  const char* attr;
  const char* const* names;
  int count;
};
// Filled by the families' static registrations before PyInit__C runs; a function-local static, so it exists
// before the first of them whatever order the files' initializers run in.
std::vector<OpCodeTable>& op_code_tables() {
  static std::vector<OpCodeTable> tables;
  return tables;
}
}  // namespace

int register_op_codes(const char* attr, const char* const* names, int count) {
  op_code_tables().push_back({attr, names, count});
  return count;
}

int add_op_codes(PyObject* m) {
  for (const OpCodeTable& t : op_code_tables()) {
    PyObject* d = PyDict_New();
    if (!d) return -1;
    for (int i = 0; i < t.count; ++i) {
      PyObject* code = PyLong_FromLong(i);
      if (!code || PyDict_SetItemString(d, t.names[i], code) < 0) {
        Py_XDECREF(code);
        Py_DECREF(d);
        return -1;
      }
      Py_DECREF(code);
    }
    if (PyModule_AddObject(m, t.attr, d) < 0) {
      Py_DECREF(d);
      return -1;
    }
  }
  return 0;
}

static PyObject* py_get_num_threads(PyObject*, PyObject*) { return PyLong_FromLong(get_num_threads()); }

static PyObject* py_set_num_threads(PyObject*, PyObject* arg) {
  long n = PyLong_AsLong(arg);
  if (n == -1 && PyErr_Occurred()) return nullptr;
  if (n <= 0) {
    PyErr_SetString(PyExc_RuntimeError, "set_num_threads expects a positive integer");
    return nullptr;
  }
  Py_BEGIN_ALLOW_THREADS
  set_num_threads((int)n);
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}

static PyObject* py_cpu_capability(PyObject*, PyObject*) {
  return PyUnicode_FromString(capability_name(cpu_capability()));
}

static PyMethodDef core_methods[] = {
    {"get_num_threads", py_get_num_threads, METH_NOARGS, "threads of the native kernels' pool"},
    {"set_num_threads", py_set_num_threads, METH_O, "resize the native kernels' pool"},
    {"cpu_capability", py_cpu_capability, METH_NOARGS, "the instruction set the loops were chosen for"},
    {nullptr, nullptr, 0, nullptr}};

static std::vector<PyMethodDef> all_methods() {
  std::vector<PyMethodDef> v;
  auto add = [&](PyMethodDef* t) {
    for (; t->ml_name; ++t) v.push_back(*t);
  };
  add(core_methods);
#define TT_ADD(t) add(t);
  TT_FAMILIES(TT_ADD)
  v.push_back({nullptr, nullptr, 0, nullptr});
  return v;
}

}  // namespace tt

static std::vector<PyMethodDef> g_methods;
static PyModuleDef g_module = {PyModuleDef_HEAD_INIT, "tinytorch._C",
                               "Native (C++) kernels of tinytorch's cpu backend.", -1, nullptr};

PyMODINIT_FUNC PyInit__C(void) {
  import_array();
  g_methods = tt::all_methods();
  g_module.m_methods = g_methods.data();
  PyObject* m = PyModule_Create(&g_module);
  if (m && (tt::add_native_kernel_type(m) < 0 || tt::add_op_codes(m) < 0)) {
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
