// Python entry points of the native row kernels: softmax / log_softmax along any dim and their gradients, layer
// norm forward and backward, and the NLL loss with its gradient. Each takes the NumPy kernel's arguments
// (positional or by keyword: the dispatcher passes attributes by name) and returns new C-contiguous arrays, or
// NotImplemented for what it does not handle (dtypes other than float32/float64, mismatched operands, an
// out-of-range target), so that the NumPy kernel runs and raises its own errors.
//
// The loops of the first two families live in kernels/rows.inc. The NLL loss is a gather per row (nothing to
// vectorize): its loops are here, after ATen's LossNLL.cpp (an ignored target contributes 0 to the loss and gets
// a zero gradient; 'mean' divides by the summed weights of the counted targets).
#include <algorithm>
#include <cmath>

#include "kit.h"
#include "rows_ops.h"

namespace tt {

Stub<SoftmaxLastDimFn> softmax_lastdim_stub[2];
Stub<SoftmaxInnerFn> softmax_inner_stub[2];
Stub<SoftmaxBackwardLastDimFn> softmax_backward_lastdim_stub[2];
Stub<SoftmaxBackwardInnerFn> softmax_backward_inner_stub[2];
Stub<LayerNormFn> layer_norm_stub[2];
Stub<LayerNormBackwardFn> layer_norm_backward_stub[2];

namespace {

// An array the loops can read as T* (aligned elements in native byte order).
bool behaved(PyObject* o) { return is_array(o) && PyArray_ISALIGNED(arr(o)) && PyArray_ISNOTSWAPPED(arr(o)); }

// the loop index (kit.h) of a behaved array, -1 for anything else
int float_index(PyObject* o) { return behaved(o) ? loop_index(arr(o)) : -1; }

int64_t prod(const npy_intp* d, int b, int e) {
  int64_t p = 1;
  for (int i = b; i < e; ++i) p *= d[i];
  return p;
}

// A C-contiguous array with a's contents (a itself, with a new reference, when it already is one).
PyArrayObject* contiguous(PyObject* a) { return reinterpret_cast<PyArrayObject*>(PyArray_GETCONTIGUOUS(arr(a))); }

// x viewed as (outer, C, inner) around `dim`
struct DimSplit {
  int64_t outer, C, inner;
};

bool split_at(PyArrayObject* x, int64_t dim, DimSplit* s) {
  const int nd = PyArray_NDIM(x);
  const int nd1 = nd == 0 ? 1 : nd;  // a 0-d array is one row of one element along dim 0 / -1
  if (dim < 0) dim += nd1;
  if (dim < 0 || dim >= nd1) return false;
  const npy_intp* d = PyArray_DIMS(x);
  if (nd == 0) {
    *s = {1, 1, 1};
    return true;
  }
  *s = {prod(d, 0, (int)dim), d[dim], prod(d, (int)dim + 1, nd)};
  return true;
}

// The softmax-family loop over every row of a (outer, C, inner) layout: rows are contiguous when inner == 1;
// otherwise blocks of up to kSoftmaxInnerBlock adjacent rows run together along the inner dim.
template <typename LastFn, typename InnerFn>
void run_rows(const DimSplit& s, int64_t itemsize, LastFn last, InnerFn inner_fn) {
  const int64_t C = s.C, inner = s.inner;
  if (inner == 1) {
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(C, 1));
    parallel_for(0, s.outer, grain, [&](int64_t b, int64_t e) { last(b * C * itemsize, e - b); });
    return;
  }
  const int64_t B = kSoftmaxInnerBlock;
  const int64_t nblk = (inner + B - 1) / B;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(C * std::min(B, inner), 1));
  parallel_for(0, s.outer * nblk, grain, [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      const int64_t o = it / nblk, j0 = (it % nblk) * B;
      inner_fn((o * C * inner + j0) * itemsize, std::min(B, inner - j0));
    }
  });
}

PyObject* softmax_impl(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, bool log) {
  static const char* const names[] = {"x", "dim"};
  PyObject* a[1];
  int64_t dim;
  TT_ARGS_KW(names, a[0], dim);
  const int fi = float_index(a[0]);
  DimSplit s;
  if (fi < 0 || !split_at(arr(a[0]), dim, &s)) return not_implemented();
  PyArrayObject* x = arr(a[0]);
  PyArrayObject* y = empty_like_shape(x, PyArray_TYPE(x));
  if (!y) return nullptr;
  const int64_t n = PyArray_SIZE(x);
  if (n == 0) return reinterpret_cast<PyObject*>(y);
  PyArrayObject* xc = contiguous(a[0]);
  if (!xc) {
    Py_DECREF(y);
    return nullptr;
  }
  const char* xp = PyArray_BYTES(xc);
  char* yp = PyArray_BYTES(y);
  const int64_t sz = PyArray_ITEMSIZE(x);
  SoftmaxLastDimFn last = softmax_lastdim_stub[fi].get();
  SoftmaxInnerFn inner = softmax_inner_stub[fi].get();
  run_released(n, [&] {
    run_rows(s, sz, [&](int64_t off, int64_t rows) { last(xp + off, yp + off, rows, s.C, log); },
             [&](int64_t off, int64_t w) { inner(xp + off, yp + off, s.C, s.inner, w, log); });
  });
  Py_DECREF(xc);
  return reinterpret_cast<PyObject*>(y);
}

PyObject* softmax_backward_impl(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, bool log) {
  static const char* const names[] = {"g", "out", "dim"};
  PyObject* a[2];
  int64_t dim;
  TT_ARGS_KW(names, a[0], a[1], dim);
  const int fi = float_index(a[1]);
  DimSplit s;
  if (fi < 0 || float_index(a[0]) != fi || !split_at(arr(a[1]), dim, &s)) return not_implemented();
  PyArrayObject* out = arr(a[1]);
  if (!PyArray_SAMESHAPE(arr(a[0]), out)) return not_implemented();
  PyArrayObject* gx = empty_like_shape(out, PyArray_TYPE(out));
  if (!gx) return nullptr;
  const int64_t n = PyArray_SIZE(out);
  if (n == 0) return reinterpret_cast<PyObject*>(gx);
  PyArrayObject* gc = contiguous(a[0]);
  PyArrayObject* oc = gc ? contiguous(a[1]) : nullptr;
  if (!oc) {
    Py_XDECREF(gc);
    Py_DECREF(gx);
    return nullptr;
  }
  const char* gp = PyArray_BYTES(gc);
  const char* op = PyArray_BYTES(oc);
  char* xp = PyArray_BYTES(gx);
  const int64_t sz = PyArray_ITEMSIZE(out);
  SoftmaxBackwardLastDimFn last = softmax_backward_lastdim_stub[fi].get();
  SoftmaxBackwardInnerFn inner = softmax_backward_inner_stub[fi].get();
  run_released(n, [&] {
    run_rows(s, sz, [&](int64_t off, int64_t rows) { last(gp + off, op + off, xp + off, rows, s.C, log); },
             [&](int64_t off, int64_t w) { inner(gp + off, op + off, xp + off, s.C, s.inner, w, log); });
  });
  Py_DECREF(gc);
  Py_DECREF(oc);
  return reinterpret_cast<PyObject*>(gx);
}

TT_ENTRY(py_softmax) { return softmax_impl(args, nargs, kwnames, false); }
TT_ENTRY(py_log_softmax) { return softmax_impl(args, nargs, kwnames, true); }
TT_ENTRY(py_softmax_backward) { return softmax_backward_impl(args, nargs, kwnames, false); }
TT_ENTRY(py_log_softmax_backward) { return softmax_backward_impl(args, nargs, kwnames, true); }

// Owned references released at scope exit.
struct Refs {
  std::vector<PyObject*> v;
  PyArrayObject* add(PyArrayObject* a) {
    if (a) v.push_back(reinterpret_cast<PyObject*>(a));
    return a;
  }
  ~Refs() {
    for (PyObject* p : v) Py_XDECREF(p);
  }
};

// a weight-like operand: None, or an array of x's dtype with n elements
bool param_ok(PyObject* p, int fi, int64_t n) {
  return p == Py_None || (float_index(p) == fi && PyArray_SIZE(arr(p)) == n);
}

// native_layer_norm(x, w, b, normalized_ndim, eps) -> (out, mean, rstd)
TT_ENTRY(py_layer_norm) {
  static const char* const names[] = {"x", "w", "b", "normalized_ndim", "eps"};
  PyObject* a[3];
  int64_t k;
  double eps;
  TT_ARGS_KW(names, a[0], a[1], a[2], k, eps);
  const int fi = float_index(a[0]);
  if (fi < 0) return not_implemented();
  PyArrayObject* x = arr(a[0]);
  const int nd = PyArray_NDIM(x);
  if (k < 0 || k > nd) return not_implemented();
  const npy_intp* d = PyArray_DIMS(x);
  const int64_t M = prod(d, 0, nd - (int)k), N = prod(d, nd - (int)k, nd);
  if (M == 0 || N == 0 || !param_ok(a[1], fi, N) || !param_ok(a[2], fi, N)) return not_implemented();
  Refs refs;
  const int type = PyArray_TYPE(x);
  PyArrayObject* xc = refs.add(contiguous(a[0]));
  PyArrayObject* wc = a[1] == Py_None ? nullptr : refs.add(contiguous(a[1]));
  PyArrayObject* bc = a[2] == Py_None ? nullptr : refs.add(contiguous(a[2]));
  npy_intp stat[NPY_MAXDIMS];
  for (int i = 0; i < nd; ++i) stat[i] = i < nd - k ? d[i] : 1;
  PyArrayObject* y = refs.add(empty(nd, d, type));
  PyArrayObject* mean = refs.add(empty(nd, stat, type));
  PyArrayObject* rstd = refs.add(empty(nd, stat, type));
  if (!xc || (a[1] != Py_None && !wc) || (a[2] != Py_None && !bc) || !y || !mean || !rstd) return nullptr;
  const int64_t sz = PyArray_ITEMSIZE(x);
  const char* xp = PyArray_BYTES(xc);
  const char* wp = wc ? PyArray_BYTES(wc) : nullptr;
  const char* bp = bc ? PyArray_BYTES(bc) : nullptr;
  char *yp = PyArray_BYTES(y), *mp = PyArray_BYTES(mean), *rp = PyArray_BYTES(rstd);
  LayerNormFn fn = layer_norm_stub[fi].get();
  run_released(M * N, [&] {
    parallel_for(0, M, std::max<int64_t>(1, kGrainSize / N), [&](int64_t b, int64_t e) {
      fn(xp + b * N * sz, wp, bp, yp + b * N * sz, mp + b * sz, rp + b * sz, e - b, N, eps);
    });
  });
  return PyTuple_Pack(3, y, mean, rstd);
}

// native_layer_norm_backward(g, x, mean, rstd, w, normalized_ndim, need) -> (gx, gw, gb); an output not in
// `need` comes back as zeros. gw and gb are sums over rows: each block of rows adds into its own partial sums
// (in double), and the partials are added in block order, so the result does not depend on thread timing.
TT_ENTRY(py_layer_norm_backward) {
  static const char* const names[] = {"g", "x", "mean", "rstd", "w", "normalized_ndim", "need"};
  PyObject* a[5];
  int64_t k;
  PyObject* need_obj;
  TT_ARGS_KW(names, a[0], a[1], a[2], a[3], a[4], k, need_obj);
  const int fi = float_index(a[1]);
  if (fi < 0 || float_index(a[0]) != fi || !PyTuple_Check(need_obj) || PyTuple_GET_SIZE(need_obj) != 3)
    return not_implemented();
  PyArrayObject* x = arr(a[1]);
  const int nd = PyArray_NDIM(x);
  if (k < 0 || k > nd || !PyArray_SAMESHAPE(arr(a[0]), x)) return not_implemented();
  const npy_intp* d = PyArray_DIMS(x);
  const int64_t M = prod(d, 0, nd - (int)k), N = prod(d, nd - (int)k, nd);
  if (M == 0 || N == 0 || !param_ok(a[2], fi, M) || a[2] == Py_None || !param_ok(a[3], fi, M) || a[3] == Py_None ||
      !param_ok(a[4], fi, N))
    return not_implemented();
  bool need[3];
  for (int i = 0; i < 3; ++i) {
    const int t = PyObject_IsTrue(PyTuple_GET_ITEM(need_obj, i));
    if (t < 0) return nullptr;
    need[i] = t != 0;
  }
  Refs refs;
  const int type = PyArray_TYPE(x);
  PyArrayObject* gc = refs.add(contiguous(a[0]));
  PyArrayObject* xc = refs.add(contiguous(a[1]));
  PyArrayObject* mc = refs.add(contiguous(a[2]));
  PyArrayObject* rc = refs.add(contiguous(a[3]));
  PyArrayObject* wc = a[4] == Py_None ? nullptr : refs.add(contiguous(a[4]));
  const npy_intp* wshape = d + (nd - k);
  PyArrayObject* gx = refs.add(need[0] ? empty(nd, d, type)
                                       : reinterpret_cast<PyArrayObject*>(PyArray_ZEROS(nd, d, type, 0)));
  PyArrayObject* gw = refs.add(reinterpret_cast<PyArrayObject*>(PyArray_ZEROS((int)k, wshape, type, 0)));
  PyArrayObject* gb = refs.add(reinterpret_cast<PyArrayObject*>(PyArray_ZEROS((int)k, wshape, type, 0)));
  if (!gc || !xc || !mc || !rc || (a[4] != Py_None && !wc) || !gx || !gw || !gb) return nullptr;
  const int64_t sz = PyArray_ITEMSIZE(x);
  const char *gp = PyArray_BYTES(gc), *xp = PyArray_BYTES(xc), *mp = PyArray_BYTES(mc), *rp = PyArray_BYTES(rc);
  const char* wp = wc ? PyArray_BYTES(wc) : nullptr;
  char* gxp = need[0] ? PyArray_BYTES(gx) : nullptr;
  // blocks of rows: as many as threads, fewer when the work is small
  const int64_t nb = std::max<int64_t>(1, std::min<int64_t>({(int64_t)get_num_threads(), M, M * N / kGrainSize}));
  const int64_t per = (M + nb - 1) / nb;
  std::vector<double> pw(need[1] ? nb * N : 0, 0.0), pb(need[2] ? nb * N : 0, 0.0);
  LayerNormBackwardFn fn = layer_norm_backward_stub[fi].get();
  if (need[0] || need[1] || need[2]) {
    run_released(M * N, [&] {
      parallel_for(0, nb, 1, [&](int64_t b, int64_t e) {
        std::vector<double> scratch((2 * N * sz + sizeof(double) - 1) / sizeof(double));
        for (int64_t blk = b; blk < e; ++blk) {
          const int64_t r0 = blk * per, r1 = std::min(M, r0 + per);
          if (r0 >= r1) continue;
          fn(gp + r0 * N * sz, xp + r0 * N * sz, mp + r0 * sz, rp + r0 * sz, wp, gxp ? gxp + r0 * N * sz : nullptr,
             need[1] ? pw.data() + blk * N : nullptr, need[2] ? pb.data() + blk * N : nullptr, r1 - r0, N, scratch.data());
        }
      });
    });
  }
  for (int which = 0; which < 2; ++which) {
    const std::vector<double>& p = which == 0 ? pw : pb;
    if (p.empty()) continue;
    char* dst = PyArray_BYTES(which == 0 ? gw : gb);
    for (int64_t i = 0; i < N; ++i) {
      double acc = 0;
      for (int64_t blk = 0; blk < nb; ++blk) acc += p[blk * N + i];
      TT_DISPATCH_FLOATING_TYPES(dtype_of(x), "native_layer_norm_backward",
                                 [&] { reinterpret_cast<scalar_t*>(dst)[i] = static_cast<scalar_t>(acc); });
    }
  }
  return PyTuple_Pack(3, gx, gw, gb);
}

enum Reduction { kNone, kMean, kSum, kBadReduction };

Reduction reduction_of(PyObject* o) {
  if (!PyUnicode_Check(o)) return kBadReduction;
  if (PyUnicode_CompareWithASCIIString(o, "none") == 0) return kNone;
  if (PyUnicode_CompareWithASCIIString(o, "mean") == 0) return kMean;
  if (PyUnicode_CompareWithASCIIString(o, "sum") == 0) return kSum;
  return kBadReduction;
}

// A 1-d strided view: element i at base + i * stride.
template <typename T>
struct Strided1d {
  const char* base;
  npy_intp stride;
  T operator[](int64_t i) const { return *reinterpret_cast<const T*>(base + i * stride); }
};

template <typename T>
Strided1d<T> view1d(PyArrayObject* a) {
  return {PyArray_BYTES(a), PyArray_NDIM(a) ? PyArray_STRIDES(a)[0] : 0};
}

// false when a counted target lies outside [0, C)
template <typename T>
bool nll_forward(PyArrayObject* x, Strided1d<int64_t> t, const Strided1d<T>* w, int64_t ignore, Reduction red,
                 T* out) {
  const int64_t n = PyArray_DIMS(x)[0], C = PyArray_DIMS(x)[1];
  const char* xp = PyArray_BYTES(x);
  const npy_intp s0 = PyArray_STRIDES(x)[0], s1 = PyArray_STRIDES(x)[1];
  double total = 0, wsum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = t[i];
    if (c == ignore) {
      if (red == kNone) out[i] = T(0);
      continue;
    }
    if (c < 0 || c >= C) return false;
    const T wv = w ? (*w)[c] : T(1);
    const T loss = -*reinterpret_cast<const T*>(xp + i * s0 + c * s1) * wv;
    if (red == kNone) {
      out[i] = loss;
    } else {
      total += loss;
      wsum += wv;
    }
  }
  if (red == kMean) out[0] = static_cast<T>(total) / static_cast<T>(wsum);  // 0 / 0 = NaN when all are ignored
  if (red == kSum) out[0] = static_cast<T>(total);
  return true;
}

// nll_loss(x, t, w, ignore_index, reduction): x (N, C), t (N,) int64, w None or (C,)
TT_ENTRY(py_nll_loss) {
  static const char* const names[] = {"x", "t", "w", "ignore_index", "reduction"};
  PyObject *a[3], *reduction;
  int64_t ignore;
  TT_ARGS_KW(names, a[0], a[1], a[2], ignore, reduction);
  const int fi = float_index(a[0]);
  const Reduction red = reduction_of(reduction);
  if (fi < 0 || red == kBadReduction || !behaved(a[1])) return not_implemented();
  PyArrayObject* x = arr(a[0]);
  PyArrayObject* t = arr(a[1]);
  if (PyArray_NDIM(x) != 2 || PyArray_NDIM(t) != 1 || dtype_of(t) != DType::i64 ||
      PyArray_DIMS(t)[0] != PyArray_DIMS(x)[0] || PyArray_DIMS(x)[1] == 0)
    return not_implemented();
  const int64_t n = PyArray_DIMS(x)[0], C = PyArray_DIMS(x)[1];
  if (!param_ok(a[2], fi, C) || (a[2] != Py_None && PyArray_NDIM(arr(a[2])) != 1)) return not_implemented();
  const npy_intp nn = n;
  PyArrayObject* out = empty(red == kNone ? 1 : 0, &nn, PyArray_TYPE(x));
  if (!out) return nullptr;
  const bool ok = TT_DISPATCH_FLOATING_TYPES(dtype_of(x), "nll_loss", [&] {
    Strided1d<scalar_t> w;
    if (a[2] != Py_None) w = view1d<scalar_t>(arr(a[2]));
    return nll_forward<scalar_t>(x, view1d<int64_t>(t), a[2] != Py_None ? &w : nullptr, ignore, red,
                                 reinterpret_cast<scalar_t*>(PyArray_BYTES(out)));
  });
  if (!ok) {  // the NumPy kernel raises the IndexError with its message
    Py_DECREF(out);
    return not_implemented();
  }
  return reinterpret_cast<PyObject*>(out);
}

template <typename T>
bool nll_backward(Strided1d<T> g, Strided1d<int64_t> t, const Strided1d<T>* w, int64_t n, int64_t C, int64_t ignore,
                  Reduction red, T* out) {
  T scale = -g[0];
  if (red == kMean) {
    double wsum = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t c = t[i];
      if (c == ignore) continue;
      if (c < 0 || c >= C) return false;
      wsum += w ? static_cast<double>((*w)[c]) : 1.0;
    }
    scale = -(g[0] / static_cast<T>(wsum));
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = t[i];
    if (c == ignore) continue;
    if (c < 0 || c >= C) return false;
    const T gi = red == kNone ? -g[i] : scale;
    out[i * C + c] = w ? (*w)[c] * gi : gi;
  }
  return true;
}

// nll_loss_backward(g, t, w, num_classes, ignore_index, reduction) -> (N, num_classes)
TT_ENTRY(py_nll_loss_backward) {
  static const char* const names[] = {"g", "t", "w", "num_classes", "ignore_index", "reduction"};
  PyObject *a[3], *reduction;
  int64_t C, ignore;
  TT_ARGS_KW(names, a[0], a[1], a[2], C, ignore, reduction);
  const int fi = float_index(a[0]);
  const Reduction red = reduction_of(reduction);
  if (fi < 0 || red == kBadReduction || !behaved(a[1]) || C <= 0)
    return not_implemented();
  PyArrayObject* g = arr(a[0]);
  PyArrayObject* t = arr(a[1]);
  if (PyArray_NDIM(t) != 1 || dtype_of(t) != DType::i64) return not_implemented();
  const int64_t n = PyArray_DIMS(t)[0];
  if (red == kNone ? (PyArray_NDIM(g) != 1 || PyArray_DIMS(g)[0] != n) : PyArray_SIZE(g) != 1)
    return not_implemented();
  if (!param_ok(a[2], fi, C) || (a[2] != Py_None && PyArray_NDIM(arr(a[2])) != 1)) return not_implemented();
  const npy_intp dims[2] = {n, C};
  PyArrayObject* out = reinterpret_cast<PyArrayObject*>(PyArray_ZEROS(2, const_cast<npy_intp*>(dims),
                                                                      PyArray_TYPE(g), 0));
  if (!out) return nullptr;
  if (n == 0) return reinterpret_cast<PyObject*>(out);
  // a one-element g of any shape: its first element (strides of a size-1 array are never followed)
  const bool ok = TT_DISPATCH_FLOATING_TYPES(dtype_of(g), "nll_loss_backward", [&] {
    Strided1d<scalar_t> w;
    if (a[2] != Py_None) w = view1d<scalar_t>(arr(a[2]));
    return nll_backward<scalar_t>(view1d<scalar_t>(g), view1d<int64_t>(t), a[2] != Py_None ? &w : nullptr, n, C,
                                  ignore, red, reinterpret_cast<scalar_t*>(PyArray_BYTES(out)));
  });
  if (!ok) {
    Py_DECREF(out);
    return not_implemented();
  }
  return reinterpret_cast<PyObject*>(out);
}

}  // namespace

PyMethodDef rows_methods[] = {
    TT_METHOD("softmax", py_softmax, "softmax(x, dim)"),
    TT_METHOD("log_softmax", py_log_softmax, "log_softmax(x, dim)"),
    TT_METHOD("softmax_backward", py_softmax_backward, "softmax_backward(g, out, dim)"),
    TT_METHOD("log_softmax_backward", py_log_softmax_backward, "log_softmax_backward(g, out, dim)"),
    TT_METHOD("native_layer_norm", py_layer_norm, "native_layer_norm(x, w, b, normalized_ndim, eps)"),
    TT_METHOD("native_layer_norm_backward", py_layer_norm_backward,
              "native_layer_norm_backward(g, x, mean, rstd, w, normalized_ndim, need)"),
    TT_METHOD("nll_loss", py_nll_loss, "nll_loss(x, t, w, ignore_index, reduction)"),
    TT_METHOD("nll_loss_backward", py_nll_loss_backward,
              "nll_loss_backward(g, t, w, num_classes, ignore_index, reduction)"),
    {nullptr, nullptr, 0, nullptr}};

}  // namespace tt
