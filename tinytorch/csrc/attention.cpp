// Fused scaled-dot-product attention on the CPU: softmax(q k^T * scale + mask) v without materialising the
// (L, S) score matrix, forward and backward, after FlashAttention-2 (Dao 2023, "FlashAttention-2: Faster
// Attention with Better Parallelism and Work Partitioning", algorithms 1 and 2).
//
// Shapes: q (B, H, L, E), k (B, Hk, S, E), v (B, Hk, S, Ev), H a multiple of Hk (grouped-query attention: query
// head h reads key/value head h / (H / Hk), no copy). The optional mask is read through its strides (a broadcast
// mask has stride 0 where it repeats): bool (true = attend) or additive, of the query's dtype. is_causal masks
// key j > query i (top-left aligned, as PyTorch). A row whose every key is masked gives 0 and a zero gradient, as
// PyTorch's math path (its _safe_softmax); its logsumexp is -inf.
//
// Forward: for each block of query rows, a running row max m, running sum l and an unnormalised output
// accumulator are updated block of keys by block of keys (the online softmax); the result is acc / l and the
// per-row logsumexp m + log(l), saved for the backward. Backward: the probabilities are recomputed tile by tile as
// exp(s - lse); with D = rowsum(dO * O): dV += P^T dO, dP = dO V^T, dS = P (dP - D), dQ += scale dS K,
// dK += scale dS^T Q (and dS itself is the gradient of an additive mask, when asked for).
//
// Threads: the forward runs (batch, head, query block) tiles on the pool; the backward runs (batch, key/value
// head) on the pool, each thread owning the dK / dV of its key/value head (no atomics). The tile products are
// single-threaded BLAS calls (the BLAS NumPy links, blas.h) or plain loops when none was found.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "blas.h"
#include "common.h"
#include "parallel.h"

namespace tt {
namespace {

constexpr int64_t kBlockQ = 64;  // query rows per tile
constexpr int64_t kBlockK = 64;  // key rows per tile: a 64 x 64 score tile (16 KiB in float32) stays in L1/L2

// C (m x n, ldc) = alpha * op(A) op(B) + beta * C, op(X) = X or X^T, row-major: the BLAS when there is one.
template <typename T>
void tile_mm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
             int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k > 0 && blas_available()) {
    gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  for (int64_t i = 0; i < m; ++i) {
    T* ci = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) {
      T s = T(0);
      for (int64_t p = 0; p < k; ++p) s += (ta ? a[p * lda + i] : a[i * lda + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]);
      ci[j] = alpha * s + (beta == T(0) ? T(0) : beta * ci[j]);
    }
  }
}

// One 4-D operand: element pointer and element strides of its (batch, head, row) dims; columns contiguous.
template <typename T>
struct Mat4 {
  const T* p;
  int64_t sb, sh, sr;
  const T* at(int64_t b, int64_t h) const { return p + b * sb + h * sh; }
};

template <typename T>
Mat4<T> mat4(PyArrayObject* a) {
  const npy_intp* st = PyArray_STRIDES(a);
  const npy_intp* d = PyArray_DIMS(a);
  const int64_t item = sizeof(T);
  // a dim of size 1 may carry any stride: its row stride is the row length, which BLAS accepts as leading dim
  int64_t sr = d[2] <= 1 ? std::max<int64_t>(d[3], 1) : st[2] / item;
  return {reinterpret_cast<const T*>(PyArray_BYTES(a)), st[0] / item, st[1] / item, sr};
}

// The mask as the kernel reads it: kind 0 none, 1 bool (true = attend), 2 additive; byte strides of (B, H, L, S).
struct Mask {
  int kind = 0;
  const char* p = nullptr;
  int64_t sb = 0, sh = 0, sl = 0, ss = 0;
};

struct Problem {
  int64_t B, H, Hk, L, S, E, Ev;
  bool causal;
  double scale;
  Mask mask;
};

// Scores of one (br x bc) tile, already scale * q k^T in s (row stride bc), masked in place: -inf where the
// causal mask or a bool mask hides the key, the additive mask added otherwise.
template <typename T>
void mask_tile(const Problem& pr, int64_t b, int64_t h, int64_t i0, int64_t j0, int64_t br, int64_t bc, T* s) {
  const T ninf = -std::numeric_limits<T>::infinity();
  const Mask& m = pr.mask;
  for (int64_t r = 0; r < br; ++r) {
    T* sr = s + r * bc;
    const int64_t i = i0 + r;
    if (m.kind != 0) {
      const char* mr = m.p + b * m.sb + h * m.sh + i * m.sl + j0 * m.ss;
      if (m.kind == 1) {
        for (int64_t c = 0; c < bc; ++c)
          if (!*reinterpret_cast<const npy_bool*>(mr + c * m.ss)) sr[c] = ninf;
      } else {
        for (int64_t c = 0; c < bc; ++c) sr[c] += *reinterpret_cast<const T*>(mr + c * m.ss);
      }
    }
    if (pr.causal)
      for (int64_t c = std::max<int64_t>(0, i + 1 - j0); c < bc; ++c) sr[c] = ninf;
  }
}

// keys a block of queries starting at i0 (br rows) can see: all, or up to the last row's position when causal
inline int64_t key_end(const Problem& pr, int64_t i0, int64_t br) {
  return pr.causal ? std::min(pr.S, i0 + br) : pr.S;
}

template <typename T>
void forward(const Problem& pr, const Mat4<T>& q, const Mat4<T>& k, const Mat4<T>& v, T* out, T* lse) {
  const int64_t nqb = (pr.L + kBlockQ - 1) / kBlockQ;
  const int64_t group = pr.Hk > 0 ? pr.H / pr.Hk : 1;
  const T ninf = -std::numeric_limits<T>::infinity();
  parallel_for(0, pr.B * pr.H * nqb, 1, [&](int64_t t0, int64_t t1) {
    std::vector<T> s(kBlockQ * kBlockK), acc(kBlockQ * pr.Ev), m(kBlockQ), l(kBlockQ);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t bh = t / nqb, i0 = (t % nqb) * kBlockQ;
      const int64_t b = bh / pr.H, h = bh % pr.H, hk = h / group;
      const int64_t br = std::min(kBlockQ, pr.L - i0);
      const T* Q = q.at(b, h) + i0 * q.sr;
      const T* K = k.at(b, hk);
      const T* V = v.at(b, hk);
      std::fill(m.begin(), m.begin() + br, ninf);
      std::fill(l.begin(), l.begin() + br, T(0));
      std::fill(acc.begin(), acc.begin() + br * pr.Ev, T(0));
      const int64_t jend = key_end(pr, i0, br);
      for (int64_t j0 = 0; j0 < jend; j0 += kBlockK) {
        const int64_t bc = std::min(kBlockK, jend - j0);
        tile_mm<T>(false, true, br, bc, pr.E, T(pr.scale), Q, q.sr, K + j0 * k.sr, k.sr, T(0), s.data(), bc);
        mask_tile<T>(pr, b, h, i0, j0, br, bc, s.data());
        for (int64_t r = 0; r < br; ++r) {
          T* sr = s.data() + r * bc;
          T mx = m[r];
          for (int64_t c = 0; c < bc; ++c)
            if (sr[c] > mx || sr[c] != sr[c]) mx = sr[c];  // NaN wins, so that it reaches the output
          if (mx == ninf) {  // nothing visible yet in this row: weights 0 (0 * a NaN of v is still NaN)
            std::fill(sr, sr + bc, T(0));
            continue;
          }
          const T alpha = std::exp(m[r] - mx);  // 0 on the row's first visible tile (m = -inf)
          T sum = T(0);
          for (int64_t c = 0; c < bc; ++c) {
            sr[c] = std::exp(sr[c] - mx);
            sum += sr[c];
          }
          l[r] = l[r] * alpha + sum;
          m[r] = mx;
          if (alpha != T(1)) {
            T* ar = acc.data() + r * pr.Ev;
            for (int64_t e = 0; e < pr.Ev; ++e) ar[e] *= alpha;
          }
        }
        tile_mm<T>(false, false, br, pr.Ev, bc, T(1), s.data(), bc, V + j0 * v.sr, v.sr, T(1), acc.data(), pr.Ev);
      }
      T* O = out + (bh * pr.L + i0) * pr.Ev;
      T* LSE = lse + bh * pr.L + i0;
      for (int64_t r = 0; r < br; ++r) {
        const T* ar = acc.data() + r * pr.Ev;
        T* orow = O + r * pr.Ev;
        if (l[r] == T(0) && m[r] == ninf) {
          // every key masked: weights 0, as PyTorch's _safe_softmax; the output is still 0 @ v, NaN in a column
          // where v holds a NaN (as PyTorch's), which the accumulator holds
          std::copy(ar, ar + pr.Ev, orow);
          LSE[r] = ninf;
          continue;
        }
        const T inv = T(1) / l[r];
        for (int64_t e = 0; e < pr.Ev; ++e) orow[e] = ar[e] * inv;
        LSE[r] = m[r] + std::log(l[r]);
      }
    }
  });
}

template <typename T>
void backward(const Problem& pr, const Mat4<T>& g, const Mat4<T>& q, const Mat4<T>& k, const Mat4<T>& v,
              const Mat4<T>& o, const T* lse, T* dq, T* dk, T* dv, T* dmask) {
  const int64_t group = pr.Hk > 0 ? pr.H / pr.Hk : 1;
  const T ninf = -std::numeric_limits<T>::infinity();
  const T scale = T(pr.scale);
  parallel_for(0, pr.B * pr.Hk, 1, [&](int64_t t0, int64_t t1) {
    std::vector<T> p(kBlockQ * kBlockK), dp(kBlockQ * kBlockK), dsum(kBlockQ);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t b = t / pr.Hk, hk = t % pr.Hk;
      const T* K = k.at(b, hk);
      const T* V = v.at(b, hk);
      T* dK = dk + t * pr.S * pr.E;
      T* dV = dv + t * pr.S * pr.Ev;
      for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {
        const int64_t bh = b * pr.H + h;
        for (int64_t i0 = 0; i0 < pr.L; i0 += kBlockQ) {
          const int64_t br = std::min(kBlockQ, pr.L - i0);
          const T* Q = q.at(b, h) + i0 * q.sr;
          const T* G = g.at(b, h) + i0 * g.sr;
          const T* O = o.at(b, h) + i0 * o.sr;
          const T* LSE = lse + bh * pr.L + i0;
          T* dQ = dq + (bh * pr.L + i0) * pr.E;
          for (int64_t r = 0; r < br; ++r) {
            T d = T(0);
            for (int64_t e = 0; e < pr.Ev; ++e) d += G[r * g.sr + e] * O[r * o.sr + e];
            dsum[r] = d;
          }
          const int64_t jend = key_end(pr, i0, br);
          for (int64_t j0 = 0; j0 < jend; j0 += kBlockK) {
            const int64_t bc = std::min(kBlockK, jend - j0);
            tile_mm<T>(false, true, br, bc, pr.E, scale, Q, q.sr, K + j0 * k.sr, k.sr, T(0), p.data(), bc);
            mask_tile<T>(pr, b, h, i0, j0, br, bc, p.data());
            for (int64_t r = 0; r < br; ++r) {
              T* pr_ = p.data() + r * bc;
              if (LSE[r] == ninf) {  // a row with every key masked took no part in the output
                std::fill(pr_, pr_ + bc, T(0));
                continue;
              }
              for (int64_t c = 0; c < bc; ++c) pr_[c] = std::exp(pr_[c] - LSE[r]);
            }
            tile_mm<T>(true, false, bc, pr.Ev, br, T(1), p.data(), bc, G, g.sr, T(1), dV + j0 * pr.Ev, pr.Ev);
            tile_mm<T>(false, true, br, bc, pr.Ev, T(1), G, g.sr, V + j0 * v.sr, v.sr, T(0), dp.data(), bc);
            for (int64_t r = 0; r < br; ++r) {
              const T* pr_ = p.data() + r * bc;
              T* ds = dp.data() + r * bc;
              if (LSE[r] == ninf) {  // no gradient through a fully masked row, even when v holds a NaN
                std::fill(ds, ds + bc, T(0));
                continue;
              }
              for (int64_t c = 0; c < bc; ++c) ds[c] = pr_[c] * (ds[c] - dsum[r]);
            }
            if (dmask) {
              T* dm = dmask + (bh * pr.L + i0) * pr.S + j0;
              for (int64_t r = 0; r < br; ++r) std::copy(dp.data() + r * bc, dp.data() + (r + 1) * bc, dm + r * pr.S);
            }
            tile_mm<T>(false, false, br, pr.E, bc, scale, dp.data(), bc, K + j0 * k.sr, k.sr, T(1), dQ, pr.E);
            tile_mm<T>(true, false, bc, pr.E, br, scale, dp.data(), bc, Q, q.sr, T(1), dK + j0 * pr.E, pr.E);
          }
        }
      }
    }
  });
}

// A float32/float64 4-D array whose last dim is contiguous and whose strides are whole elements (a new reference
// to it, or to a C-contiguous copy); nullptr with an exception set when it cannot be had.
PyArrayObject* operand(PyObject* o, int type) {
  if (!is_array(o) || PyArray_NDIM(arr(o)) != 4 || PyArray_TYPE(arr(o)) != type) {
    PyErr_SetString(PyExc_TypeError, "scaled_dot_product_attention kernel: expected 4-D arrays of one float dtype");
    return nullptr;
  }
  PyArrayObject* a = arr(o);
  const npy_intp item = PyArray_ITEMSIZE(a);
  const npy_intp* st = PyArray_STRIDES(a);
  const npy_intp* d = PyArray_DIMS(a);
  bool ok = PyArray_ISALIGNED(a) && PyArray_ISNOTSWAPPED(a) && (d[3] <= 1 || st[3] == item);
  for (int i = 0; i < 3 && ok; ++i) ok = st[i] % item == 0;
  // BLAS wants a leading dimension of at least the row length
  if (ok && d[2] > 1) ok = st[2] >= d[3] * item;
  if (ok) {
    Py_INCREF(a);
    return a;
  }
  return reinterpret_cast<PyArrayObject*>(PyArray_NewCopy(a, NPY_CORDER));
}

// Owns the new references taken while parsing.
struct Refs {
  std::vector<PyObject*> v;
  ~Refs() {
    for (PyObject* o : v) Py_XDECREF(o);
  }
  PyArrayObject* keep(PyArrayObject* a) {
    v.push_back(reinterpret_cast<PyObject*>(a));
    return a;
  }
};

bool parse_mask(PyObject* o, int type, const Problem& pr, Mask* m) {
  if (o == Py_None) return true;
  if (!is_array(o) || PyArray_NDIM(arr(o)) != 4) {
    PyErr_SetString(PyExc_TypeError, "scaled_dot_product_attention kernel: the mask must be None or a 4-D array");
    return false;
  }
  PyArrayObject* a = arr(o);
  const npy_intp* d = PyArray_DIMS(a);
  const int64_t want[4] = {pr.B, pr.H, pr.L, pr.S};
  for (int i = 0; i < 4; ++i)
    if (d[i] != want[i]) {
      PyErr_SetString(PyExc_ValueError, "scaled_dot_product_attention kernel: the mask must be (B, H, L, S)");
      return false;
    }
  if (PyArray_TYPE(a) == NPY_BOOL) m->kind = 1;
  else if (PyArray_TYPE(a) == type && PyArray_ISALIGNED(a) && PyArray_ISNOTSWAPPED(a)) m->kind = 2;
  else {
    PyErr_SetString(PyExc_TypeError, "scaled_dot_product_attention kernel: the mask must be bool or the query's dtype");
    return false;
  }
  const npy_intp* st = PyArray_STRIDES(a);
  m->p = PyArray_BYTES(a);
  m->sb = st[0], m->sh = st[1], m->sl = st[2], m->ss = st[3];
  return true;
}

bool parse_options(PyObject* causal, PyObject* scale, Problem* pr) {
  int c = PyObject_IsTrue(causal);
  if (c < 0) return false;
  pr->causal = c != 0;
  if (!as_double(scale, &pr->scale)) {
    PyErr_SetString(PyExc_TypeError, "scaled_dot_product_attention kernel: scale must be a number");
    return false;
  }
  return true;
}

bool check_geometry(PyArrayObject* q, PyArrayObject* k, PyArrayObject* v, Problem* pr) {
  const npy_intp *dq = PyArray_DIMS(q), *dk = PyArray_DIMS(k), *dv = PyArray_DIMS(v);
  pr->B = dq[0], pr->H = dq[1], pr->L = dq[2], pr->E = dq[3];
  pr->Hk = dk[1], pr->S = dk[2], pr->Ev = dv[3];
  bool ok = dk[0] == pr->B && dv[0] == pr->B && dv[1] == pr->Hk && dv[2] == pr->S && dk[3] == pr->E &&
            (pr->Hk == 0 ? pr->H == 0 : pr->H % pr->Hk == 0);
  if (!ok) PyErr_SetString(PyExc_ValueError, "scaled_dot_product_attention kernel: inconsistent q, k, v shapes");
  return ok;
}

bool release_gil(const Problem& pr) {
  return pr.B * pr.H * pr.L * std::max<int64_t>(pr.S, 1) * (pr.E + pr.Ev) >= kGrainSizeGIL;
}

// sdpa_forward(q, k, v, mask, is_causal, scale) -> (out (B, H, L, Ev), logsumexp (B, H, L)), both C-contiguous
PyObject* py_sdpa_forward(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 6) {
    PyErr_SetString(PyExc_TypeError, "sdpa_forward(q, k, v, mask, is_causal, scale)");
    return nullptr;
  }
  if (!is_array(args[0])) {
    PyErr_SetString(PyExc_TypeError, "sdpa_forward: q must be an array");
    return nullptr;
  }
  const int type = PyArray_TYPE(arr(args[0]));
  if (type != NPY_FLOAT32 && type != NPY_FLOAT64) {
    PyErr_SetString(PyExc_TypeError, "sdpa_forward: float32 or float64 only");
    return nullptr;
  }
  Refs refs;
  PyArrayObject* q = operand(args[0], type);
  if (!q) return nullptr;
  refs.keep(q);
  PyArrayObject* k = operand(args[1], type);
  if (!k) return nullptr;
  refs.keep(k);
  PyArrayObject* v = operand(args[2], type);
  if (!v) return nullptr;
  refs.keep(v);
  Problem pr{};
  if (!check_geometry(q, k, v, &pr) || !parse_mask(args[3], type, pr, &pr.mask) || !parse_options(args[4], args[5], &pr))
    return nullptr;
  npy_intp oshape[4] = {pr.B, pr.H, pr.L, pr.Ev}, lshape[3] = {pr.B, pr.H, pr.L};
  PyArrayObject* out = empty(4, oshape, type);
  if (!out) return nullptr;
  PyArrayObject* lse = empty(3, lshape, type);
  if (!lse) {
    Py_DECREF(out);
    return nullptr;
  }
  PyThreadState* ts = release_gil(pr) ? PyEval_SaveThread() : nullptr;
  if (type == NPY_FLOAT32)
    forward<float>(pr, mat4<float>(q), mat4<float>(k), mat4<float>(v), reinterpret_cast<float*>(PyArray_BYTES(out)),
                   reinterpret_cast<float*>(PyArray_BYTES(lse)));
  else
    forward<double>(pr, mat4<double>(q), mat4<double>(k), mat4<double>(v),
                    reinterpret_cast<double*>(PyArray_BYTES(out)), reinterpret_cast<double*>(PyArray_BYTES(lse)));
  if (ts) PyEval_RestoreThread(ts);
  return Py_BuildValue("(NN)", out, lse);
}

// sdpa_backward(grad_out, q, k, v, out, logsumexp, mask, is_causal, scale, grad_mask)
//   -> (dq, dk, dv) or, with grad_mask, (dq, dk, dv, dmask (B, H, L, S)): the gradient of an additive mask
PyObject* py_sdpa_backward(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 10) {
    PyErr_SetString(PyExc_TypeError, "sdpa_backward(grad_out, q, k, v, out, logsumexp, mask, is_causal, scale, "
                                     "grad_mask)");
    return nullptr;
  }
  if (!is_array(args[1])) {
    PyErr_SetString(PyExc_TypeError, "sdpa_backward: q must be an array");
    return nullptr;
  }
  const int type = PyArray_TYPE(arr(args[1]));
  if (type != NPY_FLOAT32 && type != NPY_FLOAT64) {
    PyErr_SetString(PyExc_TypeError, "sdpa_backward: float32 or float64 only");
    return nullptr;
  }
  Refs refs;
  PyArrayObject* ops[5];
  for (int i = 0; i < 5; ++i) {
    ops[i] = operand(args[i], type);
    if (!ops[i]) return nullptr;
    refs.keep(ops[i]);
  }
  PyArrayObject *g = ops[0], *q = ops[1], *k = ops[2], *v = ops[3], *o = ops[4];
  Problem pr{};
  if (!check_geometry(q, k, v, &pr) || !parse_mask(args[6], type, pr, &pr.mask) || !parse_options(args[7], args[8], &pr))
    return nullptr;
  int grad_mask = PyObject_IsTrue(args[9]);
  if (grad_mask < 0) return nullptr;
  const npy_intp* dg = PyArray_DIMS(g);
  const npy_intp* dout = PyArray_DIMS(o);
  bool ok = true;
  for (int i = 0; i < 4; ++i) {
    const int64_t want = i == 0 ? pr.B : i == 1 ? pr.H : i == 2 ? pr.L : pr.Ev;
    ok = ok && dg[i] == want && dout[i] == want;
  }
  PyObject* lo = args[5];
  ok = ok && is_array(lo) && PyArray_TYPE(arr(lo)) == type && PyArray_NDIM(arr(lo)) == 3;
  PyArrayObject* lse = nullptr;
  if (ok) {
    lse = reinterpret_cast<PyArrayObject*>(PyArray_FROMANY(lo, type, 3, 3, NPY_ARRAY_CARRAY_RO));
    if (!lse) return nullptr;
    refs.keep(lse);
    const npy_intp* dl = PyArray_DIMS(lse);
    ok = dl[0] == pr.B && dl[1] == pr.H && dl[2] == pr.L;
  }
  if (!ok) {
    PyErr_SetString(PyExc_ValueError, "sdpa_backward: grad_out, out or logsumexp does not match q, k, v");
    return nullptr;
  }
  npy_intp sq[4] = {pr.B, pr.H, pr.L, pr.E}, sk[4] = {pr.B, pr.Hk, pr.S, pr.E}, sv[4] = {pr.B, pr.Hk, pr.S, pr.Ev};
  npy_intp sm[4] = {pr.B, pr.H, pr.L, pr.S};
  PyArrayObject* dq = reinterpret_cast<PyArrayObject*>(PyArray_ZEROS(4, sq, type, 0));
  PyArrayObject* dk = reinterpret_cast<PyArrayObject*>(PyArray_ZEROS(4, sk, type, 0));
  PyArrayObject* dv = reinterpret_cast<PyArrayObject*>(PyArray_ZEROS(4, sv, type, 0));
  PyArrayObject* dm = grad_mask ? reinterpret_cast<PyArrayObject*>(PyArray_ZEROS(4, sm, type, 0)) : nullptr;
  if (!dq || !dk || !dv || (grad_mask && !dm)) {
    Py_XDECREF(dq);
    Py_XDECREF(dk);
    Py_XDECREF(dv);
    Py_XDECREF(dm);
    return nullptr;
  }
  PyThreadState* ts = release_gil(pr) ? PyEval_SaveThread() : nullptr;
  if (type == NPY_FLOAT32) {
    auto F = [](PyArrayObject* a) { return reinterpret_cast<float*>(PyArray_BYTES(a)); };
    backward<float>(pr, mat4<float>(g), mat4<float>(q), mat4<float>(k), mat4<float>(v), mat4<float>(o), F(lse), F(dq),
                    F(dk), F(dv), dm ? F(dm) : nullptr);
  } else {
    auto D = [](PyArrayObject* a) { return reinterpret_cast<double*>(PyArray_BYTES(a)); };
    backward<double>(pr, mat4<double>(g), mat4<double>(q), mat4<double>(k), mat4<double>(v), mat4<double>(o), D(lse),
                     D(dq), D(dk), D(dv), dm ? D(dm) : nullptr);
  }
  if (ts) PyEval_RestoreThread(ts);
  if (dm) return Py_BuildValue("(NNNN)", dq, dk, dv, dm);
  return Py_BuildValue("(NNN)", dq, dk, dv);
}

}  // namespace

PyMethodDef attention_methods[] = {
    {"sdpa_forward", (PyCFunction)(void (*)(void))py_sdpa_forward, METH_FASTCALL,
     "fused attention: (out, logsumexp) of q (B, H, L, E), k (B, Hk, S, E), v (B, Hk, S, Ev)"},
    {"sdpa_backward", (PyCFunction)(void (*)(void))py_sdpa_backward, METH_FASTCALL,
     "fused attention's gradients (dq, dk, dv[, dmask]) from the saved logsumexp"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace tt
