// Sliding-window kernels of the cpu backend: 2-D convolution's forward and backward (the op pair convolution /
// convolution_backward, below), im2col / col2im (the (C*kh*kw, N, L) layout of backends/cpu/nn.py, which pooling,
// unfold and the convolution's decomposition use) and max pooling with indices and its backward. Float32/float64;
// for other dtypes im2col, col2im and pooling return NotImplemented and run on NumPy, and nn.functional.conv2d
// sends no other dtype to the convolution op.
//
// Max pooling follows ATen's native/cpu/MaxPoolKernel.cpp: each window is clipped to the input, its argmax starts
// at the first in-bounds element with -inf, and an element replaces the maximum when it is greater or NaN (so the
// first of equal maxima wins and the last NaN of a window wins). Indices are flat h * W + w offsets into the plane.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "blas.h"
#include "common.h"
#include "conv_ops.h"
#include "kit.h"
#include "parallel.h"

namespace tt {

Stub<MaxPoolPlane> max_pool_plane_stub[2];
Stub<ConvShiftedGemm> conv_shifted_gemm_stub[2];
Stub<ConvShiftedGemmWgrad> conv_shifted_gemm_wgrad_stub[2];

namespace {

// A window attribute (kernel size, stride, padding, dilation) as the entries take it: exactly two ints, read
// by the kit as an IntList; anything else is not the call the Python wrapper makes, so the entry declines it.
inline bool pair(const IntList& v) { return v.size() == 2; }

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
TT_ENTRY(py_im2col) {
  PyArrayObject* x;
  IntList k, d, p, s;
  TT_ARGS(x, k, d, p, s);
  if (loop_index(x) < 0 || PyArray_NDIM(x) != 4 || !PyArray_ISALIGNED(x) || !pair(k) || !pair(d) || !pair(p) ||
      !pair(s))
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
  TT_DISPATCH_FLOATING_TYPES(dtype_of(x), "im2col", [&] {
    run_released(rows * L, [&] {
      parallel_for(0, rows, grain, [&](int64_t r0, int64_t r1) {
        im2col_rows<scalar_t>(px, st, N, H, W, g, oh, ow, reinterpret_cast<scalar_t*>(po), r0, r1);
      });
    });
  });
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
TT_ENTRY(py_col2im) {
  PyArrayObject* cols;
  IntList o, k, d, p, s;
  TT_ARGS(cols, o, k, d, p, s);
  if (loop_index(cols) < 0 || PyArray_NDIM(cols) != 3 || !PyArray_ISALIGNED(cols) || !pair(o) || !pair(k) ||
      !pair(d) || !pair(p) || !pair(s))
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
  TT_DISPATCH_FLOATING_TYPES(dtype_of(cols), "col2im", [&] {
    run_released(planes * work, [&] {
      parallel_for(0, planes, std::max<int64_t>(1, kGrainSize / work), [&](int64_t p0, int64_t p1) {
        col2im_planes<scalar_t>(pc, cs, C, H, W, g, oh, ow, reinterpret_cast<scalar_t*>(po), p0, p1);
      });
    });
  });
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
TT_ENTRY(py_max_pool2d) {
  PyArrayObject* x;
  IntList k, s, p, d;
  bool ceil_mode;
  TT_ARGS(x, k, s, p, d, ceil_mode);
  if (loop_index(x) < 0 || PyArray_NDIM(x) != 4 || !PyArray_ISALIGNED(x) || !pair(k) || !pair(s) || !pair(p) ||
      !pair(d))
    return not_implemented();
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
  TT_DISPATCH_FLOATING_TYPES(dtype_of(x), "max_pool2d_with_indices", [&] {
    run_released(planes * work, [&] {
      parallel_for(0, planes, std::max<int64_t>(1, kGrainSize / work), [&](int64_t p0, int64_t p1) {
        max_pool_planes<scalar_t>(px, end, st, C, H, W, g, oh, ow, reinterpret_cast<scalar_t*>(pv), pi, p0, p1);
      });
    });
  });
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
TT_ENTRY(py_max_pool2d_backward) {
  PyArrayObject *g, *ind;
  IntList input_shape;
  PyObject* disjoint;  // the NumPy kernel's hint; every element is summed here in window order either way
  TT_ARGS(g, ind, input_shape, disjoint);
  (void)disjoint;
  if (loop_index(g) < 0 || PyArray_TYPE(ind) != NPY_INT64 || PyArray_NDIM(g) != 4 || PyArray_NDIM(ind) != 4 ||
      !PyArray_SAMESHAPE(g, ind) || input_shape.size() != 4)
    return not_implemented();
  npy_intp shape[4];
  for (int i = 0; i < 4; ++i) {
    if (input_shape[i] < 0) return not_implemented();
    shape[i] = (npy_intp)input_shape[i];
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
    TT_DISPATCH_FLOATING_TYPES(dtype_of(g), "max_pool2d_with_indices_backward", [&] {
      run_released(planes * (HW + L), [&] {
        parallel_for(0, planes, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, HW + L)),
                     [&](int64_t p0, int64_t p1) {
          if (!max_pool_bw_planes<scalar_t>(reinterpret_cast<const scalar_t*>(pg), pi, L, HW,
                                            reinterpret_cast<scalar_t*>(po), p0, p1))
            good.store(false, std::memory_order_relaxed);
        });
      });
    });
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

// ---- 2-D convolution, forward and backward, with the GEMM fused into cache-sized im2col tiles -------------------
//
// The op pair convolution / convolution_backward of tinytorch/_ops/nn.py for (N, C, H, W) inputs and
// (C_out, C/groups, kh, kw) weights, any stride, padding, dilation and groups. Instead of one im2col of the whole
// batch (C*kh*kw x N*L elements, megabytes that go out to memory and come back for the GEMM), each image's group
// is unfolded a tile of output positions at a time into a thread-local buffer of about kConvTileElems elements
// (so the tile is still in L2 when the GEMM reads it) and multiplied at once by the group's weights, whose
// contiguous (C_out/groups, C/groups*kh*kw) rows are the packed GEMM operand as they are. Tiles run on the pool,
// each GEMM a single-threaded BLAS call (blas.h); without a BLAS a plain loop.
//
// Backward: each (image, group) item unfolds x tile by tile again for the weight gradient (dW += dY_tile cols^T,
// accumulated per partition of the items and summed in partition order, so the result does not depend on which
// thread ran what), and folds W^T dY_tile back into the input gradient (col2im into the item's own planes: no two
// threads write the same element). The bias gradient is a sum of dY over (N, oh, ow), per partition likewise.
constexpr int64_t kConvTileElems = 32768;  // elements of one unfolded tile: 128 KiB in float32
constexpr int64_t kWgradBatch = 4;  // images whose weight-gradient sums the shifted-row kernel takes together

template <typename T>
void conv_mm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
             T beta, T* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k > 0 && blas_available()) {
    gemm(ta, tb, m, n, k, T(1), a, lda, b, ldb, beta, c, ldc);
    return;
  }
  for (int64_t i = 0; i < m; ++i) {
    T* ci = c + i * ldc;
    if (beta == T(0)) std::fill(ci, ci + n, T(0));
    for (int64_t p = 0; p < k; ++p) {
      const T av = ta ? a[p * lda + i] : a[i * lda + p];
      if (tb)
        for (int64_t j = 0; j < n; ++j) ci[j] += av * b[j * ldb + p];
      else
        for (int64_t j = 0; j < n; ++j) ci[j] += av * b[p * ldb + j];
    }
  }
}

// The row k = (c, i, j) of one image's unfolded tile, output positions [l0, l1) (oh x ow raster order): calls
// seg(oy-row base of the tile row, a, b, iy, lo, hi) per output row, where [a, b) are the row's output columns in
// the tile and [lo, hi) the columns whose input column lies in [0, W).
template <typename F>
inline void tile_rows(const Window& g, int64_t H, int64_t W, int64_t ow, int64_t i, int64_t j, int64_t l0,
                      int64_t l1, F&& seg) {
  int64_t xoff = j * g.dw - g.pw, lo, hi;
  valid_range(ow, g.sw, xoff, W, &lo, &hi);
  for (int64_t l = l0; l < l1;) {
    const int64_t oy = l / ow, a = l - oy * ow, b = std::min(ow, a + (l1 - l));
    const int64_t iy = oy * g.sh - g.ph + i * g.dh;
    const int64_t cl = std::min(std::max(lo, a), b), ch = std::min(std::max(hi, cl), b);
    seg(l - l0 - a, a, b, iy >= 0 && iy < H ? iy : -1, cl, ch, xoff);
    l += b - a;
  }
}

// buf (C*kh*kw, l1 - l0) = the unfolded positions [l0, l1) of x (C contiguous H x W planes)
template <typename T>
TT_NO_MEMCPY_IDIOM void unfold_tile(const T* x, int64_t C, int64_t H, int64_t W, const Window& g, int64_t ow,
                                    int64_t l0, int64_t l1, T* buf) {
  const int64_t Lt = l1 - l0;
  for (int64_t c = 0; c < C; ++c) {
    const T* plane = x + c * H * W;
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        T* row = buf + ((c * g.kh + i) * g.kw + j) * Lt;
        tile_rows(g, H, W, ow, i, j, l0, l1, [&](int64_t base, int64_t a, int64_t b, int64_t iy, int64_t cl,
                                                 int64_t ch, int64_t xoff) {
          T* d = row + base;
          if (iy < 0) {
            for (int64_t ox = a; ox < b; ++ox) d[ox] = T(0);
            return;
          }
          const T* s = plane + iy * W + xoff;
          for (int64_t ox = a; ox < cl; ++ox) d[ox] = T(0);
          if (g.sw == 1)
            for (int64_t ox = cl; ox < ch; ++ox) d[ox] = s[ox];
          else
            for (int64_t ox = cl; ox < ch; ++ox) d[ox] = s[ox * g.sw];
          for (int64_t ox = ch; ox < b; ++ox) d[ox] = T(0);
        });
      }
  }
}

// x (C contiguous H x W planes) += the fold of buf (C*kh*kw, l1 - l0): the adjoint of unfold_tile
template <typename T>
void fold_tile_add(const T* buf, int64_t C, int64_t H, int64_t W, const Window& g, int64_t ow, int64_t l0,
                   int64_t l1, T* x) {
  const int64_t Lt = l1 - l0;
  for (int64_t c = 0; c < C; ++c) {
    T* plane = x + c * H * W;
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        const T* row = buf + ((c * g.kh + i) * g.kw + j) * Lt;
        tile_rows(g, H, W, ow, i, j, l0, l1, [&](int64_t base, int64_t, int64_t, int64_t iy, int64_t cl,
                                                 int64_t ch, int64_t xoff) {
          if (iy < 0) return;
          const T* s = row + base;
          T* d = plane + iy * W + xoff;
          if (g.sw == 1)
            for (int64_t ox = cl; ox < ch; ++ox) d[ox] += s[ox];
          else
            for (int64_t ox = cl; ox < ch; ++ox) d[ox * g.sw] += s[ox];
        });
      }
  }
}

// ---- the stride-1 path: products over shifted rows of a zero-padded image (kernels/conv.inc) ------------------
// With the padded image flattened, rows Wp elements apart, output position (oy, ox) read as p = oy * Wp + ox
// ("wide": Wp columns a row, of which the last Wp - ow are not outputs and are dropped) has tap (c, i, j) at
// src[c * CS + i * dh * Wp + j * dw + p]: every tap row is a shifted slice of the image, so the GEMM reads the
// image itself (a few KiB per image, in L1/L2) instead of an unfolded copy kh * kw times its size.
// Neighbouring rows share their padding: a row is pw zeros then its w values, and the zeros right of it are the
// next row's left padding (and pw more after the last row), so Wp = w + pw and fewer dropped columns are
// computed. That needs ow <= Wp, i.e. pw <= dw * (kw - 1); a wider padding gets Wp = w + 2 pw, each row its own.
template <typename T>
struct WideImage {
  int64_t C, Hp, Wp, CS, oh, ow, P, Pw, ph, pw;
  std::vector<int64_t> off;  // per tap (c, i, j)
  int64_t src_len;           // elements of the padded image plus the slack the last blocks read past it

  WideImage(int64_t C_, int64_t h, int64_t w, int64_t ph_, int64_t pw_, int64_t kh, int64_t kw, int64_t dh,
            int64_t dw)
      : C(C_), Hp(h + 2 * ph_), ph(ph_), pw(pw_) {
    const bool shared = pw <= dw * (kw - 1);
    Wp = w + (shared ? pw : 2 * pw);
    CS = Hp * Wp + (shared ? pw : 0);
    oh = Hp - dh * (kh - 1), ow = w + 2 * pw - dw * (kw - 1);
    const int64_t nb = conv_block_cols(sizeof(T));
    P = oh * Wp, Pw = (P + nb - 1) / nb * nb;
    off.resize(C * kh * kw);
    for (int64_t c = 0, k = 0; c < C; ++c)
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j) off[k++] = c * CS + i * dh * Wp + j * dw;
    src_len = std::max(C * CS, (off.empty() ? 0 : off.back()) + Pw);
  }

  // buf = img (C planes of h x w, contiguous) laid out as above: zeros around and between the rows, a zero tail
  void pad(const T* img, int64_t h, int64_t w, std::vector<T>& buf) const {
    buf.assign(src_len, T(0));
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < h; ++y)
        std::copy(img + (c * h + y) * w, img + (c * h + y + 1) * w, buf.data() + c * CS + (y + ph) * Wp + pw);
  }
};

// Weights (M, K) row-major as the K x kConvMR panels conv_shifted_gemm reads (rows past M zero); `flip` takes
// w (Mo, M, kh, kw) of a group instead and packs w'[m, (co, i, j)] = w[co, m, kh-1-i, kw-1-j], the weights of the
// input gradient's convolution.
template <typename T>
void pack_panels(const T* w, int64_t M, int64_t K, T* out) {
  const int64_t MR = kConvMR;
  std::fill(out, out + (M + MR - 1) / MR * MR * K, T(0));
  for (int64_t r = 0; r < M; ++r)
    for (int64_t k = 0; k < K; ++k) out[(r / MR) * K * MR + k * MR + r % MR] = w[r * K + k];
}

template <typename T>
void pack_flipped(const T* w, int64_t Mo, int64_t M, int64_t kh, int64_t kw, T* out) {
  const int64_t K = Mo * kh * kw;
  std::vector<T> tmp(M * K);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t co = 0; co < Mo; ++co)
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j)
          tmp[m * K + (co * kh + i) * kw + j] = w[((co * M + m) * kh + (kh - 1 - i)) * kw + (kw - 1 - j)];
  pack_panels(tmp.data(), M, K, out);
}

int64_t panel_size(int64_t M, int64_t K) { return (M + kConvMR - 1) / kConvMR * kConvMR * K; }

// out (M planes of oh x ow) = the convolution of the padded image in `src` (WideImage geometry) with the packed
// weights, plus bias[m] when given; computed a chunk of wide positions at a time into `scratch`. With nparts > 1
// only the chunks c with c % nparts == part (the image split between threads: their outputs are disjoint).
template <typename T>
void wide_conv(const WideImage<T>& im, const T* src, const T* packed, int64_t M, const T* bias, T* out,
               std::vector<T>& scratch, int64_t part = 0, int64_t nparts = 1) {
  const int64_t nb = conv_block_cols(sizeof(T));
  int64_t chunk = std::min(im.Pw, std::max<int64_t>(nb, (kConvTileElems / std::max<int64_t>(M, 1)) / nb * nb));
  if (nparts > 1) chunk = std::min(chunk, ((im.Pw + nparts - 1) / nparts + nb - 1) / nb * nb);
  scratch.resize(M * chunk);
  auto fn = conv_shifted_gemm_stub[sizeof(T) == 4 ? 0 : 1].get();
  const int64_t K = (int64_t)im.off.size(), L = im.oh * im.ow;
  for (int64_t p0 = part * chunk; p0 < im.Pw; p0 += nparts * chunk) {
    const int64_t len = std::min(chunk, im.Pw - p0);
    fn(packed, M, K, src + p0, im.off.data(), len, scratch.data(), chunk);
    // the chunk's output rows: oy from p0 / Wp while its row starts before the chunk's end
    for (int64_t oy = p0 / im.Wp; oy < im.oh && oy * im.Wp < p0 + len; ++oy) {
      const int64_t a = std::max(p0, oy * im.Wp), b = std::min(p0 + len, oy * im.Wp + im.ow);
      if (a >= b) continue;
      const int64_t ox0 = a - oy * im.Wp;
      for (int64_t m = 0; m < M; ++m) {
        const T* s = scratch.data() + m * chunk + (a - p0);
        T* d = out + m * L + oy * im.ow + ox0;
        const T add = bias ? bias[m] : T(0);
        for (int64_t e = 0; e < b - a; ++e) d[e] = s[e] + add;
      }
    }
  }
}

struct ConvGeom {
  int64_t N, C, H, W, Cout, G, Cg, Mg, K, oh, ow, L, Lt, ntiles;
  Window win;
};

int64_t conv_tile(int64_t K, int64_t L) {
  // a tile of at least 64 positions (or the whole image) keeps the GEMM's N dimension worth a call
  return std::max<int64_t>(1, std::min(L, std::max<int64_t>(std::min<int64_t>(L, 64), kConvTileElems / K)));
}

template <typename T>
void conv_forward(const ConvGeom& q, const T* x, const T* w, const T* bias, T* out) {
  const Window& g = q.win;
  if (g.sh == 1 && g.sw == 1) {
    const int64_t psz = panel_size(q.Mg, q.K);
    std::vector<T> packed(q.G * psz);
    for (int64_t gi = 0; gi < q.G; ++gi) pack_panels(w + gi * q.Mg * q.K, q.Mg, q.K, packed.data() + gi * psz);
    const WideImage<T> im(q.Cg, q.H, q.W, g.ph, g.pw, g.kh, g.kw, g.dh, g.dw);
    // fewer images than threads (batch 1): each image's chunks split between the threads
    const int64_t nt = in_parallel_region() ? 1 : get_num_threads();
    const int64_t splits = q.N * q.G < nt && q.Mg * q.K * im.Pw >= kGrainSize ? nt : 1;
    const int64_t work = std::max<int64_t>(1, q.Mg * q.K * im.Pw / splits);
    parallel_for(0, q.N * q.G * splits, std::max<int64_t>(1, kGrainSize / work), [&](int64_t t0, int64_t t1) {
      std::vector<T> xp, scratch;
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t part = t % splits, gi = (t / splits) % q.G, n = t / splits / q.G;
        im.pad(x + (n * q.C + gi * q.Cg) * q.H * q.W, q.H, q.W, xp);
        wide_conv(im, xp.data(), packed.data() + gi * psz, q.Mg, bias ? bias + gi * q.Mg : nullptr,
                  out + (n * q.Cout + gi * q.Mg) * q.L, scratch, part, splits);
      }
    });
    return;
  }
  const int64_t items = q.N * q.G * q.ntiles;
  const int64_t work = std::max<int64_t>(1, q.Mg * q.K * q.Lt);
  parallel_for(0, items, std::max<int64_t>(1, kGrainSize / work), [&](int64_t t0, int64_t t1) {
    std::vector<T> buf(q.K * q.Lt);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t tile = t % q.ntiles, ng = t / q.ntiles, gi = ng % q.G, n = ng / q.G;
      const int64_t l0 = tile * q.Lt, l1 = std::min(q.L, l0 + q.Lt);
      unfold_tile(x + (n * q.C + gi * q.Cg) * q.H * q.W, q.Cg, q.H, q.W, q.win, q.ow, l0, l1, buf.data());
      T* o = out + (n * q.Cout + gi * q.Mg) * q.L + l0;
      if (bias)
        for (int64_t m = 0; m < q.Mg; ++m) std::fill(o + m * q.L, o + m * q.L + (l1 - l0), bias[gi * q.Mg + m]);
      conv_mm<T>(false, false, q.Mg, l1 - l0, q.K, w + gi * q.Mg * q.K, q.K, buf.data(), l1 - l0,
                 bias ? T(1) : T(0), o, q.L);
    }
  });
}

template <typename T>
void conv_backward(const ConvGeom& q, const T* gy, const T* x, const T* w, T* gx, T* gw, T* gb) {
  const int64_t items = q.N * q.G;
  const int64_t wsize = q.Cout * q.K;
  int64_t P = std::min<int64_t>(items, get_num_threads() * (wsize <= (1 << 20) ? 4 : 1));
  if (in_parallel_region() || items * q.Mg * q.K * q.L < kGrainSize) P = 1;
  P = std::max<int64_t>(P, 1);
  // partition 0 accumulates straight into gw / gb; the others into their own zeroed partials
  std::vector<T> wpart(gw && P > 1 ? (P - 1) * wsize : 0, T(0)), bpart(gb && P > 1 ? (P - 1) * q.Cout : 0, T(0));
  if (gw) std::fill(gw, gw + wsize, T(0));
  if (gb) std::fill(gb, gb + q.Cout, T(0));
  const Window& win = q.win;
  const bool unit = win.sh == 1 && win.sw == 1;
  const bool wide_w = gw && unit;
  // the input gradient's convolution pads dY by d * (k - 1) - p: a stride-1 path while that is not negative
  const bool wide_x = gx && unit && win.ph <= win.dh * (win.kh - 1) && win.pw <= win.dw * (win.kw - 1);
  std::unique_ptr<WideImage<T>> imx, imy;
  if (wide_w) imx.reset(new WideImage<T>(q.Cg, q.H, q.W, win.ph, win.pw, win.kh, win.kw, win.dh, win.dw));
  const int64_t fsz = panel_size(q.Cg, q.Mg * win.kh * win.kw);
  std::vector<T> flipped(wide_x ? q.G * fsz : 0);
  if (wide_x) {
    imy.reset(new WideImage<T>(q.Mg, q.oh, q.ow, win.dh * (win.kh - 1) - win.ph, win.dw * (win.kw - 1) - win.pw,
                               win.kh, win.kw, win.dh, win.dw));
    for (int64_t g = 0; g < q.G; ++g)
      pack_flipped(w + g * q.Mg * q.K, q.Mg, q.Cg, win.kh, win.kw, flipped.data() + g * fsz);
  }
  auto wgrad = conv_shifted_gemm_wgrad_stub[sizeof(T) == 4 ? 0 : 1].get();
  const int64_t nt = in_parallel_region() ? 1 : get_num_threads();
  if (q.N == 1 && q.G < nt && (!gw || wide_w) && (!gx || wide_x) && q.Mg * q.K * q.L >= kGrainSize) {
    // one image (batch 1), fewer groups than threads: each group's work split between the threads, the rows of
    // dW and dB in whole register blocks and the input gradient's chunks, so no two threads write one element
    // (with more images two would add into the same dW rows)
    const int64_t splits = nt, blocks = (q.Mg + kConvMR - 1) / kConvMR;
    parallel_for(0, q.G * splits, 1, [&](int64_t t0, int64_t t1) {
      std::vector<T> xp, yp, dyw, scratch;
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t part = t % splits, g = t / splits;
        const T* dy = gy + g * q.Mg * q.L;
        const int64_t xoff = g * q.Cg * q.H * q.W;
        const int64_t m0 = std::min(q.Mg, blocks * part / splits * kConvMR);
        const int64_t m1 = std::min(q.Mg, blocks * (part + 1) / splits * kConvMR);
        if (gb)
          for (int64_t m = m0; m < m1; ++m) {
            T acc = T(0);
            for (int64_t l = 0; l < q.L; ++l) acc += dy[m * q.L + l];
            gb[g * q.Mg + m] = acc;
          }
        if (gw && m1 > m0) {
          imx->pad(x + xoff, q.H, q.W, xp);
          dyw.assign((m1 - m0) * imx->Pw, T(0));
          for (int64_t m = m0; m < m1; ++m)
            for (int64_t oy = 0; oy < q.oh; ++oy)
              std::copy(dy + m * q.L + oy * q.ow, dy + m * q.L + (oy + 1) * q.ow,
                        dyw.data() + (m - m0) * imx->Pw + oy * imx->Wp);
          const void* dys[1] = {dyw.data()};
          const void* srcs[1] = {xp.data()};
          const int64_t vl = 32 / sizeof(T), Pv = (imx->P + vl - 1) / vl * vl;
          wgrad(dys, srcs, 1, imx->Pw, m1 - m0, imx->off.data(), q.K, Pv, gw + (g * q.Mg + m0) * q.K, q.K);
        }
        if (gx) {
          imy->pad(dy, q.oh, q.ow, yp);
          wide_conv(*imy, yp.data(), flipped.data() + g * fsz, q.Cg, (const T*)nullptr, gx + xoff, scratch, part,
                    splits);
        }
      }
    });
    return;
  }
  if (gx && !wide_x) std::fill(gx, gx + q.N * q.C * q.H * q.W, T(0));
  parallel_for(0, P, 1, [&](int64_t p0, int64_t p1) {
    std::vector<T> cols(gw && !wide_w ? q.K * q.Lt : 0), dcols(gx && !wide_x ? q.K * q.Lt : 0);
    std::vector<T> yp, scratch;
    // the weight gradient's images, kWgradBatch at a time (of one group)
    std::vector<T> xps[kWgradBatch], dyws[kWgradBatch];
    int64_t nbatch = 0, batch_g = 0;
    auto flush = [&](T* pw) {
      const void *dys[kWgradBatch], *srcs[kWgradBatch];
      for (int64_t i = 0; i < nbatch; ++i) dys[i] = dyws[i].data(), srcs[i] = xps[i].data();
      // the sums need P only to a whole vector (the blocks of the forward kernel are 3 vectors wide)
      const int64_t vl = 32 / sizeof(T), Pv = (imx->P + vl - 1) / vl * vl;
      wgrad(dys, srcs, nbatch, imx->Pw, q.Mg, imx->off.data(), q.K, Pv, pw + batch_g * q.Mg * q.K, q.K);
      nbatch = 0;
    };
    for (int64_t p = p0; p < p1; ++p) {
      T* pw = gw ? (p == 0 ? gw : wpart.data() + (p - 1) * wsize) : nullptr;
      T* pb = gb ? (p == 0 ? gb : bpart.data() + (p - 1) * q.Cout) : nullptr;
      for (int64_t it = p * items / P; it < (p + 1) * items / P; ++it) {
        const int64_t g = it % q.G, n = it / q.G;
        const T* dy = gy + (n * q.Cout + g * q.Mg) * q.L;
        const int64_t xoff = (n * q.C + g * q.Cg) * q.H * q.W;
        if (pb)
          for (int64_t m = 0; m < q.Mg; ++m) {
            T s = T(0);
            for (int64_t l = 0; l < q.L; ++l) s += dy[m * q.L + l];
            pb[g * q.Mg + m] += s;
          }
        if (pw && wide_w) {  // dY laid out wide (zeros in the dropped columns) against the padded image's taps
          if (nbatch && batch_g != g) flush(pw);
          batch_g = g;
          imx->pad(x + xoff, q.H, q.W, xps[nbatch]);
          std::vector<T>& dyw = dyws[nbatch];
          dyw.assign(q.Mg * imx->Pw, T(0));
          for (int64_t m = 0; m < q.Mg; ++m)
            for (int64_t oy = 0; oy < q.oh; ++oy)
              std::copy(dy + m * q.L + oy * q.ow, dy + m * q.L + (oy + 1) * q.ow,
                        dyw.data() + m * imx->Pw + oy * imx->Wp);
          if (++nbatch == kWgradBatch) flush(pw);
        }
        if (gx && wide_x) {  // the stride-1 convolution of dY, padded, with the flipped, transposed weights
          imy->pad(dy, q.oh, q.ow, yp);
          wide_conv(*imy, yp.data(), flipped.data() + g * fsz, q.Cg, (const T*)nullptr, gx + xoff, scratch);
        }
        for (int64_t l0 = 0; l0 < q.L; l0 += q.Lt) {
          const int64_t l1 = std::min(q.L, l0 + q.Lt), Lt = l1 - l0;
          if (pw && !wide_w) {
            unfold_tile(x + xoff, q.Cg, q.H, q.W, q.win, q.ow, l0, l1, cols.data());
            conv_mm<T>(false, true, q.Mg, q.K, Lt, dy + l0, q.L, cols.data(), Lt, T(1), pw + g * q.Mg * q.K, q.K);
          }
          if (gx && !wide_x) {
            conv_mm<T>(true, false, q.K, Lt, q.Mg, w + g * q.Mg * q.K, q.K, dy + l0, q.L, T(0), dcols.data(), Lt);
            fold_tile_add(dcols.data(), q.Cg, q.H, q.W, q.win, q.ow, l0, l1, gx + xoff);
          }
        }
      }
      if (nbatch) flush(pw);
    }
  });
  for (int64_t p = 1; p < P; ++p) {
    if (gw) {
      const T* s = wpart.data() + (p - 1) * wsize;
      for (int64_t e = 0; e < wsize; ++e) gw[e] += s[e];
    }
    if (gb) {
      const T* s = bpart.data() + (p - 1) * q.Cout;
      for (int64_t e = 0; e < q.Cout; ++e) gb[e] += s[e];
    }
  }
}

// A C-contiguous, aligned copy of `a` (or `a` itself), as a new reference; nullptr with TypeError set when `a` is
// not an ndim-dim array of dtype `dt`. The op's wrapper always passes arrays of one float dtype: a mismatch is a
// caller's bug, reported rather than declined (there is no NumPy kernel of the op to decline to).
PyArrayObject* conv_operand(PyArrayObject* a, DType dt, int ndim, const char* what) {
  if (dtype_of(a) != dt || PyArray_NDIM(a) != ndim) {
    PyErr_Format(PyExc_TypeError, "conv2d kernel: %s must be a %d-d array of the input's dtype (float32/float64)",
                 what, ndim);
    return nullptr;
  }
  return reinterpret_cast<PyArrayObject*>(PyArray_FROMANY(reinterpret_cast<PyObject*>(a), PyArray_TYPE(a), ndim,
                                                          ndim, NPY_ARRAY_CARRAY_RO));
}

// The input's dtype when it has a loop here; TypeError otherwise.
bool conv_dtype(PyArrayObject* x, DType* dt) {
  if (loop_index(x) < 0) {
    PyErr_SetString(PyExc_TypeError, "conv2d kernel: float32 or float64 arrays only");
    return false;
  }
  *dt = dtype_of(x);
  return true;
}

// The geometry of x (N, C, H, W) * w (C_out, C/groups, kh, kw) with stride, padding and dilation (int pairs) and
// groups; false with ValueError set when they do not fit together.
bool conv_geometry(PyArrayObject* x, PyArrayObject* w, const IntList& s, const IntList& p, const IntList& d,
                   int64_t groups, ConvGeom* q) {
  if (!pair(s) || !pair(p) || !pair(d)) {
    PyErr_SetString(PyExc_ValueError, "conv2d kernel: stride, padding and dilation must be pairs");
    return false;
  }
  q->G = groups;
  const npy_intp *dx = PyArray_DIMS(x), *dw = PyArray_DIMS(w);
  q->N = dx[0], q->C = dx[1], q->H = dx[2], q->W = dx[3];
  q->Cout = dw[0], q->Cg = dw[1];
  q->win = Window{dw[2], dw[3], d[0], d[1], p[0], p[1], s[0], s[1]};
  const Window& g = q->win;
  const int64_t spanh = q->H + 2 * g.ph - g.dh * (g.kh - 1) - 1, spanw = q->W + 2 * g.pw - g.dw * (g.kw - 1) - 1;
  if (q->G <= 0 || g.kh <= 0 || g.kw <= 0 || g.dh <= 0 || g.dw <= 0 || g.sh <= 0 || g.sw <= 0 || g.ph < 0 ||
      g.pw < 0 || q->Cg * q->G != q->C || q->Cout % q->G != 0 || q->Cout <= 0 || spanh < 0 || spanw < 0) {
    PyErr_SetString(PyExc_ValueError, "conv2d kernel: inconsistent input, weight, stride, padding, dilation or groups");
    return false;
  }
  q->oh = spanh / g.sh + 1, q->ow = spanw / g.sw + 1, q->L = q->oh * q->ow;
  q->Mg = q->Cout / q->G, q->K = q->Cg * g.kh * g.kw;
  q->Lt = conv_tile(q->K, q->L);
  q->ntiles = q->L == 0 ? 0 : (q->L + q->Lt - 1) / q->Lt;
  return true;
}

// conv2d_forward(x, weight, bias or None, stride, padding, dilation, groups) -> (N, C_out, oh, ow)
TT_ENTRY(py_conv2d_forward) {
  PyArrayObject *x0, *w0;
  Opt<PyArrayObject*> b0;
  IntList s, p, d;
  int64_t groups;
  TT_ARGS(x0, w0, b0, s, p, d, groups);
  DType dt;
  if (!conv_dtype(x0, &dt)) return nullptr;
  Ref x(conv_operand(x0, dt, 4, "x"));
  if (!x.p) return nullptr;
  Ref w(conv_operand(w0, dt, 4, "weight"));
  if (!w.p) return nullptr;
  ConvGeom q;
  if (!conv_geometry(x.p, w.p, s, p, d, groups, &q)) return nullptr;
  Ref b;
  if (b0.has) {
    if (!(b.p = conv_operand(b0.v, dt, 1, "bias"))) return nullptr;
    if (PyArray_DIMS(b.p)[0] != q.Cout) {
      PyErr_SetString(PyExc_ValueError, "conv2d kernel: the bias must have C_out elements");
      return nullptr;
    }
  }
  npy_intp shape[4] = {(npy_intp)q.N, (npy_intp)q.Cout, (npy_intp)q.oh, (npy_intp)q.ow};
  PyArrayObject* out = empty(4, shape, PyArray_TYPE(x.p));
  if (!out || q.N * q.L == 0) return reinterpret_cast<PyObject*>(out);
  TT_DISPATCH_FLOATING_TYPES(dt, "conv2d_forward", [&] {
    using T = scalar_t;
    run_released(q.N * q.Cout * q.L * q.K, [&] {
      conv_forward<T>(q, (const T*)PyArray_DATA(x.p), (const T*)PyArray_DATA(w.p),
                      b.p ? (const T*)PyArray_DATA(b.p) : nullptr, (T*)PyArray_DATA(out));
    });
  });
  return reinterpret_cast<PyObject*>(out);
}

// conv2d_backward(grad_out, x, weight, stride, padding, dilation, groups, need_input, need_weight, need_bias)
//   -> a tuple of the gradients asked for, in that order: input (N, C, H, W), weight, bias (C_out,)
TT_ENTRY(py_conv2d_backward) {
  PyArrayObject *g0, *x0, *w0;
  IntList s, p, d;
  int64_t groups;
  bool need[3];
  TT_ARGS(g0, x0, w0, s, p, d, groups, need[0], need[1], need[2]);
  DType dt;
  if (!conv_dtype(x0, &dt)) return nullptr;
  Ref gy(conv_operand(g0, dt, 4, "grad_out"));
  if (!gy.p) return nullptr;
  Ref x(conv_operand(x0, dt, 4, "x"));
  if (!x.p) return nullptr;
  Ref w(conv_operand(w0, dt, 4, "weight"));
  if (!w.p) return nullptr;
  ConvGeom q;
  if (!conv_geometry(x.p, w.p, s, p, d, groups, &q)) return nullptr;
  const npy_intp* dg = PyArray_DIMS(gy.p);
  if (dg[0] != q.N || dg[1] != q.Cout || dg[2] != q.oh || dg[3] != q.ow) {
    PyErr_SetString(PyExc_ValueError, "conv2d_backward: grad_out does not have the output's shape");
    return nullptr;
  }
  const npy_intp* dw = PyArray_DIMS(w.p);
  const npy_intp shapes[3][4] = {{(npy_intp)q.N, (npy_intp)q.C, (npy_intp)q.H, (npy_intp)q.W},
                                 {dw[0], dw[1], dw[2], dw[3]},
                                 {(npy_intp)q.Cout, 0, 0, 0}};
  const int ndims[3] = {4, 4, 1};
  Ref res[3];
  int count = 0;
  for (int i = 0; i < 3; ++i) {
    if (!need[i]) continue;
    if (!(res[i].p = empty(ndims[i], shapes[i], PyArray_TYPE(x.p)))) return nullptr;
    ++count;
  }
  TT_DISPATCH_FLOATING_TYPES(dt, "conv2d_backward", [&] {
    using T = scalar_t;
    auto data = [&](int i) { return res[i].p ? (T*)PyArray_DATA(res[i].p) : nullptr; };
    run_released(q.N * q.Cout * std::max<int64_t>(q.L, 1) * q.K, [&] {
      conv_backward<T>(q, (const T*)PyArray_DATA(gy.p), (const T*)PyArray_DATA(x.p), (const T*)PyArray_DATA(w.p),
                       data(0), data(1), data(2));
    });
  });
  PyObject* tup = PyTuple_New(count);
  if (!tup) return nullptr;
  for (int i = 0, k = 0; i < 3; ++i)
    if (res[i].p) PyTuple_SET_ITEM(tup, k++, res[i].release());
  return tup;
}

}  // namespace

PyMethodDef conv_methods[] = {
    TT_METHOD("conv2d_forward", py_conv2d_forward,
              "conv2d_forward(x, weight, bias, stride, padding, dilation, groups): (N, C_out, oh, ow)"),
    TT_METHOD("conv2d_backward", py_conv2d_backward,
              "conv2d_backward(grad_out, x, weight, stride, padding, dilation, groups, need_input, need_weight, "
              "need_bias)"),
    TT_METHOD("im2col", py_im2col, "(N, C, H, W) -> (C*kh*kw, N, L)"),
    TT_METHOD("col2im", py_col2im, "(C*kh*kw, N, L) -> (N, C, H, W)"),
    TT_METHOD("max_pool2d_with_indices", py_max_pool2d, "max pooling -> (values, indices)"),
    TT_METHOD("max_pool2d_with_indices_backward", py_max_pool2d_backward, "the gradient of max pooling"),
    {nullptr, nullptr, 0, nullptr}};

}  // namespace tt
