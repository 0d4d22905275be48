// Sliding-window kernels of the cpu backend: im2col / col2im (convolution as one GEMM, the (C*kh*kw, N, L)
// layout of backends/cpu/nn.py) and max pooling with indices and its backward. Float32/float64; other dtypes
// return NotImplemented and run on NumPy.
//
// Max pooling follows ATen's native/cpu/MaxPoolKernel.cpp: each window is clipped to the input, its argmax starts
// at the first in-bounds element with -inf, and an element replaces the maximum when it is greater or NaN (so the
// first of equal maxima wins and the last NaN of a window wins). Indices are flat h * W + w offsets into the plane.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "common.h"
#include "conv_ops.h"
#include "parallel.h"

namespace tt {

Stub<MaxPoolPlane> max_pool_plane_stub[2];

namespace {

// An int pair argument (a tuple or list of two ints).
bool int_pair(PyObject* o, int64_t* v) {
  if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
  PyObject* seq = PySequence_Fast(o, "");
  if (!seq) {
    PyErr_Clear();
    return false;
  }
  bool ok = PySequence_Fast_GET_SIZE(seq) == 2;
  for (int i = 0; ok && i < 2; ++i) {
    PyObject* x = PySequence_Fast_GET_ITEM(seq, i);
    if (!PyLong_Check(x)) { ok = false; break; }
    v[i] = PyLong_AsLongLong(x);
    if (v[i] == -1 && PyErr_Occurred()) { PyErr_Clear(); ok = false; }
  }
  Py_DECREF(seq);
  return ok;
}

int float_kind(PyArrayObject* x) {
  int t = PyArray_TYPE(x);
  return t == NPY_FLOAT32 ? 0 : t == NPY_FLOAT64 ? 1 : -1;
}

// The range [lo, hi) of output positions o whose input position o * s + off lies in [0, size).
inline void valid_range(int64_t n_out, int64_t s, int64_t off, int64_t size, int64_t* lo, int64_t* hi) {
  *lo = off >= 0 ? 0 : std::min(n_out, (-off + s - 1) / s);
  *hi = size - off <= 0 ? 0 : std::min(n_out, (size - off + s - 1) / s);
  if (*hi < *lo) *hi = *lo;
}

using Window = PoolGeom;

// GCC turns a copy loop into a memcpy call, which costs more than the copy for rows of a few dozen elements
#if defined(__GNUC__) && !defined(__clang__)
#define TT_NO_MEMCPY_IDIOM __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define TT_NO_MEMCPY_IDIOM
#endif

template <typename T>
TT_NO_MEMCPY_IDIOM void im2col_rows(const char* x, const npy_intp* st, int64_t N, int64_t H, int64_t W, const Window& g, int64_t oh,
                 int64_t ow, T* out, int64_t r0, int64_t r1) {
  const int64_t L = oh * ow;
  for (int64_t r = r0; r < r1; ++r) {
    int64_t n = r % N, q = r / N;
    int64_t j = q % g.kw, i = (q / g.kw) % g.kh, c = q / (g.kw * g.kh);
    T* dst = out + r * L;
    const char* plane = x + n * st[0] + c * st[1];
    int64_t xoff = j * g.dw - g.pw, lo, hi;
    valid_range(ow, g.sw, xoff, W, &lo, &hi);
    for (int64_t oy = 0; oy < oh; ++oy, dst += ow) {
      int64_t iy = oy * g.sh - g.ph + i * g.dh;
      if (iy < 0 || iy >= H) {
        std::fill(dst, dst + ow, T(0));
        continue;
      }
      const char* src = plane + iy * st[2];
      std::fill(dst, dst + lo, T(0));
      std::fill(dst + hi, dst + ow, T(0));
      if (g.sw == 1 && st[3] == (npy_intp)sizeof(T)) {
        const T* s = reinterpret_cast<const T*>(src) + xoff;
        for (int64_t ox = lo; ox < hi; ++ox) dst[ox] = s[ox];
      } else {
        const npy_intp step = g.sw * st[3];
        const char* p = src + (lo * g.sw + xoff) * st[3];
        for (int64_t ox = lo; ox < hi; ++ox, p += step) dst[ox] = *reinterpret_cast<const T*>(p);
      }
    }
  }
}

// im2col(x, kernel_size, dilation, padding, stride): (N, C, H, W) -> (C*kh*kw, N, oh*ow)
PyObject* py_im2col(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 5 || !is_array(args[0])) return not_implemented();
  PyArrayObject* x = arr(args[0]);
  int kind = float_kind(x);
  int64_t k[2], d[2], p[2], s[2];
  if (kind < 0 || PyArray_NDIM(x) != 4 || !PyArray_ISALIGNED(x) || !int_pair(args[1], k) ||
      !int_pair(args[2], d) || !int_pair(args[3], p) || !int_pair(args[4], s))
    return not_implemented();
  const npy_intp* dims = PyArray_DIMS(x);
  int64_t N = dims[0], C = dims[1], H = dims[2], W = dims[3];
  Window g{k[0], k[1], d[0], d[1], p[0], p[1], s[0], s[1]};
  if (g.kh <= 0 || g.kw <= 0 || g.dh <= 0 || g.dw <= 0 || g.sh <= 0 || g.sw <= 0 || g.ph < 0 || g.pw < 0)
    return not_implemented();
  int64_t oh = (H + 2 * g.ph - g.dh * (g.kh - 1) - 1) / g.sh + 1;
  int64_t ow = (W + 2 * g.pw - g.dw * (g.kw - 1) - 1) / g.sw + 1;
  if (H + 2 * g.ph - g.dh * (g.kh - 1) - 1 < 0 || W + 2 * g.pw - g.dw * (g.kw - 1) - 1 < 0) return not_implemented();
  npy_intp shape[3] = {(npy_intp)(C * g.kh * g.kw), (npy_intp)N, (npy_intp)(oh * ow)};
  PyArrayObject* out = empty(3, shape, PyArray_TYPE(x));
  if (!out) return nullptr;
  int64_t rows = shape[0] * shape[1], L = shape[2];
  if (rows * L == 0) return reinterpret_cast<PyObject*>(out);
  const char* px = PyArray_BYTES(x);
  const npy_intp* st = PyArray_STRIDES(x);
  char* po = PyArray_BYTES(out);
  int64_t grain = std::max<int64_t>(1, kGrainSize / L);
  auto body = [&] {
    parallel_for(0, rows, grain, [&](int64_t r0, int64_t r1) {
      if (kind == 0) im2col_rows<float>(px, st, N, H, W, g, oh, ow, reinterpret_cast<float*>(po), r0, r1);
      else im2col_rows<double>(px, st, N, H, W, g, oh, ow, reinterpret_cast<double*>(po), r0, r1);
    });
  };
  if (rows * L >= kGrainSizeGIL) {
    Py_BEGIN_ALLOW_THREADS
    body();
    Py_END_ALLOW_THREADS
  } else {
    body();
  }
  return reinterpret_cast<PyObject*>(out);
}

template <typename T>
void col2im_planes(const char* cols, const npy_intp* cs, int64_t C, int64_t H, int64_t W, const Window& g,
                   int64_t oh, int64_t ow, T* out, int64_t p0, int64_t p1) {
  for (int64_t pl = p0; pl < p1; ++pl) {
    int64_t n = pl / C, c = pl % C;
    T* dst = out + pl * H * W;
    std::fill(dst, dst + H * W, T(0));
    // summed over the window offsets in the NumPy kernel's order, so the results agree bit for bit
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) {
        const char* row = cols + ((c * g.kh + i) * g.kw + j) * cs[0] + n * cs[1];
        int64_t xoff = j * g.dw - g.pw, lo, hi;
        valid_range(ow, g.sw, xoff, W, &lo, &hi);
        for (int64_t oy = 0; oy < oh; ++oy) {
          int64_t iy = oy * g.sh - g.ph + i * g.dh;
          if (iy < 0 || iy >= H) continue;
          T* drow = dst + iy * W + xoff;
          const char* src = row + oy * ow * cs[2];
          if (cs[2] == (npy_intp)sizeof(T)) {
            const T* sp = reinterpret_cast<const T*>(src);
            if (g.sw == 1)
              for (int64_t ox = lo; ox < hi; ++ox) drow[ox] += sp[ox];
            else
              for (int64_t ox = lo; ox < hi; ++ox) drow[ox * g.sw] += sp[ox];
          } else {
            for (int64_t ox = lo; ox < hi; ++ox) drow[ox * g.sw] += *reinterpret_cast<const T*>(src + ox * cs[2]);
          }
        }
      }
    }
  }
}

// col2im(cols, output_size, kernel_size, dilation, padding, stride): (C*kh*kw, N, L) -> (N, C, H, W), the
// adjoint of im2col (overlapping windows summed)
PyObject* py_col2im(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 6 || !is_array(args[0])) return not_implemented();
  PyArrayObject* cols = arr(args[0]);
  int kind = float_kind(cols);
  int64_t o[2], k[2], d[2], p[2], s[2];
  if (kind < 0 || PyArray_NDIM(cols) != 3 || !PyArray_ISALIGNED(cols) || !int_pair(args[1], o) ||
      !int_pair(args[2], k) || !int_pair(args[3], d) || !int_pair(args[4], p) || !int_pair(args[5], s))
    return not_implemented();
  Window g{k[0], k[1], d[0], d[1], p[0], p[1], s[0], s[1]};
  int64_t H = o[0], W = o[1];
  if (g.kh <= 0 || g.kw <= 0 || g.dh <= 0 || g.dw <= 0 || g.sh <= 0 || g.sw <= 0 || g.ph < 0 || g.pw < 0 ||
      H < 0 || W < 0)
    return not_implemented();
  int64_t spanh = H + 2 * g.ph - g.dh * (g.kh - 1) - 1, spanw = W + 2 * g.pw - g.dw * (g.kw - 1) - 1;
  if (spanh < 0 || spanw < 0) return not_implemented();
  int64_t oh = spanh / g.sh + 1, ow = spanw / g.sw + 1;
  const npy_intp* dims = PyArray_DIMS(cols);
  int64_t N = dims[1], C = dims[0] / (g.kh * g.kw);
  if (dims[0] != C * g.kh * g.kw || dims[2] != oh * ow) return not_implemented();
  npy_intp shape[4] = {(npy_intp)N, (npy_intp)C, (npy_intp)H, (npy_intp)W};
  PyArrayObject* out = empty(4, shape, PyArray_TYPE(cols));
  if (!out) return nullptr;
  int64_t planes = N * C;
  if (planes * H * W == 0) return reinterpret_cast<PyObject*>(out);
  const char* pc = PyArray_BYTES(cols);
  const npy_intp* cs = PyArray_STRIDES(cols);
  char* po = PyArray_BYTES(out);
  int64_t work = std::max<int64_t>(1, g.kh * g.kw * oh * ow);
  auto body = [&] {
    parallel_for(0, planes, std::max<int64_t>(1, kGrainSize / work), [&](int64_t p0, int64_t p1) {
      if (kind == 0) col2im_planes<float>(pc, cs, C, H, W, g, oh, ow, reinterpret_cast<float*>(po), p0, p1);
      else col2im_planes<double>(pc, cs, C, H, W, g, oh, ow, reinterpret_cast<double*>(po), p0, p1);
    });
  };
  if (planes * work >= kGrainSizeGIL) {
    Py_BEGIN_ALLOW_THREADS
    body();
    Py_END_ALLOW_THREADS
  } else {
    body();
  }
  return reinterpret_cast<PyObject*>(out);
}

// PyTorch's pooling_output_shape (tinytorch._geometry.pool_out_size)
int64_t pool_out_size(int64_t size, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  int64_t span = size + 2 * p - d * (k - 1) - 1;
  int64_t num = span + (ceil_mode ? s - 1 : 0);
  int64_t out = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;  // floor division, as Python's //
  if (ceil_mode && (out - 1) * s >= size + p) --out;
  return out;
}

template <typename T>
void max_pool_planes(const char* x, const char* end, const npy_intp* st, int64_t C, int64_t H, int64_t W,
                     const PoolGeom& g, int64_t oh, int64_t ow, T* val, int64_t* idx, int64_t p0, int64_t p1) {
  MaxPoolPlane fn = max_pool_plane_stub[sizeof(T) == 4 ? 0 : 1].get();
  // the vector path: output columns whose first and last taps lie in [0, W), rows read at whole-element strides
  int64_t lo = 0, hi = 0;
  if (st[3] == (npy_intp)sizeof(T) && st[2] % (npy_intp)sizeof(T) == 0 && g.kh * g.kw <= kMaxPoolTaps) {
    int64_t lo2, hi2;
    valid_range(ow, g.sw, -g.pw, W, &lo, &hi);
    valid_range(ow, g.sw, -g.pw + (g.kw - 1) * g.dw, W, &lo2, &hi2);
    lo = std::max(lo, lo2);
    hi = std::max(lo, std::min(hi, hi2));
  }
  for (int64_t pl = p0; pl < p1; ++pl)
    fn(x + (pl / C) * st[0] + (pl % C) * st[1], st[2], st[3], H, W, g, oh, ow, lo, hi, end, val + pl * oh * ow,
       idx + pl * oh * ow);
}

// max_pool2d_with_indices(x, kernel_size, stride, padding, dilation, ceil_mode) -> (values, int64 indices)
PyObject* py_max_pool2d(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 6 || !is_array(args[0])) return not_implemented();
  PyArrayObject* x = arr(args[0]);
  int kind = float_kind(x);
  int64_t k[2], s[2], p[2], d[2];
  if (kind < 0 || PyArray_NDIM(x) != 4 || !PyArray_ISALIGNED(x) || !int_pair(args[1], k) ||
      !int_pair(args[2], s) || !int_pair(args[3], p) || !int_pair(args[4], d))
    return not_implemented();
  int ceil_mode = PyObject_IsTrue(args[5]);
  if (ceil_mode < 0) return nullptr;
  Window g{k[0], k[1], d[0], d[1], p[0], p[1], s[0], s[1]};
  if (g.kh <= 0 || g.kw <= 0 || g.dh <= 0 || g.dw <= 0 || g.sh <= 0 || g.sw <= 0 || g.ph < 0 || g.pw < 0 ||
      2 * g.ph > g.kh || 2 * g.pw > g.kw)
    return not_implemented();
  const npy_intp* dims = PyArray_DIMS(x);
  int64_t N = dims[0], C = dims[1], H = dims[2], W = dims[3];
  int64_t oh = pool_out_size(H, g.kh, g.sh, g.ph, g.dh, ceil_mode);
  int64_t ow = pool_out_size(W, g.kw, g.sw, g.pw, g.dw, ceil_mode);
  if (oh <= 0 || ow <= 0 || H <= 0 || W <= 0) return not_implemented();
  npy_intp shape[4] = {(npy_intp)N, (npy_intp)C, (npy_intp)oh, (npy_intp)ow};
  PyArrayObject* val = empty(4, shape, PyArray_TYPE(x));
  if (!val) return nullptr;
  PyArrayObject* idx = empty(4, shape, NPY_INT64);
  if (!idx) {
    Py_DECREF(val);
    return nullptr;
  }
  int64_t planes = N * C, work = std::max<int64_t>(1, oh * ow * g.kh * g.kw);
  const char* px = PyArray_BYTES(x);
  const npy_intp* st = PyArray_STRIDES(x);
  // one past the last byte of x (nullptr with a negative stride: then nothing reads past a window)
  const char* end = px + PyArray_ITEMSIZE(x);
  for (int i = 0; i < 4; ++i) {
    if (st[i] < 0) { end = nullptr; break; }
    end += (dims[i] - 1) * st[i];
  }
  char* pv = PyArray_BYTES(val);
  int64_t* pi = reinterpret_cast<int64_t*>(PyArray_BYTES(idx));
  auto body = [&] {
    parallel_for(0, planes, std::max<int64_t>(1, kGrainSize / work), [&](int64_t p0, int64_t p1) {
      if (kind == 0) max_pool_planes<float>(px, end, st, C, H, W, g, oh, ow, reinterpret_cast<float*>(pv), pi, p0, p1);
      else max_pool_planes<double>(px, end, st, C, H, W, g, oh, ow, reinterpret_cast<double*>(pv), pi, p0, p1);
    });
  };
  if (planes * work >= kGrainSizeGIL) {
    Py_BEGIN_ALLOW_THREADS
    body();
    Py_END_ALLOW_THREADS
  } else {
    body();
  }
  return Py_BuildValue("(NN)", val, idx);
}

template <typename T>
bool max_pool_bw_planes(const T* g, const int64_t* idx, int64_t L, int64_t HW, T* out, int64_t p0, int64_t p1) {
  bool ok = true;
  for (int64_t pl = p0; pl < p1; ++pl) {
    T* dst = out + pl * HW;
    std::fill(dst, dst + HW, T(0));
    const T* gp = g + pl * L;
    const int64_t* ip = idx + pl * L;
    for (int64_t t = 0; t < L; ++t) {
      int64_t j = ip[t];
      if (j < 0 || j >= HW) {
        ok = false;
        continue;
      }
      dst[j] += gp[t];
    }
  }
  return ok;
}

// max_pool2d_with_indices_backward(g, idx, input_shape, disjoint): each window's gradient added at its winner
PyObject* py_max_pool2d_backward(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 4 || !is_array(args[0]) || !is_array(args[1])) return not_implemented();
  PyArrayObject* g = arr(args[0]);
  PyArrayObject* ind = arr(args[1]);
  int kind = float_kind(g);
  if (kind < 0 || PyArray_TYPE(ind) != NPY_INT64 || PyArray_NDIM(g) != 4 || PyArray_NDIM(ind) != 4 ||
      !PyArray_SAMESHAPE(g, ind) || !PyTuple_Check(args[2]) || PyTuple_GET_SIZE(args[2]) != 4)
    return not_implemented();
  npy_intp shape[4];
  for (int i = 0; i < 4; ++i) {
    PyObject* v = PyTuple_GET_ITEM(args[2], i);
    if (!PyLong_Check(v)) return not_implemented();
    shape[i] = PyLong_AsSsize_t(v);
    if (shape[i] < 0) {
      PyErr_Clear();
      return not_implemented();
    }
  }
  if (PyArray_DIMS(g)[0] != shape[0] || PyArray_DIMS(g)[1] != shape[1]) return not_implemented();
  PyArrayObject* gc = PyArray_GETCONTIGUOUS(g);
  if (!gc) return nullptr;
  PyArrayObject* ic = PyArray_GETCONTIGUOUS(ind);
  if (!ic) {
    Py_DECREF(gc);
    return nullptr;
  }
  PyArrayObject* out = empty(4, shape, PyArray_TYPE(g));
  if (!out) {
    Py_DECREF(gc);
    Py_DECREF(ic);
    return nullptr;
  }
  int64_t planes = shape[0] * shape[1], HW = shape[2] * shape[3];
  int64_t L = PyArray_DIMS(g)[2] * PyArray_DIMS(g)[3];
  bool ok = true;
  if (planes * HW > 0) {
    const char* pg = PyArray_BYTES(gc);
    const int64_t* pi = reinterpret_cast<const int64_t*>(PyArray_BYTES(ic));
    char* po = PyArray_BYTES(out);
    std::atomic<bool> good{true};
    auto body = [&] {
      parallel_for(0, planes, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, HW + L)),
                   [&](int64_t p0, int64_t p1) {
        bool r = kind == 0 ? max_pool_bw_planes<float>(reinterpret_cast<const float*>(pg), pi, L, HW,
                                                       reinterpret_cast<float*>(po), p0, p1)
                           : max_pool_bw_planes<double>(reinterpret_cast<const double*>(pg), pi, L, HW,
                                                        reinterpret_cast<double*>(po), p0, p1);
        if (!r) good.store(false, std::memory_order_relaxed);
      });
    };
    if (planes * (HW + L) >= kGrainSizeGIL) {
      Py_BEGIN_ALLOW_THREADS
      body();
      Py_END_ALLOW_THREADS
    } else {
      body();
    }
    ok = good.load();
  }
  Py_DECREF(gc);
  Py_DECREF(ic);
  if (!ok) {  // indices that are not from this input's pooling: the NumPy kernel raises its own error
    Py_DECREF(out);
    return not_implemented();
  }
  return reinterpret_cast<PyObject*>(out);
}

}  // namespace

PyMethodDef conv_methods[] = {
    {"im2col", (PyCFunction)(void (*)(void))py_im2col, METH_FASTCALL, "(N, C, H, W) -> (C*kh*kw, N, L)"},
    {"col2im", (PyCFunction)(void (*)(void))py_col2im, METH_FASTCALL, "(C*kh*kw, N, L) -> (N, C, H, W)"},
    {"max_pool2d_with_indices", (PyCFunction)(void (*)(void))py_max_pool2d, METH_FASTCALL,
     "max pooling -> (values, indices)"},
    {"max_pool2d_with_indices_backward", (PyCFunction)(void (*)(void))py_max_pool2d_backward, METH_FASTCALL,
     "the gradient of max pooling"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace tt
