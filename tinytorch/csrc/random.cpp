// Bulk draws for tinytorch's Generator: the Mersenne Twister's 32-bit stream (MT19937, Matsumoto & Nishimura 1998,
// as C++'s std::mt19937 and PyTorch's CPU generator) advanced on the state held by NumPy's MT19937 bit generator,
// and PyTorch's uniform transformation of it (ATen's uniform_real_distribution). Same numbers as the NumPy path in
// _ops/generator.py, in one pass. Compiled for the baseline instruction set: no fused multiply-add contraction
// changes a rounding here.
#include <algorithm>

#include "kit.h"

namespace tt {

namespace {

constexpr int kN = 624, kM = 397;

// The state's next 624 words. The recurrence's index wrap (i + 1, i + 397 modulo 624) is split into three loops
// without a modulo, which the compiler vectorizes: the first reads only words not yet replaced, the second the
// words the first replaced 227 positions back.
inline uint32_t twist_word(uint32_t cur, uint32_t next, uint32_t far) {
  const uint32_t y = (cur & 0x80000000u) | (next & 0x7fffffffu);
  return far ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908b0dfu);
}

void twist(uint32_t* mt) {
  int i = 0;
  for (; i < kN - kM; ++i) mt[i] = twist_word(mt[i], mt[i + 1], mt[i + kM]);
  for (; i < kN - 1; ++i) mt[i] = twist_word(mt[i], mt[i + 1], mt[i + kM - kN]);
  mt[kN - 1] = twist_word(mt[kN - 1], mt[0], mt[kM - 1]);
}

inline uint32_t temper(uint32_t y) {
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

// n words of the stream into o, from position pos of state mt (twisting when it is used up): whole runs of the
// state at a time, tempered in a loop the compiler vectorizes
void draw(uint32_t* mt, long& pos, uint32_t* o, long long n) {
  long long i = 0;
  while (i < n) {
    if (pos >= kN) {
      twist(mt);
      pos = 0;
    }
    const long long m = std::min<long long>(n - i, kN - pos);
    const uint32_t* src = mt + pos;
    for (long long j = 0; j < m; ++j) o[i + j] = temper(src[j]);
    i += m;
    pos += m;
  }
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
  run_released(n, [&] { draw(mt, pos, o, n); });
  PyObject* r = Py_BuildValue("(Nl)", reinterpret_cast<PyObject*>(out), pos);
  return r;
}

// Reads and checks the (key, pos) of a native draw: the 624-word state array (advanced in place) and the position.
bool state_args(PyObject* k, PyObject* p, uint32_t** mt, long* pos, const char* fn) {
  if (!is_array(k) || PyArray_TYPE(arr(k)) != NPY_UINT32 || PyArray_SIZE(arr(k)) != kN ||
      !PyArray_IS_C_CONTIGUOUS(arr(k)) || !PyArray_ISWRITEABLE(arr(k))) {
    PyErr_Format(PyExc_ValueError, "%s: key must be a writable contiguous uint32 array of 624 words", fn);
    return false;
  }
  *pos = PyLong_AsLong(p);
  if (*pos == -1 && PyErr_Occurred()) return false;
  if (*pos < 0 || *pos > kN) {
    PyErr_Format(PyExc_ValueError, "%s: bad position", fn);
    return false;
  }
  *mt = static_cast<uint32_t*>(PyArray_DATA(arr(k)));
  return true;
}

// bernoulli_scaled(key, pos, n, q, double) -> (noise, new pos): dropout's noise in one pass, PyTorch's
// bernoulli_(q) then div_(q) on a float32 (float64 when `double`) tensor: per element one double uniform from two
// words (high word first, its low 53 bits times 2^-53, as uniform_from_raw), kept when below q (a double, as
// ATen's scalar bernoulli compares), and then 1 / q computed in the tensor's type, 0 where dropped.
PyObject* py_bernoulli_scaled(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError, "bernoulli_scaled(key, pos, n, q, double)");
    return nullptr;
  }
  uint32_t* mt;
  long pos;
  if (!state_args(args[0], args[1], &mt, &pos, "bernoulli_scaled")) return nullptr;
  const long long n = PyLong_AsLongLong(args[2]);
  const double q = PyFloat_AsDouble(args[3]);
  const int dbl = PyObject_IsTrue(args[4]);
  if (PyErr_Occurred() || dbl < 0) return nullptr;
  if (n < 0) {
    PyErr_SetString(PyExc_ValueError, "bernoulli_scaled: negative count");
    return nullptr;
  }
  npy_intp dims[1] = {(npy_intp)n};
  PyArrayObject* out = empty(1, dims, dbl ? NPY_FLOAT64 : NPY_FLOAT32);
  if (!out) return nullptr;
  run_released(n, [&] {
    // words in blocks that stay in L1, then the block's uniforms compared and scaled
    constexpr long long kBlock = 2048;
    uint32_t w[2 * kBlock];
    const float kf = 1.0f / static_cast<float>(q);
    const double kd = 1.0 / q;
    for (long long i0 = 0; i0 < n; i0 += kBlock) {
      const long long m = std::min(kBlock, n - i0);
      draw(mt, pos, w, 2 * m);
      for (long long i = 0; i < m; ++i) {
        const uint64_t u = ((uint64_t)w[2 * i] << 32) | w[2 * i + 1];
        const bool keep = (double)(u & ((1ull << 53) - 1)) * (1.0 / 9007199254740992.0) < q;
        if (dbl)
          static_cast<double*>(PyArray_DATA(out))[i0 + i] = keep ? kd : 0.0;
        else
          static_cast<float*>(PyArray_DATA(out))[i0 + i] = keep ? kf : 0.0f;
      }
    }
  });
  return Py_BuildValue("(Nl)", reinterpret_cast<PyObject*>(out), pos);
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
    {"bernoulli_scaled", (PyCFunction)(void (*)(void))py_bernoulli_scaled, METH_FASTCALL,
     "bernoulli_scaled(key, pos, n, q, double) -> (dropout noise, pos)"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace tt
