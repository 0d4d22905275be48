// The binding kit of tinytorch._C: what every kernel family's Python entry points share, in the roles ATen gives
// AT_DISPATCH_FLOATING_TYPES, the argument parser of its Python bindings, at::internal::GRAIN_SIZE and the
// operator registry. A kernel family is one .cpp file that
//   - declares its entries with TT_ENTRY and reads their arguments with one TT_ARGS (or TT_ARGS_KW) line, which
//     returns NotImplemented to the Python wrapper for an argument of a type the entry does not take, so the
//     NumPy kernel runs instead (the native path is an accelerator, never the only implementation);
//   - picks its loop with loop_index (the index of a dtype in its Stub arrays) or TT_DISPATCH_FLOATING_TYPES;
//   - runs its loops through run_released, which lets go of the GIL only when the work is worth it;
//   - exports its op codes with TT_EXPORT_OP_CODES (module constants of _C: backends/cpu/native.py reads them,
//     never a copy of the numbers);
//   - ends with a PyMethodDef table of TT_METHOD lines, named in module.cpp's TT_FAMILIES (one line).
#pragma once
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "common.h"
#include "parallel.h"

namespace tt {

// ---- dtypes ----------------------------------------------------------------------------------------------------

// The index of dtype d in a family's loop tables: 0 float32, 1 float64 and, for families with 16-bit loops
// (with_half), 2 float16 and 3 bfloat16 (only once ml_dtypes' bfloat16 type number is known); -1 for a dtype
// without a loop.
inline int loop_index(DType d, bool with_half = false) {
  switch (d) {
    case DType::f32: return 0;
    case DType::f64: return 1;
    case DType::f16: return with_half ? 2 : -1;
    case DType::bf16: return with_half && g_bfloat16_npy_type >= 0 ? 3 : -1;
    default: return -1;
  }
}
inline int loop_index(PyArrayObject* a, bool with_half = false) { return loop_index(dtype_of(a), with_half); }

// The loop-table index of a C++ element type (the inverse of loop_index inside a dispatched lambda).
template <typename T>
constexpr int kLoopIndex = std::is_same<T, float>::value ? 0 : std::is_same<T, double>::value ? 1 : -1;

[[noreturn]] inline void dispatch_failed(const char* name) {
  // an entry dispatched a dtype it had not checked with loop_index: a bug in that entry, not a user error
  Py_FatalError(name);
}

// AT_DISPATCH_FLOATING_TYPES' role: runs the lambda (the last argument) with `scalar_t` bound to the C++ type of
// DTYPE (a DType: float32 or float64) and returns its result. Entries check the dtype first (loop_index >= 0),
// so any other dtype here is a bug and aborts with NAME.
#define TT_DISPATCH_FLOATING_TYPES(DTYPE, NAME, ...)                  \
  [&] {                                                               \
    switch (DTYPE) {                                                  \
      case ::tt::DType::f32: {                                        \
        using scalar_t = float;                                       \
        return __VA_ARGS__();                                         \
      }                                                               \
      case ::tt::DType::f64: {                                        \
        using scalar_t = double;                                      \
        return __VA_ARGS__();                                         \
      }                                                               \
      default: ::tt::dispatch_failed(NAME ": dtype not dispatched");  \
    }                                                                 \
  }()

// ---- the GIL ---------------------------------------------------------------------------------------------------

// Runs f, with the GIL released when `work` (elements touched, or multiply-adds) reaches kGrainSizeGIL: below
// that, giving the GIL up and taking it back costs more than another Python thread could gain.
template <typename F>
inline void run_released(int64_t work, F&& f) {
  if (work >= kGrainSizeGIL) {
    Py_BEGIN_ALLOW_THREADS
    f();
    Py_END_ALLOW_THREADS
  } else {
    f();
  }
}

// ---- references ------------------------------------------------------------------------------------------------

// Owns one reference to an array (or holds none); release() hands it to the caller.
struct Ref {
  PyArrayObject* p;
  explicit Ref(PyArrayObject* x = nullptr) : p(x) {}
  ~Ref() { Py_XDECREF(p); }
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  PyObject* release() {
    PyObject* r = reinterpret_cast<PyObject*>(p);
    p = nullptr;
    return r;
  }
};

// ---- arguments -------------------------------------------------------------------------------------------------

// An argument that may be None, or left out at the end of the call: `has` says whether it was given.
template <typename T>
struct Opt {
  bool has = false;
  T v{};
};

using IntList = std::vector<int64_t>;

namespace argconv {

// Each conversion: 1 converted, 0 a type (or value) the entry does not take, -1 a Python error is set.
inline int convert(PyObject* o, PyObject*& out) {
  out = o;
  return 1;
}
inline int convert(PyObject* o, PyArrayObject*& out) {
  if (!PyArray_Check(o)) return 0;
  out = reinterpret_cast<PyArrayObject*>(o);
  return 1;
}
// a Python int (bool included, as int() takes it) that fits int64
inline int convert(PyObject* o, int64_t& out) {
  if (!PyLong_Check(o)) return 0;
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow || (x == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return 0;
  }
  out = x;
  return 1;
}
inline int convert(PyObject* o, int& out) {
  int64_t x;
  if (convert(o, x) != 1 || x < INT32_MIN || x > INT32_MAX) return 0;
  out = static_cast<int>(x);
  return 1;
}
// a Python float or int (not a bool: PyTorch's scalar arguments treat True as a boolean, not 1.0)
inline int convert(PyObject* o, double& out) { return as_double(o, &out) ? 1 : 0; }
// any object, by its truth value (an object whose __bool__ raises propagates the error)
inline int convert(PyObject* o, bool& out) {
  const int t = PyObject_IsTrue(o);
  if (t < 0) return -1;
  out = t != 0;
  return 1;
}
// ints from a tuple, a list or another iterable
inline int convert(PyObject* o, IntList& out) {
  PyObject* seq = PySequence_Fast(o, "");
  if (!seq) {
    PyErr_Clear();
    return 0;
  }
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  PyObject** items = PySequence_Fast_ITEMS(seq);
  out.resize(n);
  int r = 1;
  for (Py_ssize_t i = 0; i < n && r == 1; ++i) r = convert(items[i], out[i]);
  Py_DECREF(seq);
  return r;
}
template <typename T>
inline int convert(PyObject* o, Opt<T>& out) {
  if (o == nullptr || o == Py_None) {
    out.has = false;
    return 1;
  }
  out.has = true;
  return convert(o, out.v);
}

template <typename T>
struct is_opt : std::false_type {};
template <typename T>
struct is_opt<Opt<T>> : std::true_type {};

template <typename T>
inline int convert_slot(PyObject* o, T& out) {
  if (o == nullptr) {  // not passed: only an Opt may be left out
    if constexpr (is_opt<T>::value) {
      out.has = false;
      return 1;
    }
    return 0;
  }
  return convert(o, out);
}

}  // namespace argconv

// Reads a vectorcall's arguments (positional, or by keyword when `names` lists the parameters) into `outs`, one
// per parameter, converting each by its C++ type. 1: all read; 0: the call does not fit (too many arguments, an
// unknown or repeated keyword, a missing one, a type the entry does not take) and no error is set; -1: an error.
template <typename... Ts>
int parse_args(PyObject* const* argv, Py_ssize_t nargs, PyObject* kwnames, const char* const* names, Ts&... outs) {
  constexpr int n = sizeof...(Ts);
  if (nargs > n) return 0;
  PyObject* slot[n > 0 ? n : 1];
  for (int i = 0; i < n; ++i) slot[i] = i < nargs ? argv[i] : nullptr;
  if (kwnames && PyTuple_GET_SIZE(kwnames)) {
    if (!names) return 0;
    const Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < nk; ++k) {
      PyObject* key = PyTuple_GET_ITEM(kwnames, k);
      int idx = -1;
      for (int i = 0; i < n && idx < 0; ++i)
        if (PyUnicode_CompareWithASCIIString(key, names[i]) == 0) idx = i;
      if (idx < 0 || slot[idx]) return 0;
      slot[idx] = argv[nargs + k];
    }
  }
  int i = 0, r = 1;
  // left to right, stopping at the first argument that does not convert
  ((r = r == 1 ? argconv::convert_slot(slot[i++], outs) : r), ...);
  return r;
}

// What an entry returns when parse_args (or another check) gave `r` <= 0: the pending error, or NotImplemented.
inline PyObject* declined(int r) { return r < 0 ? nullptr : not_implemented(); }

// The signature of every entry: METH_FASTCALL | METH_KEYWORDS (TT_METHOD).
#define TT_ENTRY(fn) PyObject* fn(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames)

// Reads the entry's arguments into the variables named (their types say how), or returns NotImplemented (or the
// pending error) from the entry. TT_ARGS takes positional arguments only; TT_ARGS_KW(names, ...) also keywords.
#define TT_ARGS(...) TT_ARGS_KW(nullptr, __VA_ARGS__)
#define TT_ARGS_KW(NAMES, ...)                                                           \
  do {                                                                                   \
    const int tt_parsed_ = ::tt::parse_args(args, nargs, kwnames, NAMES, __VA_ARGS__);  \
    if (tt_parsed_ <= 0) return ::tt::declined(tt_parsed_);                              \
  } while (0)

// One line of a family's method table.
#define TT_METHOD(name, fn, doc) \
  { name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(fn)), METH_FASTCALL | METH_KEYWORDS, doc }

// ---- op codes --------------------------------------------------------------------------------------------------

// Registers {names[i]: i for i < count} as the module constant `attr` of _C (added when the module loads).
int register_op_codes(const char* attr, const char* const* names, int count);
// Adds every registered table to the module (module.cpp); -1 with an error set on failure.
int add_op_codes(PyObject* module);

// In a family's .cpp: exports its op-code table as _C.ATTR at import (one static registration, no edit elsewhere).
#define TT_EXPORT_OP_CODES(ATTR, NAMES, COUNT) \
  [[maybe_unused]] static const int tt_op_codes_##ATTR = ::tt::register_op_codes(#ATTR, NAMES, COUNT)

}  // namespace tt
