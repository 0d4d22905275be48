// Bulk draws for tinytorch's Generator: the Mersenne Twister's 32-bit stream (MT19937, Matsumoto & Nishimura 1998,
// as C++'s std::mt19937 and PyTorch's CPU generator) advanced on the state held by NumPy's MT19937 bit generator,
// and PyTorch's uniform transformation of it (ATen's uniform_real_distribution). Same numbers as the NumPy path in
// _ops/generator.py, in one pass. Compiled for the baseline instruction set: no fused multiply-add contraction
// changes a rounding here.
#include "kit.h"

namespace tt {

namespace {

constexpr int kN = 624, kM = 397;

void twist(uint32_t* mt) {
  for (int i = 0; i < kN; ++i) {
    uint32_t y = (mt[i] & 0x80000000u) | (mt[(i + 1) % kN] & 0x7fffffffu);
    uint32_t v = mt[(i + kM) % kN] ^ (y >> 1);
    if (y & 1u) v ^= 0x9908b0dfu;
    mt[i] = v;
  }
}

inline uint32_t temper(uint32_t y) {
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

// mt19937_raw(key, pos, n) -> (uint32 array of n draws, new pos); `key` (a writable uint32 array of 624 words) is
// advanced in place
PyObject* py_mt19937_raw(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3 || !is_array(args[0])) {
    PyErr_SetString(PyExc_TypeError, "mt19937_raw(key, pos, n)");
    return nullptr;
  }
  PyArrayObject* key = arr(args[0]);
  if (PyArray_TYPE(key) != NPY_UINT32 || PyArray_SIZE(key) != kN || !PyArray_IS_C_CONTIGUOUS(key) ||
      !PyArray_ISWRITEABLE(key)) {
    PyErr_SetString(PyExc_ValueError, "mt19937_raw: key must be a writable contiguous uint32 array of 624 words");
    return nullptr;
  }
  long pos = PyLong_AsLong(args[1]);
  long long n = PyLong_AsLongLong(args[2]);
  if (PyErr_Occurred()) return nullptr;
  if (pos < 0 || pos > kN || n < 0) {
    PyErr_SetString(PyExc_ValueError, "mt19937_raw: bad position or count");
    return nullptr;
  }
  npy_intp dims[1] = {(npy_intp)n};
  PyArrayObject* out = empty(1, dims, NPY_UINT32);
  if (!out) return nullptr;
  uint32_t* mt = static_cast<uint32_t*>(PyArray_DATA(key));
  uint32_t* o = static_cast<uint32_t*>(PyArray_DATA(out));
  run_released(n, [&] {
    for (long long i = 0; i < n; ++i) {
      if (pos >= kN) {
        twist(mt);
        pos = 0;
      }
      o[i] = temper(mt[pos++]);
    }
  });
  PyObject* r = Py_BuildValue("(Nl)", reinterpret_cast<PyObject*>(out), pos);
  return r;
}

// uniform_from_raw(words, double, low, range): PyTorch's uniform samples from 32-bit draws. double: one sample from
// two words (the first is the high half), its low 53 bits times 2^-53, then x * range + low in double.
// Otherwise one word's low 24 bits times 2^-24, then x * range + low rounded to float32 (range = high - low and
// low computed in float32 by the caller), as the float kernel's fused multiply-add.
PyObject* py_uniform_from_raw(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 4 || !is_array(args[0]) || PyArray_TYPE(arr(args[0])) != NPY_UINT32 ||
      !PyArray_IS_C_CONTIGUOUS(arr(args[0]))) {
    PyErr_SetString(PyExc_TypeError, "uniform_from_raw(words: contiguous uint32 array, double, low, range)");
    return nullptr;
  }
  PyArrayObject* w = arr(args[0]);
  int dbl = PyObject_IsTrue(args[1]);
  double lo = PyFloat_AsDouble(args[2]), range = PyFloat_AsDouble(args[3]);
  if (dbl < 0 || PyErr_Occurred()) return nullptr;
  const uint32_t* words = static_cast<const uint32_t*>(PyArray_DATA(w));
  npy_intp nw = PyArray_SIZE(w);
  npy_intp n = dbl ? nw / 2 : nw;
  npy_intp dims[1] = {n};
  PyArrayObject* out = empty(1, dims, dbl ? NPY_FLOAT64 : NPY_FLOAT32);
  if (!out) return nullptr;
  run_released(n, [&] {
    if (dbl) {
      double* o = static_cast<double*>(PyArray_DATA(out));
      for (npy_intp i = 0; i < n; ++i) {
        uint64_t u = ((uint64_t)words[2 * i] << 32) | words[2 * i + 1];
        double x = (double)(u & ((1ull << 53) - 1)) * (1.0 / 9007199254740992.0);
        double p = x * range;
        o[i] = p + lo;
      }
    } else {
      float* o = static_cast<float*>(PyArray_DATA(out));
      for (npy_intp i = 0; i < n; ++i) {
        double x = (double)(words[i] & ((1u << 24) - 1)) * (1.0 / 16777216.0);
        double p = x * range;  // exact: a 24-bit value times a float32 difference fits a double
        o[i] = (float)(p + lo);
      }
    }
  });
  return reinterpret_cast<PyObject*>(out);
}

}  // namespace

PyMethodDef random_methods[] = {
    {"mt19937_raw", (PyCFunction)(void (*)(void))py_mt19937_raw, METH_FASTCALL,
     "mt19937_raw(key, pos, n) -> (draws, pos)"},
    {"uniform_from_raw", (PyCFunction)(void (*)(void))py_uniform_from_raw, METH_FASTCALL,
     "uniform_from_raw(words, double, low, range) -> samples"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace tt
