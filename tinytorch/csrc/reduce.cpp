// Python entry points of the native reductions: sum, amax, amin over any set of dims, and argmax, argmin,
// max_dim, min_dim over one dim, for float32/float64 arrays of any strides.
//
// The plan follows ATen's reduction (aten/src/ATen/native/cpu/Reduce.h, TensorIterator's reduce dims): drop
// size-1 dims, order the dims by input stride, coalesce neighbours of the same kind (kept or reduced), then
//  - row reduction when the innermost reduced dim is contiguous: each output reduces contiguous rows
//    (vectorized with several accumulators; kernels/reduce.inc);
//  - column reduction when the innermost kept dim is contiguous (a bias gradient: sum over dim 0 of (N, C)):
//    a block of outputs accumulates whole input rows, vectorized along the contiguous dim;
//  - many outputs with short reduced rows: sums of contiguous rows under 256 go several rows per vector
//    (transpose-and-add, like a GEMV with a ones vector); other ops and layouts with a reduced dim under 32
//    (a pooling window) copy a block of outputs transposed into scratch and run the column loops on it;
//  - otherwise a strided scalar loop per output.
// Work is split over outputs; when there are few outputs and much to reduce, over fixed blocks of the reduced
// elements whose partial results are combined in block order. The split depends on the shape only, never on
// the number of threads, so results are deterministic.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kit.h"
#include "reduce_ops.h"

namespace tt {

Stub<RowReduceFn> row_reduce_stub[2];
Stub<RowsSumFn> rows_sum_stub[2];
Stub<RowArgFn> row_arg_stub[2];
Stub<ColReduceFn> col_reduce_stub[2];
Stub<ColArgFn> col_arg_stub[2];

namespace {

constexpr int kMaxDims = 32;
constexpr int64_t kBlock = 16384;     // reduced elements per partial result when few outputs split the work
constexpr int64_t kColBlock = 512;    // outputs per column-reduction task (its accumulators stay in L1)

struct Dim {
  int64_t size, in, out;  // extent, input stride and output stride (bytes)
  bool red;
};

// Iterates the positions of a set of dims (outermost first), giving the byte offsets into input and output.
struct Counter {
  const Dim* d;
  int nd;
  int64_t idx[kMaxDims];
  int64_t in = 0, out = 0;
  Counter(const Dim* dims, int n, int64_t flat = 0) : d(dims), nd(n) {
    for (int k = nd - 1; k >= 0; --k) {
      idx[k] = flat % d[k].size;
      flat /= d[k].size;
      in += idx[k] * d[k].in;
      out += idx[k] * d[k].out;
    }
  }
  void next() {
    for (int k = nd - 1; k >= 0; --k) {
      in += d[k].in;
      out += d[k].out;
      if (++idx[k] < d[k].size) return;
      in -= d[k].in * d[k].size;
      out -= d[k].out * d[k].size;
      idx[k] = 0;
    }
  }
};

struct Plan {
  std::vector<Dim> kept, red;  // each outermost first
  int64_t M = 1, N = 1;        // outputs, reduced elements per output
};

// kept dims get the output strides of a C-contiguous result with element size `out_item`
static Plan make_plan(PyArrayObject* a, const bool* reduce, int out_item) {
  const int nd = PyArray_NDIM(a);
  const npy_intp* shape = PyArray_DIMS(a);
  const npy_intp* st = PyArray_STRIDES(a);
  std::vector<int64_t> ostride(nd, 0);
  int64_t os = out_item;
  for (int d = nd - 1; d >= 0; --d)
    if (!reduce[d]) {
      ostride[d] = os;
      os *= shape[d];
    }
  std::vector<Dim> dims;
  for (int d = 0; d < nd; ++d)
    if (shape[d] != 1) dims.push_back({shape[d], st[d], ostride[d], reduce[d]});
  std::stable_sort(dims.begin(), dims.end(),
                   [](const Dim& x, const Dim& y) { return std::llabs(x.in) > std::llabs(y.in); });
  std::vector<Dim> merged;
  for (const Dim& d : dims) {
    if (!merged.empty()) {
      Dim& p = merged.back();
      if (p.red == d.red && p.in == d.in * d.size && (d.red || p.out == d.out * d.size)) {
        p.size *= d.size;
        p.in = d.in;
        p.out = d.out;
        continue;
      }
    }
    merged.push_back(d);
  }
  Plan pl;
  for (const Dim& d : merged) {
    (d.red ? pl.red : pl.kept).push_back(d);
    (d.red ? pl.N : pl.M) *= d.size;
  }
  return pl;
}

template <typename T>
static inline double combine(double a, double b, int op) {
  if (op == RED_SUM) return a + b;
  if (a != a) return a;
  if (b != b) return b;
  return op == RED_MAX ? (b > a ? b : a) : (b < a ? b : a);
}

// An op over n elements at stride s (bytes), any stride. Short rows stay here: a call to the vectorized loop
// and the combination of its lanes cost more than the loop saves.
template <typename T>
static inline double strided_reduce(const char* p, int64_t n, int64_t s, int op, RowReduceFn row) {
  if (s == (int64_t)sizeof(T) && n >= (op == RED_SUM ? 8 : 16)) return row(p, n, op);
  if (op == RED_SUM) {
    double a = 0.0;
    for (int64_t i = 0; i < n; ++i) a += *reinterpret_cast<const T*>(p + i * s);
    return a;
  }
  // maxss/minss and a NaN flag: no branch to mispredict
  T a = *reinterpret_cast<const T*>(p);
  bool nan = a != a;
  if (op == RED_MAX) {
    for (int64_t i = 1; i < n; ++i) {
      const T v = *reinterpret_cast<const T*>(p + i * s);
      a = v > a ? v : a;
      nan |= v != v;
    }
  } else {
    for (int64_t i = 1; i < n; ++i) {
      const T v = *reinterpret_cast<const T*>(p + i * s);
      a = v < a ? v : a;
      nan |= v != v;
    }
  }
  return nan ? std::numeric_limits<double>::quiet_NaN() : (double)a;
}

constexpr int64_t kShort = 32;  // reduced extents below this are reduced across outputs (see reduce_short)
constexpr int kOutBlock = 64;   // outputs per block of reduce_short

// Many outputs each reducing fewer than kShort elements (a pooling window, the last dim of (N, 4)): a loop
// per output would be a chain of dependent adds or compares. Instead a block of kOutBlock outputs is copied
// transposed into scratch rows (element i of every output in row i) and reduced with the column loops,
// vectorized across the outputs. `fn(scratch rows, n, block size, output offsets)` finishes a block.
template <typename T, typename F>
static void short_blocks(const Plan& pl, const char* in, F fn) {
  const Dim r = pl.red.back();
  const int nk = (int)pl.kept.size();
  const int64_t nb = (pl.M + kOutBlock - 1) / kOutBlock;
  parallel_for(0, nb, std::max<int64_t>(1, kGrainSize / (kOutBlock * r.size)), [&](int64_t b, int64_t e) {
    T scratch[kShort][kOutBlock];
    const char* rows[kShort];
    int64_t outs[kOutBlock];
    for (int64_t i = 0; i < r.size; ++i) rows[i] = reinterpret_cast<const char*>(scratch[i]);
    Counter kc(pl.kept.data(), nk, b * kOutBlock);
    for (int64_t blk = b; blk < e; ++blk) {
      const int64_t m = std::min<int64_t>(kOutBlock, pl.M - blk * kOutBlock);
      for (int64_t j = 0; j < m; ++j, kc.next()) {
        const char* p = in + kc.in;
        for (int64_t i = 0; i < r.size; ++i) scratch[i][j] = *reinterpret_cast<const T*>(p + i * r.in);
        outs[j] = kc.out;
      }
      fn(rows, r.size, m, outs);
    }
  });
}

// Row (and strided) reduction: red.back() is the inner row, the other reduced dims iterate around it.
template <typename T>
static void reduce_rows(const Plan& pl, const char* in, char* out, int op, RowReduceFn row) {
  const Dim inner = pl.red.back();
  const int nro = (int)pl.red.size() - 1;
  const int64_t rows = pl.N / inner.size;  // positions of the outer reduced dims
  // reduces rows [r0, r1) of the output whose input starts at `base`
  auto rows_of = [&](const char* base, int64_t r0, int64_t r1) {
    Counter rc(pl.red.data(), nro, r0);
    double a = 0;
    for (int64_t r = r0; r < r1; ++r, rc.next()) {
      double v = strided_reduce<T>(base + rc.in, inner.size, inner.in, op, row);
      a = r == r0 ? v : combine<T>(a, v, op);
    }
    return a;
  };
  const int nk = (int)pl.kept.size();
  if (pl.M >= 16 || pl.N < 2 * kBlock) {
    parallel_for(0, pl.M, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(pl.N, 1)), [&](int64_t b, int64_t e) {
      Counter kc(pl.kept.data(), nk, b);
      for (int64_t o = b; o < e; ++o, kc.next())
        *reinterpret_cast<T*>(out + kc.out) = (T)rows_of(in + kc.in, 0, rows);
    });
    return;
  }
  // few outputs, many elements each: fixed blocks of the reduced elements, combined in order
  Counter kc(pl.kept.data(), nk);
  for (int64_t o = 0; o < pl.M; ++o, kc.next()) {
    const char* base = in + kc.in;
    std::vector<double> part;
    if (rows == 1) {
      const int64_t nb = (inner.size + kBlock - 1) / kBlock;
      part.resize(nb);
      parallel_for(0, nb, 1, [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) {
          const int64_t i0 = k * kBlock, n = std::min(kBlock, inner.size - i0);
          part[k] = strided_reduce<T>(base + i0 * inner.in, n, inner.in, op, row);
        }
      });
    } else {
      const int64_t per = std::max<int64_t>(1, kBlock / inner.size);
      const int64_t nb = (rows + per - 1) / per;
      part.resize(nb);
      parallel_for(0, nb, 1, [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) part[k] = rows_of(base, k * per, std::min(rows, (k + 1) * per));
      });
    }
    double a = part[0];
    for (size_t k = 1; k < part.size(); ++k) a = combine<T>(a, part[k], op);
    *reinterpret_cast<T*>(out + kc.out) = (T)a;
  }
}

// Column reduction: kept.back() is contiguous in the input; blocks of it accumulate whole rows.
template <typename T>
static void reduce_cols(const Plan& pl, const char* in, char* out, int op, ColReduceFn col) {
  const Dim inner = pl.kept.back();
  const int nko = (int)pl.kept.size() - 1;
  const int nr = (int)pl.red.size();
  const int64_t ko = pl.M / inner.size;
  const int64_t ncb = (inner.size + kColBlock - 1) / kColBlock;
  const int64_t tasks = ko * ncb;
  // split the reduced dims too when there are few tasks and much to reduce
  int64_t per = pl.N, nrb = 1;
  if (tasks < 8 && pl.N * std::min(inner.size, kColBlock) >= 4 * kBlock) {
    per = std::max<int64_t>(16, 8 * kBlock / std::min(inner.size, kColBlock));
    nrb = (pl.N + per - 1) / per;
  }
  const size_t accsz = op == RED_SUM ? sizeof(double) : sizeof(T);
  std::vector<char> part(nrb > 1 ? (size_t)(tasks * nrb * kColBlock) * accsz : 0);
  auto run = [&](int64_t t, int64_t rb, char* acc) {
    const int64_t k = t / ncb, c0 = (t % ncb) * kColBlock, n = std::min(kColBlock, inner.size - c0);
    Counter kc(pl.kept.data(), nko, k);
    const char* base = in + kc.in + c0 * inner.in;
    const int64_t r0 = rb * per, r1 = std::min(pl.N, r0 + per);
    Counter rc(pl.red.data(), nr, r0);
    if (op == RED_SUM) {
      std::fill_n(reinterpret_cast<double*>(acc), n, 0.0);
    } else {
      std::memcpy(acc, base + rc.in, n * sizeof(T));
    }
    // the rows' addresses, a bounded batch at a time (a multiple of the loops' row blocks)
    const char* rows[256];
    for (int64_t r = r0; r < r1;) {
      int64_t m = 0;
      for (; m < 256 && r < r1; ++m, ++r, rc.next()) rows[m] = base + rc.in;
      col(acc, rows, m, n, op);
    }
    return n;
  };
  auto store = [&](int64_t t, const char* acc, int64_t n) {
    const int64_t k = t / ncb, c0 = (t % ncb) * kColBlock;
    Counter kc(pl.kept.data(), nko, k);
    char* o = out + kc.out + c0 * inner.out;
    for (int64_t j = 0; j < n; ++j, o += inner.out)
      *reinterpret_cast<T*>(o) = op == RED_SUM ? (T)reinterpret_cast<const double*>(acc)[j]
                                               : reinterpret_cast<const T*>(acc)[j];
  };
  const int64_t work = std::min(inner.size, kColBlock) * per;
  if (nrb == 1) {
    parallel_for(0, tasks, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(work, 1)), [&](int64_t b, int64_t e) {
      std::vector<char> acc(kColBlock * accsz);
      for (int64_t t = b; t < e; ++t) store(t, acc.data(), run(t, 0, acc.data()));
    });
    return;
  }
  parallel_for(0, tasks * nrb, 1, [&](int64_t b, int64_t e) {
    for (int64_t q = b; q < e; ++q) run(q / nrb, q % nrb, part.data() + q * kColBlock * accsz);
  });
  for (int64_t t = 0; t < tasks; ++t) {
    char* acc = part.data() + t * nrb * kColBlock * accsz;
    const int64_t c0 = (t % ncb) * kColBlock, n = std::min(kColBlock, inner.size - c0);
    for (int64_t rb = 1; rb < nrb; ++rb) {
      const char* p = acc + rb * kColBlock * accsz;
      if (op == RED_SUM) {
        double* a = reinterpret_cast<double*>(acc);
        const double* q = reinterpret_cast<const double*>(p);
        for (int64_t j = 0; j < n; ++j) a[j] += q[j];
      } else {
        T* a = reinterpret_cast<T*>(acc);
        const T* q = reinterpret_cast<const T*>(p);
        for (int64_t j = 0; j < n; ++j) a[j] = (T)combine<T>(a[j], q[j], op);
      }
    }
    store(t, acc, n);
  }
}

template <typename T>
static void reduce_short(const Plan& pl, const char* in, char* out, int op, ColReduceFn col) {
  short_blocks<T>(pl, in, [&](const char* const* rows, int64_t n, int64_t m, const int64_t* outs) {
    if (op == RED_SUM) {
      double acc[kOutBlock] = {};
      col(acc, rows, n, m, op);
      for (int64_t j = 0; j < m; ++j) *reinterpret_cast<T*>(out + outs[j]) = (T)acc[j];
    } else {
      T acc[kOutBlock];
      std::memcpy(acc, rows[0], m * sizeof(T));
      col(acc, rows + 1, n - 1, m, op);
      for (int64_t j = 0; j < m; ++j) *reinterpret_cast<T*>(out + outs[j]) = acc[j];
    }
  });
}

// Sums of short contiguous rows at a constant stride (one kept dim): several rows per vector (rows_sum).
template <typename T>
static void sum_short_rows(const Plan& pl, const char* in, char* out, RowsSumFn fn) {
  const Dim k = pl.kept[0], r = pl.red[0];
  constexpr int64_t B = 256;  // outputs per call
  parallel_for(0, (k.size + B - 1) / B, std::max<int64_t>(1, kGrainSize / (B * r.size)), [&](int64_t b, int64_t e) {
    double acc[B];
    for (int64_t c = b; c < e; ++c) {
      const int64_t j0 = c * B, m = std::min(B, k.size - j0);
      fn(in + j0 * k.in, r.size, k.in, m, acc);
      for (int64_t j = 0; j < m; ++j) *reinterpret_cast<T*>(out + (j0 + j) * k.out) = (T)acc[j];
    }
  });
}

template <typename T>
static void run_reduce(const Plan& pl, const char* in, char* out, int op, int fi) {
  if (op == RED_SUM && pl.red.size() == 1 && pl.kept.size() == 1 && pl.red[0].in == (int64_t)sizeof(T) &&
      pl.red[0].size >= 32 / (int64_t)sizeof(T) && pl.red[0].size < 256 && pl.M >= 8)
    sum_short_rows<T>(pl, in, out, rows_sum_stub[fi].get());
  else if (pl.red.size() == 1 && pl.red[0].size < kShort && pl.red[0].size > 1 && pl.M >= kOutBlock &&
      !(pl.kept.back().in == (int64_t)sizeof(T)))
    reduce_short<T>(pl, in, out, op, col_reduce_stub[fi].get());
  else if (!pl.red.empty() && pl.red.back().in == (int64_t)sizeof(T))
    reduce_rows<T>(pl, in, out, op, row_reduce_stub[fi].get());
  else if (!pl.kept.empty() && pl.kept.back().in == (int64_t)sizeof(T) && !pl.red.empty())
    reduce_cols<T>(pl, in, out, op, col_reduce_stub[fi].get());
  else
    reduce_rows<T>(pl, in, out, op, row_reduce_stub[fi].get());
}

// the reduced dims (none given: all); false when one is out of range
static bool reduced_dims(const Opt<IntList>& dims, int nd, bool* red) {
  std::fill_n(red, nd, !dims.has);
  if (!dims.has) return true;
  for (int64_t d : dims.v) {
    if (d < -nd || d >= nd || (nd == 0 && d != 0 && d != -1)) return false;
    if (nd) red[(d + nd) % nd] = true;
  }
  return true;
}

static std::vector<npy_intp> out_shape(PyArrayObject* a, const bool* red, bool keepdim) {
  std::vector<npy_intp> s;
  for (int d = 0; d < PyArray_NDIM(a); ++d)
    if (!red[d]) s.push_back(PyArray_DIM(a, d));
    else if (keepdim) s.push_back(1);
  return s;
}

// reduce(op, a, dims, keepdim): sum / amax / amin
static TT_ENTRY(py_reduce) {
  int op;
  PyArrayObject* a;
  Opt<IntList> dims;
  bool keepdim;
  TT_ARGS(op, a, dims, keepdim);
  const int fi = loop_index(a);
  const int nd = PyArray_NDIM(a);
  if (fi < 0 || op < RED_SUM || op > RED_MIN || nd > kMaxDims) return not_implemented();
  bool red[kMaxDims + 1];
  if (!reduced_dims(dims, nd, red)) return not_implemented();
  std::vector<npy_intp> os = out_shape(a, red, keepdim);
  const int type = PyArray_TYPE(a);
  const int item = (int)PyArray_ITEMSIZE(a);
  PyArrayObject* out = empty((int)os.size(), os.data(), type);
  if (!out) return nullptr;
  if (PyArray_SIZE(out) == 0) return reinterpret_cast<PyObject*>(out);
  if (PyArray_SIZE(a) == 0) {  // reducing empty dims: the identity, or nothing to take a max of
    if (op != RED_SUM) {
      Py_DECREF(out);
      return not_implemented();
    }
    std::memset(PyArray_DATA(out), 0, PyArray_NBYTES(out));
    return reinterpret_cast<PyObject*>(out);
  }
  Plan pl = make_plan(a, red, item);
  if (pl.red.empty()) pl.red.push_back({1, item, 0, true});  // nothing reduced: a copy
  const char* in = PyArray_BYTES(a);
  char* o = PyArray_BYTES(out);
  const DType dt = dtype_of(a);  // read with the GIL held
  run_released(PyArray_SIZE(a), [&] {
    TT_DISPATCH_FLOATING_TYPES(dt, "reduce", [&] { run_reduce<scalar_t>(pl, in, o, op, kLoopIndex<scalar_t>); });
  });
  return reinterpret_cast<PyObject*>(out);
}

// argmax / argmin of n elements at stride s: the first extreme, or the first NaN
template <typename T>
static int64_t row_arg(const char* p, int64_t n, int64_t s, int op, RowArgFn vec, T* val) {
  if (s == (int64_t)sizeof(T)) return vec(p, n, op, val);
  // selects instead of branches: short windows (pooling) have no predictable winner
  T b = *reinterpret_cast<const T*>(p);
  int64_t bi = 0;
  for (int64_t i = 1; i < n; ++i) {
    const T v = *reinterpret_cast<const T*>(p + i * s);
    const bool upd = (op == RED_MAX ? v > b : v < b) | ((v != v) & (b == b));
    b = upd ? v : b;
    bi = upd ? i : bi;
  }
  *val = b;
  return bi;
}

template <typename T>
static void run_arg(const Plan& pl, const char* in, char* vout, char* iout, int op, int fi) {
  const Dim r = pl.red[0];
  const int nk = (int)pl.kept.size();
  const int64_t vs = sizeof(T);
  // output strides in the plan are of the int64 result: the values' are scaled to T
  auto vo = [&](int64_t off) { return off / (int64_t)sizeof(int64_t) * vs; };
  if (r.in != vs && nk && pl.kept.back().in == vs) {  // column: a block of outputs scans rows
    const Dim inner = pl.kept.back();
    const int64_t ncb = (inner.size + kColBlock - 1) / kColBlock, tasks = pl.M / inner.size * ncb;
    ColArgFn colf = col_arg_stub[fi].get();
    parallel_for(0, tasks, std::max<int64_t>(1, kGrainSize / (r.size * std::min(inner.size, kColBlock))),
                 [&](int64_t b, int64_t e) {
      std::vector<T> best(kColBlock);
      std::vector<int64_t> idx(kColBlock);
      for (int64_t t = b; t < e; ++t) {
        const int64_t c0 = (t % ncb) * kColBlock, n = std::min(kColBlock, inner.size - c0);
        Counter kc(pl.kept.data(), nk - 1, t / ncb);
        const char* base = in + kc.in + c0 * inner.in;
        std::memcpy(best.data(), base, n * vs);
        std::fill_n(idx.data(), n, 0);
        for (int64_t i = 1; i < r.size; ++i) colf(best.data(), idx.data(), base + i * r.in, n, i, op);
        const int64_t oo = kc.out + c0 * inner.out;
        for (int64_t j = 0; j < n; ++j) {
          *reinterpret_cast<int64_t*>(iout + oo + j * inner.out) = idx[j];
          if (vout) *reinterpret_cast<T*>(vout + vo(oo + j * inner.out)) = best[j];
        }
      }
    });
    return;
  }
  if (r.size > 1 && r.size < kShort && pl.M >= kOutBlock) {
    ColArgFn colf = col_arg_stub[fi].get();
    short_blocks<T>(pl, in, [&](const char* const* rows, int64_t n, int64_t m, const int64_t* outs) {
      T best[kOutBlock];
      int64_t idx[kOutBlock] = {};
      std::memcpy(best, rows[0], m * sizeof(T));
      for (int64_t i = 1; i < n; ++i) colf(best, idx, rows[i], m, i, op);
      for (int64_t j = 0; j < m; ++j) {
        *reinterpret_cast<int64_t*>(iout + outs[j]) = idx[j];
        if (vout) *reinterpret_cast<T*>(vout + vo(outs[j])) = best[j];
      }
    });
    return;
  }
  RowArgFn row = row_arg_stub[fi].get();
  parallel_for(0, pl.M, std::max<int64_t>(1, kGrainSize / r.size), [&](int64_t b, int64_t e) {
    Counter kc(pl.kept.data(), nk, b);
    for (int64_t o = b; o < e; ++o, kc.next()) {
      T v;
      *reinterpret_cast<int64_t*>(iout + kc.out) = row_arg<T>(in + kc.in, r.size, r.in, op, row, &v);
      if (vout) *reinterpret_cast<T*>(vout + vo(kc.out)) = v;
    }
  });
}

// arg_reduce(op, with_values, a, dim, keepdim): argmax/argmin (indices) or max_dim/min_dim (values, indices)
static TT_ENTRY(py_arg_reduce) {
  int op;
  bool with_values, keepdim;
  PyArrayObject* a;
  int64_t dim;
  TT_ARGS(op, with_values, a, dim, keepdim);
  const int fi = loop_index(a);
  const int nd = PyArray_NDIM(a);
  if (fi < 0 || (op != RED_MAX && op != RED_MIN) || nd == 0 || nd > kMaxDims) return not_implemented();
  if (dim < -nd || dim >= nd) return not_implemented();
  dim = (dim + nd) % nd;
  if (PyArray_DIM(a, dim) == 0) return not_implemented();  // no extreme: the NumPy kernel raises
  bool red[kMaxDims + 1] = {};
  red[dim] = true;
  std::vector<npy_intp> os = out_shape(a, red, keepdim);
  PyArrayObject* iout = empty((int)os.size(), os.data(), NPY_INT64);
  PyArrayObject* vout = with_values && iout ? empty((int)os.size(), os.data(), PyArray_TYPE(a)) : nullptr;
  if (!iout || (with_values && !vout)) {
    Py_XDECREF(iout);
    return nullptr;
  }
  if (PyArray_SIZE(iout)) {
    Plan pl = make_plan(a, red, (int)sizeof(int64_t));
    pl.red.clear();  // the reduced dim stays even when its size is 1
    pl.red.push_back({PyArray_DIM(a, dim), PyArray_STRIDE(a, dim), 0, true});
    pl.N = PyArray_DIM(a, dim);
    const char* in = PyArray_BYTES(a);
    char* vo = vout ? PyArray_BYTES(vout) : nullptr;
    char* io = PyArray_BYTES(iout);
    const DType dt = dtype_of(a);  // read with the GIL held
    run_released(PyArray_SIZE(a), [&] {
      TT_DISPATCH_FLOATING_TYPES(dt, "arg_reduce",
                                 [&] { run_arg<scalar_t>(pl, in, vo, io, op, kLoopIndex<scalar_t>); });
    });
  }
  if (!with_values) return reinterpret_cast<PyObject*>(iout);
  return Py_BuildValue("(NN)", vout, iout);
}

}  // namespace

TT_EXPORT_OP_CODES(REDUCE_OPS, kReduceOpNames, RED_COUNT);

PyMethodDef reduce_methods[] = {
    TT_METHOD("reduce", py_reduce, "reduce(op, a, dims, keepdim)"),
    TT_METHOD("arg_reduce", py_arg_reduce, "arg_reduce(op, with_values, a, dim, keepdim)"),
    {nullptr, nullptr, 0, nullptr}};

}  // namespace tt
