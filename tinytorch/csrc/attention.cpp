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
// head) on the pool, each thread owning the dK / dV of its key/value head (no atomics). The tiles themselves
// (kernels/attention.inc, one copy per CPU capability) run their products through a register-blocked
// microkernel: a BLAS call per 64 x 64 tile costs more in packing and dispatch than the arithmetic it does.
#include <algorithm>
#include <vector>

#include "attention_ops.h"
#include "common.h"
#include "kit.h"
#include "parallel.h"

namespace tt {

Stub<AttnForwardTiles> attn_forward_stub[2];
Stub<AttnBackwardItems> attn_backward_stub[2];

namespace {

// A 4-D array of `type` whose last dim is contiguous and whose strides are whole elements (a new reference to it,
// or to a C-contiguous copy); nullptr (a TypeError set) for anything else.
PyArrayObject* operand(PyArrayObject* a, int type) {
  if (PyArray_NDIM(a) != 4 || PyArray_TYPE(a) != type) {
    PyErr_SetString(PyExc_TypeError, "scaled_dot_product_attention kernel: expected 4-D arrays of one float dtype");
    return nullptr;
  }
  const npy_intp item = PyArray_ITEMSIZE(a);
  const npy_intp* st = PyArray_STRIDES(a);
  const npy_intp* d = PyArray_DIMS(a);
  bool ok = PyArray_ISALIGNED(a) && PyArray_ISNOTSWAPPED(a) && (d[3] <= 1 || st[3] == item);
  for (int i = 0; i < 3 && ok; ++i) ok = st[i] % item == 0;
  if (ok) {
    Py_INCREF(a);
    return a;
  }
  return reinterpret_cast<PyArrayObject*>(PyArray_NewCopy(a, NPY_CORDER));
}

AttnOperand view(PyArrayObject* a) {
  const npy_intp* st = PyArray_STRIDES(a);
  const npy_intp* d = PyArray_DIMS(a);
  const int64_t item = PyArray_ITEMSIZE(a);
  // a dim of size 1 may carry any stride: the row length then is as good as any
  const int64_t sr = d[2] <= 1 ? std::max<int64_t>(d[3], 1) : st[2] / item;
  return {PyArray_BYTES(a), st[0] / item, st[1] / item, sr};
}

bool parse_mask(PyObject* o, int type, AttnArgs* a) {
  if (o == Py_None) return true;
  if (!is_array(o) || PyArray_NDIM(arr(o)) != 4) {
    PyErr_SetString(PyExc_TypeError, "scaled_dot_product_attention kernel: the mask must be None or a 4-D array");
    return false;
  }
  PyArrayObject* m = arr(o);
  const npy_intp* d = PyArray_DIMS(m);
  const int64_t want[4] = {a->B, a->H, a->L, a->S};
  for (int i = 0; i < 4; ++i)
    if (d[i] != want[i]) {
      PyErr_SetString(PyExc_ValueError, "scaled_dot_product_attention kernel: the mask must be (B, H, L, S)");
      return false;
    }
  if (PyArray_TYPE(m) == NPY_BOOL) a->mask.kind = 1;
  else if (PyArray_TYPE(m) == type && PyArray_ISALIGNED(m) && PyArray_ISNOTSWAPPED(m)) a->mask.kind = 2;
  else {
    PyErr_SetString(PyExc_TypeError, "scaled_dot_product_attention kernel: the mask must be bool or the query's dtype");
    return false;
  }
  const npy_intp* st = PyArray_STRIDES(m);
  a->mask.p = PyArray_BYTES(m);
  a->mask.sb = st[0], a->mask.sh = st[1], a->mask.sl = st[2], a->mask.ss = st[3];
  return true;
}

bool check_geometry(PyArrayObject* q, PyArrayObject* k, PyArrayObject* v, AttnArgs* a) {
  const npy_intp *dq = PyArray_DIMS(q), *dk = PyArray_DIMS(k), *dv = PyArray_DIMS(v);
  a->B = dq[0], a->H = dq[1], a->L = dq[2], a->E = dq[3];
  a->Hk = dk[1], a->S = dk[2], a->Ev = dv[3];
  bool ok = dk[0] == a->B && dv[0] == a->B && dv[1] == a->Hk && dv[2] == a->S && dk[3] == a->E &&
            (a->Hk == 0 ? a->H == 0 : a->H % a->Hk == 0);
  if (!ok) PyErr_SetString(PyExc_ValueError, "scaled_dot_product_attention kernel: inconsistent q, k, v shapes");
  return ok;
}

// multiply-adds of the problem: what run_released weighs against the cost of the GIL
int64_t work(const AttnArgs& a) { return a.B * a.H * a.L * std::max<int64_t>(a.S, 1) * (a.E + a.Ev); }

// Runs fn(args, t0, t1, scratch) over [0, n) on the pool, one scratch buffer per chunk.
template <typename T, typename Fn>
void run_tiles(const AttnArgs& a, int64_t n, bool backward, Fn fn) {
  const int64_t elems = attn_scratch_elems(a, backward);
  parallel_for(0, n, 1, [&](int64_t t0, int64_t t1) {
    std::vector<T> scratch(elems);
    fn(a, t0, t1, scratch.data());
  });
}

// sdpa_forward(q, k, v, mask, is_causal, scale) -> (out (B, H, L, Ev), logsumexp (B, H, L)), both C-contiguous
TT_ENTRY(py_sdpa_forward) {
  PyArrayObject *q0 = nullptr, *k0 = nullptr, *v0 = nullptr;
  PyObject* mask = nullptr;
  bool causal = false;
  double scale = 1.0;
  TT_ARGS(q0, k0, v0, mask, causal, scale);
  if (loop_index(q0) < 0) return not_implemented();
  const int type = PyArray_TYPE(q0);
  Ref q(operand(q0, type)), k(q.p ? operand(k0, type) : nullptr), v(k.p ? operand(v0, type) : nullptr);
  if (!v.p) return nullptr;
  AttnArgs a;
  a.causal = causal, a.scale = scale;
  if (!check_geometry(q.p, k.p, v.p, &a) || !parse_mask(mask, type, &a)) return nullptr;
  a.q = view(q.p), a.k = view(k.p), a.v = view(v.p);
  npy_intp oshape[4] = {a.B, a.H, a.L, a.Ev}, lshape[3] = {a.B, a.H, a.L};
  Ref out(empty(4, oshape, type));
  if (!out.p) return nullptr;
  Ref lse(empty(3, lshape, type));
  if (!lse.p) return nullptr;
  a.out = PyArray_BYTES(out.p), a.lse = PyArray_BYTES(lse.p);
  const int64_t tiles = a.B * a.H * ((a.L + kAttnBlockQ - 1) / kAttnBlockQ);
  TT_DISPATCH_FLOATING_TYPES(dtype_of(q.p), "sdpa_forward", [&] {
    AttnForwardTiles fn = attn_forward_stub[kLoopIndex<scalar_t>].get();
    run_released(work(a), [&] { run_tiles<scalar_t>(a, tiles, false, fn); });
  });
  return Py_BuildValue("(NN)", out.release(), lse.release());
}

// sdpa_backward(grad_out, q, k, v, out, logsumexp, mask, is_causal, scale, grad_mask)
//   -> (dq, dk, dv) or, with grad_mask, (dq, dk, dv, dmask (B, H, L, S)): the gradient of an additive mask
TT_ENTRY(py_sdpa_backward) {
  PyArrayObject *g0 = nullptr, *q0 = nullptr, *k0 = nullptr, *v0 = nullptr, *o0 = nullptr, *l0 = nullptr;
  PyObject* mask = nullptr;
  bool causal = false, grad_mask = false;
  double scale = 1.0;
  TT_ARGS(g0, q0, k0, v0, o0, l0, mask, causal, scale, grad_mask);
  if (loop_index(q0) < 0) return not_implemented();
  const int type = PyArray_TYPE(q0);
  PyArrayObject* in[5] = {g0, q0, k0, v0, o0};
  Ref ops[5];
  for (int i = 0; i < 5; ++i) {
    ops[i].p = operand(in[i], type);
    if (!ops[i].p) return nullptr;
  }
  PyArrayObject *g = ops[0].p, *q = ops[1].p, *k = ops[2].p, *v = ops[3].p, *o = ops[4].p;
  AttnArgs a;
  a.causal = causal, a.scale = scale;
  if (!check_geometry(q, k, v, &a) || !parse_mask(mask, type, &a)) return nullptr;
  const npy_intp* dg = PyArray_DIMS(g);
  const npy_intp* dout = PyArray_DIMS(o);
  const int64_t want[4] = {a.B, a.H, a.L, a.Ev};
  bool ok = PyArray_TYPE(l0) == type && PyArray_NDIM(l0) == 3;
  for (int i = 0; i < 4; ++i) ok = ok && dg[i] == want[i] && dout[i] == want[i];
  Ref lse;
  if (ok) {
    lse.p = reinterpret_cast<PyArrayObject*>(
        PyArray_FROMANY(reinterpret_cast<PyObject*>(l0), type, 3, 3, NPY_ARRAY_CARRAY_RO));
    if (!lse.p) return nullptr;
    const npy_intp* dl = PyArray_DIMS(lse.p);
    ok = dl[0] == a.B && dl[1] == a.H && dl[2] == a.L;
  }
  if (!ok) {
    PyErr_SetString(PyExc_ValueError, "sdpa_backward: grad_out, out or logsumexp does not match q, k, v");
    return nullptr;
  }
  a.q = view(q), a.k = view(k), a.v = view(v), a.g = view(g), a.o = view(o);
  a.lse = PyArray_BYTES(lse.p);
  npy_intp sq[4] = {a.B, a.H, a.L, a.E}, sk[4] = {a.B, a.Hk, a.S, a.E}, sv[4] = {a.B, a.Hk, a.S, a.Ev};
  npy_intp sm[4] = {a.B, a.H, a.L, a.S};
  auto zeros = [&](const npy_intp* shape) { return reinterpret_cast<PyArrayObject*>(PyArray_ZEROS(4, shape, type, 0)); };
  Ref dq(zeros(sq)), dk(zeros(sk)), dv(zeros(sv)), dm(grad_mask ? zeros(sm) : nullptr);
  if (!dq.p || !dk.p || !dv.p || (grad_mask && !dm.p)) return nullptr;
  a.dq = PyArray_BYTES(dq.p), a.dk = PyArray_BYTES(dk.p), a.dv = PyArray_BYTES(dv.p);
  a.dmask = dm.p ? PyArray_BYTES(dm.p) : nullptr;
  TT_DISPATCH_FLOATING_TYPES(dtype_of(q), "sdpa_backward", [&] {
    AttnBackwardItems fn = attn_backward_stub[kLoopIndex<scalar_t>].get();
    run_released(work(a), [&] { run_tiles<scalar_t>(a, a.B * a.Hk, true, fn); });
  });
  if (dm.p) return Py_BuildValue("(NNNN)", dq.release(), dk.release(), dv.release(), dm.release());
  return Py_BuildValue("(NNN)", dq.release(), dk.release(), dv.release());
}

}  // namespace

PyMethodDef attention_methods[] = {
    TT_METHOD("sdpa_forward", py_sdpa_forward,
              "fused attention: (out, logsumexp) of q (B, H, L, E), k (B, Hk, S, E), v (B, Hk, S, Ev)"),
    TT_METHOD("sdpa_backward", py_sdpa_backward,
              "fused attention's gradients (dq, dk, dv[, dmask]) from the saved logsumexp"),
    {nullptr, nullptr, 0, nullptr}};

}  // namespace tt
