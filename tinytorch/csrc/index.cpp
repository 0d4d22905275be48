// Python entry points of the native indexing kernels: index_select (and advanced indexing by one index array
// on dim 0, an embedding's forward), index_add (its backward), gather, scatter / scatter_add, index_put by one
// index array on dim 0, and cat.
//
// Copies move whole rows with memcpy and work for any dtype without Python objects; additions are for
// float32/float64. Additions into rows named by an index run in index order within each column, so duplicate
// indices accumulate deterministically (work is split over columns only, as ATen's index_add CPU kernel).
// An index out of range returns NotImplemented: the NumPy kernel then raises the usual error.
#include <algorithm>

#include "kit.h"
#include "index_ops.h"

namespace tt {

Stub<AxpyFn> axpy_stub[2];

namespace {

constexpr int kMaxDims = 32;

// arrays whose elements can be moved as bytes (no Python objects inside)
static bool plain(PyArrayObject* a) { return !PyDataType_REFCHK(PyArray_DESCR(a)); }

static bool same_type(PyArrayObject* a, PyArrayObject* b) {
  return PyArray_EquivTypes(PyArray_DESCR(a), PyArray_DESCR(b));
}

// A new reference to a C-contiguous version of `a` (itself when it already is).
static PyArrayObject* contig(PyArrayObject* a) { return PyArray_GETCONTIGUOUS(a); }

// The entries of an int64/int32 index array (any shape and strides) in C order, wrapped into [0, size) when
// `wrap_negative` (NumPy's take and fancy indexing) and checked against [0, size). A C-contiguous int64 index
// in range is read in place. 0: ok; 1: not handled (dtype, or an entry out of range); -1: a Python error.
struct Index {
  const int64_t* p = nullptr;
  int64_t n = 0;
  std::vector<int64_t> buf;
  Ref hold;
  int64_t operator[](int64_t i) const { return p[i]; }
};

static int load_index(PyArrayObject* idx, int64_t size, bool wrap_negative, Index& out) {
  const int t = PyArray_TYPE(idx);
  if (t != NPY_INT64 && t != NPY_INT32) return 1;
  out.hold.p = contig(idx);
  if (!out.hold.p) return -1;
  const int64_t n = PyArray_SIZE(out.hold.p);
  out.n = n;
  if (t == NPY_INT64) {
    const int64_t* x = reinterpret_cast<const int64_t*>(PyArray_DATA(out.hold.p));
    int64_t lo = 0, hi = -1;
    for (int64_t i = 0; i < n; ++i) {  // vectorized min / max
      lo = x[i] < lo ? x[i] : lo;
      hi = x[i] > hi ? x[i] : hi;
    }
    if (hi >= size || lo < (wrap_negative ? -size : 0)) return 1;
    if (lo >= 0) {
      out.p = x;
      return 0;
    }
  }
  out.buf.resize(n);
  bool bad = false;
  auto fill = [&](auto* x) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t v = x[i];
      if (wrap_negative && v < 0) v += size;
      bad |= v < 0 || v >= size;
      out.buf[i] = v;
    }
  };
  if (t == NPY_INT64) fill(reinterpret_cast<const int64_t*>(PyArray_DATA(out.hold.p)));
  else fill(reinterpret_cast<const int32_t*>(PyArray_DATA(out.hold.p)));
  out.p = out.buf.data();
  return bad ? 1 : 0;
}

static inline void copy_item(char* d, const char* s, int64_t size) {
  switch (size) {
    case 8: std::memcpy(d, s, 8); break;
    case 4: std::memcpy(d, s, 4); break;
    case 2: std::memcpy(d, s, 2); break;
    case 1: *d = *s; break;
    default: std::memcpy(d, s, size);
  }
}

// a row copy: an inline loop for short rows of whole 8-byte words (a call to memcpy and its start-up cost
// are most of the time of a 512-byte copy)
static inline void copy_row(char* d, const char* s, int64_t nb) {
  if (nb <= 64 && nb % 8 == 0) {
    for (int64_t k = 0; k < nb; k += 8) {
      uint64_t w;
      std::memcpy(&w, s + k, 8);
      std::memcpy(d + k, &w, 8);
    }
  } else {
    std::memcpy(d, s, nb);
  }
}

// rows of `a` (C-contiguous) viewed as (outer, n, row bytes) around `dim`
struct Rows {
  int64_t outer = 1, n = 1, inner = 1;
};
static Rows rows_around(PyArrayObject* a, int dim) {
  Rows r;
  for (int d = 0; d < PyArray_NDIM(a); ++d) {
    if (d < dim) r.outer *= PyArray_DIM(a, d);
    else if (d == dim) r.n = PyArray_DIM(a, d);
    else r.inner *= PyArray_DIM(a, d);
  }
  return r;
}

// dim wrapped into [0, nd); false when out of range
static bool wrap_dim(int64_t d, int nd, int* dim) {
  if (d < -nd || d >= nd) return false;
  *dim = (int)((d + nd) % nd);
  return true;
}

// index_select(a, index, dim): a copy of the rows of `a` named by the 1-D `index` along `dim`
static TT_ENTRY(py_index_select) {
  PyArrayObject *a0, *index;
  int64_t dim_arg;
  TT_ARGS(a0, index, dim_arg);
  int dim;
  const int nd = PyArray_NDIM(a0);
  if (nd == 0 || nd > kMaxDims || PyArray_NDIM(index) > 1 || !plain(a0) || !wrap_dim(dim_arg, nd, &dim))
    return not_implemented();
  Index idx;
  int st = load_index(index, PyArray_DIM(a0, dim), true, idx);
  if (st) return st < 0 ? nullptr : not_implemented();
  Ref a(contig(a0));
  if (!a.p) return nullptr;
  std::vector<npy_intp> shape(PyArray_DIMS(a.p), PyArray_DIMS(a.p) + nd);
  shape[dim] = (npy_intp)idx.n;
  Py_INCREF(PyArray_DESCR(a.p));
  Ref out(reinterpret_cast<PyArrayObject*>(
      PyArray_NewFromDescr(&PyArray_Type, PyArray_DESCR(a.p), nd, shape.data(), nullptr, nullptr, 0, nullptr)));
  if (!out.p) return nullptr;
  if (PyArray_SIZE(out.p) == 0) return out.release();
  const Rows r = rows_around(a.p, dim);
  const int64_t item = PyArray_ITEMSIZE(a.p), rb = r.inner * item, k = idx.n;
  const char* src = PyArray_BYTES(a.p);
  char* dst = PyArray_BYTES(out.p);
  run_released(PyArray_SIZE(out.p), [&] {
    parallel_for(0, r.outer * k, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(r.inner, 1)),
                 [&](int64_t b, int64_t e) {
      int64_t o = b / k, i = b % k;  // no division per row
      const char* so = src + o * r.n * rb;
      for (int64_t q = b; q < e; ++q) {
        const char* s = so + idx[i] * rb;
        char* d = dst + q * rb;
        if (rb == item) copy_item(d, s, item);
        else copy_row(d, s, rb);
        if (++i == k) i = 0, so += r.n * rb;
      }
    });
  });
  return out.release();
}

// index_add(a, index, src, dim, alpha): a copy of `a` with alpha * src's rows added at the rows `index`
static TT_ENTRY(py_index_add) {
  PyArrayObject *a, *index, *src0;
  int64_t dim_arg;
  double alpha;  // a bool declines (kit.h): PyTorch's alpha=True is not 1.0
  TT_ARGS(a, index, src0, dim_arg, alpha);
  const int nd = PyArray_NDIM(a);
  const int fi = loop_index(a);
  int dim;
  if (fi < 0 || nd == 0 || nd > kMaxDims || !same_type(a, src0) || PyArray_NDIM(index) > 1 ||
      !wrap_dim(dim_arg, nd, &dim))
    return not_implemented();
  Index idx;
  // a negative index is left to the NumPy kernel (the op never passes one: PyTorch rejects them)
  int st = load_index(index, PyArray_DIM(a, dim), false, idx);
  if (st) return st < 0 ? nullptr : not_implemented();
  const int64_t k = idx.n;
  if (PyArray_NDIM(src0) != nd) return not_implemented();
  for (int d = 0; d < nd; ++d)
    if (PyArray_DIM(src0, d) != (d == dim ? k : PyArray_DIM(a, d))) return not_implemented();
  Ref out(reinterpret_cast<PyArrayObject*>(PyArray_NewCopy(a, NPY_CORDER)));
  if (!out.p) return nullptr;
  Ref src(contig(src0));
  if (!src.p) return nullptr;
  if (PyArray_SIZE(src.p) == 0) return out.release();
  const Rows r = rows_around(out.p, dim);
  const int64_t item = PyArray_ITEMSIZE(a);
  constexpr int64_t kCols = 1024;  // columns per task: each task adds every index's row to its columns
  const int64_t ncb = (r.inner + kCols - 1) / kCols;
  char* dst = PyArray_BYTES(out.p);
  const char* s = PyArray_BYTES(src.p);
  AxpyFn axpy = axpy_stub[fi].get();
  run_released(PyArray_SIZE(src.p), [&] {
    parallel_for(0, r.outer * ncb, std::max<int64_t>(1, kGrainSize / (k * std::min(r.inner, kCols))),
                 [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t o = t / ncb, c0 = (t % ncb) * kCols, n = std::min(kCols, r.inner - c0);
        for (int64_t i = 0; i < k; ++i)
          axpy(dst + ((o * r.n + idx[i]) * r.inner + c0) * item, s + ((o * k + i) * r.inner + c0) * item, n, alpha);
      }
    });
  });
  return out.release();
}

// Positions of an N-d shape in C order with the byte offsets of up to two strided operands.
struct Walk {
  int nd;
  int64_t size[kMaxDims], s0[kMaxDims], s1[kMaxDims], idx[kMaxDims] = {};
  int64_t o0 = 0, o1 = 0;
  void seek(int64_t flat) {
    o0 = o1 = 0;
    for (int k = nd - 1; k >= 0; --k) {
      idx[k] = flat % size[k];
      flat /= size[k];
      o0 += idx[k] * s0[k];
      o1 += idx[k] * s1[k];
    }
  }
  void next() {
    for (int k = nd - 1; k >= 0; --k) {
      o0 += s0[k];
      o1 += s1[k];
      if (++idx[k] < size[k]) return;
      o0 -= s0[k] * size[k];
      o1 -= s1[k] * size[k];
      idx[k] = 0;
    }
  }
};

template <typename U>
static inline void gather_row_t(char* d, const char* s, const int64_t* ix, int64_t len, int64_t sl, int64_t sd) {
  U* o = reinterpret_cast<U*>(d);
  for (int64_t j = 0; j < len; ++j) std::memcpy(o + j, s + j * sl + ix[j] * sd, sizeof(U));
}

// out[j] = s[j * sl + ix[j] * sd] for j < len
static void gather_row(char* d, const char* s, const int64_t* ix, int64_t len, int64_t sl, int64_t sd,
                       int64_t item) {
  switch (item) {
    case 8: gather_row_t<uint64_t>(d, s, ix, len, sl, sd); break;
    case 4: gather_row_t<uint32_t>(d, s, ix, len, sl, sd); break;
    case 2: gather_row_t<uint16_t>(d, s, ix, len, sl, sd); break;
    case 1: gather_row_t<uint8_t>(d, s, ix, len, sl, sd); break;
    default:
      for (int64_t j = 0; j < len; ++j) std::memcpy(d + j * item, s + j * sl + ix[j] * sd, item);
  }
}

// gather(a, index, dim): out[p] = a[p with p[dim] = index[p]], shape of index
static TT_ENTRY(py_gather) {
  PyArrayObject *a, *index;
  int64_t dim_arg;
  TT_ARGS(a, index, dim_arg);
  const int nd = PyArray_NDIM(a);
  int dim;
  if (nd == 0 || nd > kMaxDims || PyArray_NDIM(index) != nd || !plain(a) || !wrap_dim(dim_arg, nd, &dim))
    return not_implemented();
  for (int d = 0; d < nd; ++d)
    if (d != dim && PyArray_DIM(index, d) > PyArray_DIM(a, d)) return not_implemented();
  Index idx;
  // NumPy's take_along_axis wraps negative indices; the op's checks never let one through
  int st = load_index(index, PyArray_DIM(a, dim), true, idx);
  if (st) return st < 0 ? nullptr : not_implemented();
  Py_INCREF(PyArray_DESCR(a));
  Ref out(reinterpret_cast<PyArrayObject*>(PyArray_NewFromDescr(
      &PyArray_Type, PyArray_DESCR(a), nd, PyArray_DIMS(index), nullptr, nullptr, 0, nullptr)));
  if (!out.p) return nullptr;
  const int64_t n = idx.n;
  if (!n) return out.release();
  // rows of index's last dim; the walk covers the dims before it
  Walk w;
  w.nd = nd - 1;
  for (int d = 0; d < nd - 1; ++d) {
    w.size[d] = PyArray_DIM(index, d);
    w.s0[d] = d == dim ? 0 : PyArray_STRIDE(a, d);
    w.s1[d] = 0;
  }
  const int64_t item = PyArray_ITEMSIZE(a), sd = PyArray_STRIDE(a, dim);
  const int64_t len = PyArray_DIM(index, nd - 1), sl = dim == nd - 1 ? 0 : PyArray_STRIDE(a, nd - 1);
  const char* src = PyArray_BYTES(a);
  char* dst = PyArray_BYTES(out.p);
  run_released(n, [&] {
    parallel_for(0, n / len, std::max<int64_t>(1, kGrainSize / len), [&](int64_t b, int64_t e) {
      Walk ww = w;
      ww.seek(b);
      for (int64_t r = b; r < e; ++r, ww.next()) {
        const int64_t* ix = idx.p + r * len;
        gather_row(dst + r * len * item, src + ww.o0, ix, len, sl, sd, item);
      }
    });
  });
  return out.release();
}

// scatter(a, index, src, dim, add, zero_first): a copy of `a` with src[p] written (or added) at
// p with p[dim] = index[p]; src an array of a's dtype or a Python number. zero_first: positions that receive
// something start from 0 (scatter_reduce's include_self=False).
static TT_ENTRY(py_scatter) {
  PyArrayObject *a, *index;
  PyObject* src_obj;
  int64_t dim_arg;
  bool add, zero_first;
  TT_ARGS(a, index, src_obj, dim_arg, add, zero_first);
  const int nd = PyArray_NDIM(a);
  const DType dt = dtype_of(a);
  const int fi = loop_index(dt);
  int dim;
  if (nd == 0 || nd > kMaxDims || PyArray_NDIM(index) != nd || !plain(a) || !wrap_dim(dim_arg, nd, &dim) ||
      ((add || zero_first) && fi < 0))
    return not_implemented();
  PyArrayObject* src = nullptr;
  double scalar = 0;
  if (is_array(src_obj)) {
    src = arr(src_obj);
    if (PyArray_NDIM(src) == 0) {
      if (fi < 0 || !same_type(a, src)) return not_implemented();
      scalar = TT_DISPATCH_FLOATING_TYPES(dt, "scatter",
                                          [&] { return (double)*reinterpret_cast<const scalar_t*>(PyArray_DATA(src)); });
      src = nullptr;
    } else if (PyArray_NDIM(src) != nd || !same_type(a, src)) {
      return not_implemented();
    }
  } else if (fi < 0 || argconv::convert(src_obj, scalar) != 1) {  // a bool declines too
    return not_implemented();
  }
  for (int d = 0; d < nd; ++d) {
    if (d != dim && PyArray_DIM(index, d) > PyArray_DIM(a, d)) return not_implemented();
    if (src && PyArray_DIM(index, d) > PyArray_DIM(src, d)) return not_implemented();
  }
  Index idx;
  int st = load_index(index, PyArray_DIM(a, dim), true, idx);
  if (st) return st < 0 ? nullptr : not_implemented();
  Ref out(reinterpret_cast<PyArrayObject*>(PyArray_NewCopy(a, NPY_CORDER)));
  if (!out.p) return nullptr;
  const int64_t n = idx.n;
  if (!n) return out.release();
  const int64_t item = PyArray_ITEMSIZE(a);
  // rows of index's last dim, in C order: duplicates are written (or added) in index order
  Walk w;
  w.nd = nd - 1;
  for (int d = 0; d < nd - 1; ++d) {
    w.size[d] = PyArray_DIM(index, d);
    w.s0[d] = d == dim ? 0 : PyArray_STRIDE(out.p, d);
    w.s1[d] = src ? PyArray_STRIDE(src, d) : 0;
  }
  const int64_t sd = PyArray_STRIDE(out.p, dim), len = PyArray_DIM(index, nd - 1);
  const int64_t sl = dim == nd - 1 ? 0 : PyArray_STRIDE(out.p, nd - 1), vl = src ? PyArray_STRIDE(src, nd - 1) : 0;
  char* dst = PyArray_BYTES(out.p);
  const char* s = src ? PyArray_BYTES(src) : nullptr;
  const float sf = (float)scalar;
  const char* sv = fi == 0 ? reinterpret_cast<const char*>(&sf) : reinterpret_cast<const char*>(&scalar);
  run_released(n, [&] {
    if (zero_first) {
      Walk z = w;
      for (int64_t r = 0; r < n / len; ++r, z.next())
        for (int64_t j = 0; j < len; ++j) std::memset(dst + z.o0 + j * sl + idx[r * len + j] * sd, 0, item);
    }
    for (int64_t r = 0; r < n / len; ++r, w.next()) {
      const int64_t* ix = idx.p + r * len;
      char* d = dst + w.o0;
      const char* v = s ? s + w.o1 : sv;
      const int64_t vs = s ? vl : 0;
      if (!add) {
        for (int64_t j = 0; j < len; ++j) copy_item(d + j * sl + ix[j] * sd, v + j * vs, item);
      } else {
        TT_DISPATCH_FLOATING_TYPES(dt, "scatter", [&] {
          for (int64_t j = 0; j < len; ++j)
            *reinterpret_cast<scalar_t*>(d + j * sl + ix[j] * sd) += *reinterpret_cast<const scalar_t*>(v + j * vs);
        });
      }
    }
  });
  return out.release();
}

// index_put0(a, values, index, accumulate): a copy of `a` with a[index] = values (or += with accumulate), the
// index array naming rows of dim 0 and values broadcasting to index.shape + a.shape[1:]
static TT_ENTRY(py_index_put0) {
  PyArrayObject *a, *values, *index;
  bool acc;
  TT_ARGS(a, values, index, acc);
  const int nd = PyArray_NDIM(a), ni = PyArray_NDIM(index), nv = PyArray_NDIM(values);
  const DType dt = dtype_of(a);
  const int fi = loop_index(dt);
  const int nr = ni + nd - 1;  // dims of the indexed result
  if (nd == 0 || nr > kMaxDims || !plain(a) || !same_type(a, values) || (acc && fi < 0) || nv > nr)
    return not_implemented();
  std::vector<int64_t> rshape(nr), vstr(nr, 0);
  for (int d = 0; d < ni; ++d) rshape[d] = PyArray_DIM(index, d);
  for (int d = 1; d < nd; ++d) rshape[ni + d - 1] = PyArray_DIM(a, d);
  for (int k = 0; k < nv; ++k) {  // right-aligned broadcast of values
    const int d = nr - nv + k;
    const int64_t vs = PyArray_DIM(values, k);
    if (vs != 1 && vs != rshape[d]) return not_implemented();
    vstr[d] = vs == 1 ? 0 : PyArray_STRIDE(values, k);
  }
  Index idx;
  int st = load_index(index, PyArray_DIM(a, 0), true, idx);
  if (st) return st < 0 ? nullptr : not_implemented();
  Ref out(reinterpret_cast<PyArrayObject*>(PyArray_NewCopy(a, NPY_CORDER)));
  if (!out.p) return nullptr;
  const int64_t n = idx.n, item = PyArray_ITEMSIZE(a);
  int64_t row = 1;
  for (int d = 1; d < nd; ++d) row *= PyArray_DIM(a, d);
  if (!n || !row) return out.release();
  // is the row part of values C-contiguous (a memcpy / vector add per index)?
  bool vrow_contig = true;
  int64_t expect = item;
  for (int d = nr - 1; d >= ni; --d) {
    if (rshape[d] != 1 && vstr[d] != expect) vrow_contig = false;
    expect *= rshape[d];
  }
  Walk wi;  // over the index dims: values offset
  wi.nd = ni;
  for (int d = 0; d < ni; ++d) wi.size[d] = rshape[d], wi.s0[d] = vstr[d], wi.s1[d] = 0;
  Walk wr;  // over the row dims: values offset and output offset
  wr.nd = nd - 1;
  {
    int64_t os = item;
    for (int d = nd - 2; d >= 0; --d) {
      wr.size[d] = rshape[ni + d];
      wr.s0[d] = vstr[ni + d];
      wr.s1[d] = os;
      os *= wr.size[d];
    }
  }
  char* dst = PyArray_BYTES(out.p);
  const char* v = PyArray_BYTES(values);
  AxpyFn axpy = acc ? axpy_stub[fi].get() : nullptr;
  run_released(n * row, [&] {
    for (int64_t i = 0; i < n; ++i, wi.next()) {
      char* d = dst + idx[i] * row * item;
      const char* vv = v + wi.o0;
      if (vrow_contig) {
        if (acc) axpy(d, vv, row, 1.0);
        else std::memcpy(d, vv, row * item);
        continue;
      }
      Walk w = wr;
      if (!acc) {
        for (int64_t j = 0; j < row; ++j, w.next()) copy_item(d + w.o1, vv + w.o0, item);
        continue;
      }
      TT_DISPATCH_FLOATING_TYPES(dt, "index_put0", [&] {
        for (int64_t j = 0; j < row; ++j, w.next())
          *reinterpret_cast<scalar_t*>(d + w.o1) += *reinterpret_cast<const scalar_t*>(vv + w.o0);
      });
    }
  });
  return out.release();
}

// cat(tensors, dim): the arrays (one dtype, same shape but along dim) joined along dim
static TT_ENTRY(py_cat) {
  PyObject* tensors;
  int64_t dim_arg;
  TT_ARGS(tensors, dim_arg);
  PyObject* seq = PySequence_Fast(tensors, "tensors");
  if (!seq) {
    PyErr_Clear();
    return not_implemented();
  }
  const Py_ssize_t m = PySequence_Fast_GET_SIZE(seq);
  std::vector<PyArrayObject*> ts;  // new references (contiguous versions)
  auto cleanup = [&] {
    for (PyArrayObject* t : ts) Py_DECREF(t);
    Py_DECREF(seq);
  };
  PyArrayObject* first = m ? (is_array(PySequence_Fast_GET_ITEM(seq, 0)) ? arr(PySequence_Fast_GET_ITEM(seq, 0))
                                                                          : nullptr)
                           : nullptr;
  int dim;
  const int nd = first ? PyArray_NDIM(first) : 0;
  if (!first || nd == 0 || !plain(first) || !wrap_dim(dim_arg, nd, &dim)) {
    cleanup();
    return not_implemented();
  }
  std::vector<npy_intp> shape(PyArray_DIMS(first), PyArray_DIMS(first) + nd);
  shape[dim] = 0;
  for (Py_ssize_t i = 0; i < m; ++i) {
    PyObject* o = PySequence_Fast_GET_ITEM(seq, i);
    bool ok = is_array(o) && PyArray_NDIM(arr(o)) == nd && same_type(first, arr(o));
    for (int d = 0; ok && d < nd; ++d)
      if (d != dim && PyArray_DIM(arr(o), d) != shape[d]) ok = false;
    if (!ok) {
      cleanup();
      return not_implemented();
    }
    shape[dim] += PyArray_DIM(arr(o), dim);
    PyArrayObject* c = contig(arr(o));
    if (!c) {
      cleanup();
      return nullptr;
    }
    ts.push_back(c);
  }
  Py_INCREF(PyArray_DESCR(first));
  PyArrayObject* out = reinterpret_cast<PyArrayObject*>(
      PyArray_NewFromDescr(&PyArray_Type, PyArray_DESCR(first), nd, shape.data(), nullptr, nullptr, 0, nullptr));
  if (!out) {
    cleanup();
    return nullptr;
  }
  const int64_t total = PyArray_NBYTES(out);
  if (total) {
    int64_t outer = 1;
    for (int d = 0; d < dim; ++d) outer *= shape[d];
    const int64_t rowb = total / outer;
    std::vector<int64_t> chunk(m), off(m);
    int64_t acc = 0;
    for (Py_ssize_t i = 0; i < m; ++i) {
      chunk[i] = outer ? PyArray_NBYTES(ts[i]) / outer : 0;
      off[i] = acc;
      acc += chunk[i];
    }
    char* dst = PyArray_BYTES(out);
    run_released(total / 4, [&] {
      parallel_for(0, outer, std::max<int64_t>(1, 4 * kGrainSize / std::max<int64_t>(rowb, 1)),
                   [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o)
          for (Py_ssize_t i = 0; i < m; ++i)
            if (chunk[i]) std::memcpy(dst + o * rowb + off[i], PyArray_BYTES(ts[i]) + o * chunk[i], chunk[i]);
      });
    });
  }
  cleanup();
  return reinterpret_cast<PyObject*>(out);
}

}  // namespace

PyMethodDef index_methods[] = {
    TT_METHOD("index_select", py_index_select, "index_select(a, index, dim)"),
    TT_METHOD("index_add", py_index_add, "index_add(a, index, src, dim, alpha)"),
    TT_METHOD("gather", py_gather, "gather(a, index, dim)"),
    TT_METHOD("scatter", py_scatter, "scatter(a, index, src, dim, add, zero_first)"),
    TT_METHOD("index_put0", py_index_put0, "index_put0(a, values, index, accumulate)"),
    TT_METHOD("cat", py_cat, "cat(tensors, dim)"),
    {nullptr, nullptr, 0, nullptr}};

}  // namespace tt
