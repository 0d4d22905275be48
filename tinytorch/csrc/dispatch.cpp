// The common path of the op dispatcher in C (PyTorch keeps its dispatcher in C++ for the same reason: a few
// microseconds of Python per op is most of a small op's time).
//
// tinytorch/_dispatch.py's `dispatch` is the reference: every step is written there, in Python, and
// TINYTORCH_NATIVE=0 runs it. This function is the same steps for the call that most ops make: no out=, an op
// without the special flags (view, autocast policy, composite, mutating), dense tensors on one device, a kernel
// registered by the device's backend, no compiled-function recording, no profiler. It reads the same Op records
// (op.meta, op.refused, op.backward) and the same backend tables (backend.kernels, backend.wrap), calls the same
// Python helpers for the uncommon branches (_check_refused, _record, _raise_kernel_error), and hands every other
// call to the Python function unchanged, so there is one op path with one definition of each step.
//
// What C saves: the argument loop, the Tensor and Storage objects (allocated here, their __slots__ written at
// the offsets Python gave them) and the result's geometry from the cpu backend's NumPy array, without a Python
// frame for any of them.
#include "common.h"

#include <initializer_list>
#include <utility>

#include <frameobject.h>
#include <structmember.h>

namespace tt {
namespace {

// set by dispatch_setup
PyObject* g_python_dispatch = nullptr;  // _dispatch.dispatch as written in Python: the reference and the fallback
PyObject* g_module_dict = nullptr;      // _dispatch's globals: _observer is read from it at each call
PyTypeObject* g_tensor_type = nullptr;
PyTypeObject* g_storage_type = nullptr;
PyObject* g_dense_storage_types = nullptr;  // tuple of the Storage classes the fast path takes (not sparse)
PyTypeObject* g_numpy_backend_type = nullptr;
PyTypeObject* g_op_type = nullptr;
PyObject* g_grad_state = nullptr;  // _modes._state (thread-local grad mode)
PyObject* g_lazy_state = nullptr;  // _modes._lazy (compiled-function recording)
PyObject* g_autocast_state = nullptr;  // _modes._ac (thread-local autocast: .active, the device types with it on)
PyObject* g_check_refused = nullptr;
PyObject* g_record = nullptr;
PyObject* g_raise_kernel_error = nullptr;
PyObject* g_empty_kw = nullptr;
PyObject* g_wrap_contiguous = nullptr;  // _C.wrap_contiguous: the cpu backend's wrap for row-major results
PyObject* g_record_view = nullptr;
PyObject* g_same_meta = nullptr;  // pointwise's "same" meta (dispatch_same_meta): skipped for two like tensors
PyObject* g_none_pair = nullptr;  // (None, None): that meta's casts
// the autograd record step (_dispatch._record / OpNode.__init__) for one floating output
PyTypeObject* g_opnode_type = nullptr;
PyObject* g_node_counter = nullptr;   // Node._counter: [sequence number of the last node made]
PyObject* g_saved_hooks = nullptr;    // autograd.graph._hooks (.stack: active saved_tensors_hooks)
PyObject* g_edge_of = nullptr;
PyObject* g_kept = nullptr;
PyObject* g_no_inference_saved = nullptr;
PyObject* g_one = nullptr;
PyObject* g_zero = nullptr;

// interned attribute names
PyObject *s_grad_acc, *s_stack, *s_inference_seen, *s_output_nr, *s_save_inputs, *s_save_output, *s_base, *s_observer, *s_enabled, *s_inference, *s_active, *s_shape_only, *s_kernels, *s_native, *s_cast,
    *s_wrap, *s_np, *s_shape;

// __slots__ offsets (bytes into the instance) of Tensor, Storage and Op
struct {
  Py_ssize_t storage, shape, stride, offset, dtype, nat, requires_grad, grad_fn;
} T;
struct {
  Py_ssize_t buf, dtype, device, size, version, backend, inference;
} S;
struct {
  Py_ssize_t name, meta, backward, refused, special, view, autocast, mutates;
} O;
struct {
  Py_ssize_t next_edges, pre_hooks, seq, op, inputs, versions, kw, out, out_version, shapes, dtypes, outs, released,
      unpack;
} N;
struct {
  Py_ssize_t is_floating_point, is_complex;
} D;

Py_ssize_t slot_offset(PyTypeObject* type, const char* name) {
  PyObject* d = PyObject_GetAttrString(reinterpret_cast<PyObject*>(type), name);
  if (!d) return -1;
  if (Py_TYPE(d) != &PyMemberDescr_Type) {
    PyErr_Format(PyExc_TypeError, "dispatch_setup: %s.%s is not a __slots__ member", type->tp_name, name);
    Py_DECREF(d);
    return -1;
  }
  Py_ssize_t off = reinterpret_cast<PyMemberDescrObject*>(d)->d_member->offset;
  Py_DECREF(d);
  return off;
}

// Each named __slots__ member's offset into its field; false with the exception set when one is missing.
bool slot_offsets(PyTypeObject* type, std::initializer_list<std::pair<Py_ssize_t*, const char*>> fields) {
  for (const auto& f : fields)
    if ((*f.first = slot_offset(type, f.second)) < 0) return false;
  return true;
}

inline PyObject* slot(PyObject* o, Py_ssize_t off) { return *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(o) + off); }

// Stores a new reference (stolen) into a freshly allocated instance's empty slot.
inline void put(PyObject* o, Py_ssize_t off, PyObject* v) { *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(o) + off) = v; }
inline void put_new(PyObject* o, Py_ssize_t off, PyObject* v) {
  Py_INCREF(v);
  put(o, off, v);
}

bool truthy_attr(PyObject* obj, PyObject* name, int* out) {
  PyObject* v = PyObject_GetAttr(obj, name);
  if (!v) return false;
  *out = PyObject_IsTrue(v);
  Py_DECREF(v);
  return *out >= 0;
}

// A tracer or profiler (sys.settrace / sys.setprofile, cProfile, coverage) sees the Python dispatch's frames.
bool tracing() {
  PyThreadState* ts = PyThreadState_Get();
  return ts->c_profilefunc != nullptr || ts->c_tracefunc != nullptr;
}

// The Storage and Tensor of one kernel result (Tensor._from_native's steps). New reference or nullptr.
PyObject* from_native(PyObject* backend, PyObject* dev, PyObject* res, PyObject* dtype, PyObject* shape,
                      PyObject* inference) {
  PyObject* wrapped = nullptr;
  if (Py_TYPE(backend) == g_numpy_backend_type && g_wrap_contiguous) {
    PyObject* np_dtype = PyObject_GetAttr(dtype, s_np);
    if (!np_dtype) return nullptr;
    PyObject* a[2] = {res, np_dtype};
    wrapped = PyObject_Vectorcall(g_wrap_contiguous, a, 2, nullptr);
    Py_DECREF(np_dtype);
    if (!wrapped) return nullptr;
    if (wrapped == Py_None) Py_CLEAR(wrapped);
  }
  if (!wrapped) {
    wrapped = PyObject_CallMethodObjArgs(backend, s_wrap, res, dtype, nullptr);
    if (!wrapped) return nullptr;
  }
  if (!PyTuple_Check(wrapped) || PyTuple_GET_SIZE(wrapped) != 4) {
    Py_DECREF(wrapped);
    PyErr_SetString(PyExc_RuntimeError, "internal error: Backend.wrap must return (native, buffer, strides, offset)");
    return nullptr;
  }
  PyObject* nat = PyTuple_GET_ITEM(wrapped, 0);
  PyObject* buf = PyTuple_GET_ITEM(wrapped, 1);
  PyObject* stride = PyTuple_GET_ITEM(wrapped, 2);
  PyObject* off = PyTuple_GET_ITEM(wrapped, 3);

  // the shape: meta's, checked against the kernel's result; None (data-dependent) takes the result's
  PyObject* nat_shape = nullptr;
  if (PyArray_Check(nat)) {
    PyArrayObject* a = reinterpret_cast<PyArrayObject*>(nat);
    int nd = PyArray_NDIM(a);
    bool same = shape != Py_None && PyTuple_Check(shape) && PyTuple_GET_SIZE(shape) == nd;
    for (int d = 0; same && d < nd; ++d) {
      PyObject* s = PyTuple_GET_ITEM(shape, d);
      long long v = PyLong_Check(s) ? PyLong_AsLongLong(s) : -1;
      same = v == (long long)PyArray_DIM(a, d);
    }
    PyErr_Clear();
    if (!same) {
      nat_shape = PyTuple_New(nd);
      if (!nat_shape) { Py_DECREF(wrapped); return nullptr; }
      for (int d = 0; d < nd; ++d) PyTuple_SET_ITEM(nat_shape, d, PyLong_FromSsize_t(PyArray_DIM(a, d)));
    }
  } else {
    nat_shape = PyObject_GetAttr(nat, s_shape);
    if (!nat_shape) { Py_DECREF(wrapped); return nullptr; }
    if (shape != Py_None) {
      int eq = PyObject_RichCompareBool(nat_shape, shape, Py_EQ);
      if (eq < 0) { Py_DECREF(nat_shape); Py_DECREF(wrapped); return nullptr; }
      if (eq) Py_CLEAR(nat_shape);
    }
  }
  if (nat_shape) {
    if (shape != Py_None) {
      PyObject* got = PySequence_Tuple(nat_shape);
      if (got) PyErr_Format(PyExc_RuntimeError, "internal error: kernel returned shape %R, meta says %R", got, shape);
      Py_XDECREF(got);
      Py_DECREF(nat_shape);
      Py_DECREF(wrapped);
      return nullptr;
    }
    PyObject* t = PySequence_Tuple(nat_shape);
    Py_DECREF(nat_shape);
    if (!t) { Py_DECREF(wrapped); return nullptr; }
    nat_shape = t;  // owned: the tensor's shape
  }
  PyObject* the_shape = nat_shape ? nat_shape : shape;
  Py_ssize_t numel = 1;
  for (Py_ssize_t d = 0; d < PyTuple_GET_SIZE(the_shape); ++d) numel *= PyLong_AsSsize_t(PyTuple_GET_ITEM(the_shape, d));

  PyObject* size = PyLong_FromSsize_t(numel);
  PyObject* version = PyList_New(1);
  PyObject* st = g_storage_type->tp_alloc(g_storage_type, 0);
  PyObject* t = g_tensor_type->tp_alloc(g_tensor_type, 0);
  if (!size || !version || !st || !t) {
    Py_XDECREF(size); Py_XDECREF(version); Py_XDECREF(st); Py_XDECREF(t); Py_XDECREF(nat_shape);
    Py_DECREF(wrapped);
    return nullptr;
  }
  PyObject* zero = PyLong_FromLong(0);
  PyList_SET_ITEM(version, 0, zero);
  put_new(st, S.buf, buf);
  put_new(st, S.dtype, dtype);
  put_new(st, S.device, dev);
  put(st, S.size, size);
  put(st, S.version, version);
  put_new(st, S.backend, backend);
  put_new(st, S.inference, inference);

  put(t, T.storage, st);
  if (nat_shape) put(t, T.shape, nat_shape);
  else put_new(t, T.shape, shape);
  put_new(t, T.stride, stride);
  put_new(t, T.offset, off);
  put_new(t, T.dtype, dtype);
  put_new(t, T.nat, nat);
  put_new(t, T.requires_grad, Py_False);
  put_new(t, T.grad_fn, Py_None);
  Py_DECREF(wrapped);
  return t;
}

// A new Tensor object over t's memory with no autograd history (Tensor._alias).
PyObject* alias(PyObject* t) {
  PyObject* a = g_tensor_type->tp_alloc(g_tensor_type, 0);
  if (!a) return nullptr;
  const Py_ssize_t offs[] = {T.storage, T.shape, T.stride, T.offset, T.dtype, T.nat};
  for (Py_ssize_t off : offs) {
    PyObject* v = slot(t, off);
    put_new(a, off, v ? v : Py_None);
  }
  put_new(a, T.requires_grad, Py_False);
  put_new(a, T.grad_fn, Py_None);
  return a;
}

PyObject* version_of(PyObject* t) {  // t._storage._version[0], a new reference
  PyObject* v = slot(slot(t, T.storage), S.version);
  if (!v || !PyList_Check(v) || PyList_GET_SIZE(v) < 1) return PyLong_FromLong(0);
  PyObject* n = PyList_GET_ITEM(v, 0);
  Py_INCREF(n);
  return n;
}

// _dispatch._kept for a tuple spec (entries: a position, or (position, needers)): the saved arguments, None at the
// tensor positions not kept for this call. nullptr with no exception: a spec only the Python _kept reads.
PyObject* kept(PyObject* values, PyObject* spec, PyObject* edges) {
  if (!PyTuple_Check(spec)) return nullptr;
  Py_ssize_t n = PyTuple_GET_SIZE(values);
  uint64_t keep = 0;
  for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(spec); ++k) {
    PyObject* e = PyTuple_GET_ITEM(spec, k);
    if (PyLong_CheckExact(e)) {
      long pos = PyLong_AsLong(e);
      if (pos < 0 || pos >= 64) return PyErr_Clear(), nullptr;
      keep |= uint64_t(1) << pos;
      continue;
    }
    if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != 2 || !PyLong_CheckExact(PyTuple_GET_ITEM(e, 0)) ||
        !PyTuple_Check(PyTuple_GET_ITEM(e, 1)))
      return nullptr;
    long pos = PyLong_AsLong(PyTuple_GET_ITEM(e, 0));
    if (pos < 0 || pos >= 64) return PyErr_Clear(), nullptr;
    PyObject* needers = PyTuple_GET_ITEM(e, 1);
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(needers); ++j) {
      PyObject* jj = PyTuple_GET_ITEM(needers, j);
      if (!PyLong_CheckExact(jj)) return nullptr;
      long q = PyLong_AsLong(jj);
      if (q >= 0 && q < PyTuple_GET_SIZE(edges) && PyTuple_GET_ITEM(edges, q) != Py_None) {
        keep |= uint64_t(1) << pos;
        break;
      }
    }
  }
  PyObject* out = PyTuple_New(n);
  if (!out) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* v = PyTuple_GET_ITEM(values, i);
    if (i < 64 && !(keep >> i & 1) && PyObject_TypeCheck(v, g_tensor_type)) v = Py_None;
    Py_INCREF(v);
    PyTuple_SET_ITEM(out, i, v);
  }
  return out;
}

// _dispatch._record for the common call: one floating (not complex) output, real inputs, no saved-tensor hooks.
// Returns 1 done, 0 when the Python _record must do it, -1 on error.
int record(PyObject* op, PyObject* args, PyObject* kw, PyObject* result, PyObject* outs) {
  if (!PyObject_TypeCheck(result, g_tensor_type)) return 0;
  PyObject* dt = slot(result, T.dtype);
  if (!dt || slot(dt, D.is_complex) != Py_False) return 0;
  if (slot(dt, D.is_floating_point) != Py_True) return 1;  // integer and bool outputs get no node
  PyObject* stack = PyObject_GetAttr(g_saved_hooks, s_stack);
  if (!stack) return -1;
  int hooks = PyObject_IsTrue(stack);
  Py_DECREF(stack);
  if (hooks) return hooks < 0 ? -1 : 0;
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* a = PyTuple_GET_ITEM(args, i);
    if (PyObject_TypeCheck(a, g_tensor_type) && slot(a, T.requires_grad) == Py_True &&
        slot(slot(a, T.dtype), D.is_complex) != Py_False)
      return 0;
  }
  PyObject* edges = PyTuple_New(n);
  if (!edges) return -1;
  bool needed = false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* a = PyTuple_GET_ITEM(args, i);
    PyObject* e = nullptr;
    if (PyObject_TypeCheck(a, g_tensor_type) && slot(a, T.requires_grad) == Py_True) {
      needed = true;
      PyObject* fn = slot(a, T.grad_fn);
      if (fn && fn != Py_None) {
        PyObject* nr = PyObject_GetAttr(a, s_output_nr);
        e = nr ? PyTuple_Pack(2, fn, nr) : nullptr;
        Py_XDECREF(nr);
      } else {
        // a leaf: its AccumulateGrad node, cached behind a weak reference (engine._grad_acc); made by edge_of
        PyObject* ref = PyObject_GetAttr(a, s_grad_acc);
        PyObject* acc = ref && PyWeakref_CheckRef(ref) ? PyWeakref_GetObject(ref) : nullptr;
        if (acc && acc != Py_None) e = PyTuple_Pack(2, acc, g_zero);
        else if (ref || PyErr_ExceptionMatches(PyExc_AttributeError)) {
          PyErr_Clear();
          e = PyObject_Vectorcall(g_edge_of, &a, 1, nullptr);
        }
        Py_XDECREF(ref);
      }
      if (!e) {
        Py_DECREF(edges);
        return -1;
      }
    } else {
      e = Py_None;
      Py_INCREF(e);
    }
    PyTuple_SET_ITEM(edges, i, e);
  }
  if (!needed) {
    Py_DECREF(edges);
    return 1;
  }
  PyObject* node = g_opnode_type->tp_alloc(g_opnode_type, 0);
  PyObject* shapes = PyList_New(n);
  PyObject* dtypes = PyList_New(n);
  if (!node || !shapes || !dtypes) {
    Py_XDECREF(node); Py_XDECREF(shapes); Py_XDECREF(dtypes); Py_DECREF(edges);
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* a = PyTuple_GET_ITEM(args, i);
    bool is_t = PyObject_TypeCheck(a, g_tensor_type);
    PyObject* sh = is_t ? slot(a, T.shape) : Py_None;
    PyObject* d = is_t ? slot(a, T.dtype) : Py_None;
    Py_INCREF(sh);
    Py_INCREF(d);
    PyList_SET_ITEM(shapes, i, sh);
    PyList_SET_ITEM(dtypes, i, d);
  }
  // Node.__init__: the sequence number orders ready nodes in the engine (the newest first, as PyTorch)
  PyObject* count = PyList_GET_ITEM(g_node_counter, 0);
  PyObject* next = PyNumber_Add(count, g_one);
  if (!next) { Py_DECREF(node); Py_DECREF(shapes); Py_DECREF(dtypes); Py_DECREF(edges); return -1; }
  PyList_SetItem(g_node_counter, 0, next);  // steals next
  Py_INCREF(next);
  put(node, N.seq, next);
  put(node, N.next_edges, edges);
  put_new(node, N.pre_hooks, Py_None);
  put_new(node, N.op, op);
  put_new(node, N.kw, kw);
  put_new(node, N.outs, outs);
  put_new(node, N.released, Py_False);
  put(node, N.shapes, shapes);
  put(node, N.dtypes, dtypes);
  put_new(node, N.unpack, Py_None);
  // what the node saves (Op.save_inputs / save_output)
  PyObject* si = PyObject_GetAttr(op, s_save_inputs);
  PyObject* so = si ? PyObject_GetAttr(op, s_save_output) : nullptr;
  int ok = so ? 0 : -1;
  if (!ok) {
    int keep_in = PyObject_IsTrue(si);
    if (keep_in < 0) ok = -1;
    else if (keep_in) {
      PyObject* saved = args;
      Py_INCREF(saved);
      if (si != Py_True) {
        Py_DECREF(saved);
        saved = kept(args, si, edges);
        if (!saved && !PyErr_Occurred()) {
          PyObject* a[4] = {args, si, edges, kw};
          saved = PyObject_Vectorcall(g_kept, a, 4, nullptr);
        }
      }
      PyObject* versions = saved ? PyList_New(PyTuple_GET_SIZE(saved)) : nullptr;
      if (!versions) ok = -1;
      for (Py_ssize_t i = 0; versions && i < PyTuple_GET_SIZE(saved); ++i) {
        PyObject* a = PyTuple_GET_ITEM(saved, i);
        PyList_SET_ITEM(versions, i, PyObject_TypeCheck(a, g_tensor_type) ? version_of(a) : PyLong_FromLong(0));
      }
      if (saved) put(node, N.inputs, saved);
      if (versions) put(node, N.versions, versions);
      if (!ok) {
        PyObject* seen = PyObject_GetAttr(g_grad_state, s_inference_seen);
        int any = seen ? PyObject_IsTrue(seen) : -1;
        Py_XDECREF(seen);
        if (any < 0) ok = -1;
        else if (any) {
          PyObject* r = PyObject_Vectorcall(g_no_inference_saved, &saved, 1, nullptr);
          if (!r) ok = -1;
          Py_XDECREF(r);
        }
      }
    } else {
      put_new(node, N.inputs, Py_None);
    }
    if (!ok) {
      int keep_out = PyObject_IsTrue(so);
      if (keep_out < 0) ok = -1;
      else if (keep_out) {
        PyObject* o = alias(result);
        PyObject* v = o ? version_of(result) : nullptr;
        if (!o || !v) { Py_XDECREF(o); ok = -1; }
        else {
          put(node, N.out, o);
          put(node, N.out_version, v);
        }
      } else {
        put_new(node, N.out, Py_None);
      }
    }
  }
  Py_XDECREF(si);
  Py_XDECREF(so);
  if (ok < 0) {
    Py_DECREF(node);
    return -1;
  }
  PyObject* old = slot(result, T.grad_fn);
  put(result, T.grad_fn, node);
  Py_XDECREF(old);
  old = slot(result, T.requires_grad);
  put_new(result, T.requires_grad, Py_True);
  Py_XDECREF(old);
  return 1;
}

// The exception the kernel raised, translated as the Python path does (_raise_kernel_error), then raised.
void kernel_failed(PyObject* op, PyObject* args, PyObject* kw) {
  if (!PyErr_ExceptionMatches(PyExc_MemoryError) && !PyErr_ExceptionMatches(PyExc_ValueError) &&
      !PyErr_ExceptionMatches(PyExc_AttributeError) && !PyErr_ExceptionMatches(PyExc_TypeError))
    return;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (tb) PyException_SetTraceback(value, tb);
  PyObject* a[4] = {op, args, kw, value};
  PyObject* r = PyObject_Vectorcall(g_raise_kernel_error, a, 4, nullptr);
  if (r) {  // not translated: the kernel's own exception stands
    Py_DECREF(r);
    PyErr_Restore(type, value, tb);
    return;
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
}

constexpr int kMaxArgs = 8;

bool dense_storage(PyObject* st) {
  PyTypeObject* stt = Py_TYPE(st);
  if (stt == g_storage_type) return true;
  for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(g_dense_storage_types); ++k)
    if (stt == reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(g_dense_storage_types, k))) return true;
  return false;
}

// The view step (a view op: new geometry over the input's storage, no kernel). Same contract as fast_dispatch.
PyObject* view_step(PyObject* op, PyObject* args, PyObject* kw, bool* fallback) {
  *fallback = true;
  if (PyTuple_GET_SIZE(args) < 1) return nullptr;
  PyObject* x = PyTuple_GET_ITEM(args, 0);
  if (!PyObject_TypeCheck(x, g_tensor_type)) return nullptr;
  PyObject* st = slot(x, T.storage);
  if (!st || !dense_storage(st)) return nullptr;
  PyObject* meta = slot(op, O.meta);
  if (!meta || meta == Py_None) return nullptr;
  if (PyTuple_GET_SIZE(args) != 1) return nullptr;  // the Python path passes x alone: it raises what that gives
  PyObject* geometry = PyObject_Call(meta, args, kw);
  if (!geometry) {
    if (PyErr_ExceptionMatches(PyExc_AttributeError)) PyErr_Clear();
    else *fallback = false;
    return nullptr;
  }
  if (!PyTuple_Check(geometry) || PyTuple_GET_SIZE(geometry) != 3) {  // a reinterpreting view (dtype views)
    Py_DECREF(geometry);
    return nullptr;
  }
  *fallback = false;
  PyObject* base = PyObject_GetAttr(x, s_base);
  PyObject* t = base ? g_tensor_type->tp_alloc(g_tensor_type, 0) : nullptr;
  if (!t) {
    Py_XDECREF(base);
    Py_DECREF(geometry);
    return nullptr;
  }
  put_new(t, T.storage, st);
  put_new(t, T.shape, PyTuple_GET_ITEM(geometry, 0));
  put_new(t, T.stride, PyTuple_GET_ITEM(geometry, 1));
  put_new(t, T.offset, PyTuple_GET_ITEM(geometry, 2));
  put_new(t, T.dtype, slot(x, T.dtype));
  put_new(t, T.nat, Py_None);
  put_new(t, T.requires_grad, Py_False);
  put_new(t, T.grad_fn, Py_None);
  Py_DECREF(geometry);
  int r = PyObject_SetAttr(t, s_base, base == Py_None ? x : base);
  Py_DECREF(base);
  if (r < 0) {
    Py_DECREF(t);
    return nullptr;
  }
  PyObject* backward = slot(op, O.backward);
  if (slot(x, T.requires_grad) == Py_True && backward && backward != Py_None) {
    int enabled;
    if (!truthy_attr(g_grad_state, s_enabled, &enabled)) {
      Py_DECREF(t);
      return nullptr;
    }
    if (enabled) {
      PyObject* a[4] = {op, x, kw ? kw : g_empty_kw, t};
      PyObject* rr = PyObject_Vectorcall(g_record_view, a, 4, nullptr);
      if (!rr) {
        Py_DECREF(t);
        return nullptr;
      }
      Py_DECREF(rr);
    }
  }
  return t;
}

// A Python number a floating tensor combines with without changing its dtype (PyTorch's promotion: a float or an
// int scalar never raises a floating tensor's category); an int beyond int64 is left to meta (it raises).
bool same_dtype_scalar(PyObject* s) {
  if (PyFloat_CheckExact(s)) return true;
  if (!PyLong_CheckExact(s)) return false;
  int overflow = 0;
  PyLong_AsLongLongAndOverflow(s, &overflow);
  if (PyErr_Occurred()) PyErr_Clear();
  return overflow == 0;
}

// Pointwise's "same" meta for the two calls that need neither broadcasting nor promotion, built without calling
// it: two tensors of one dtype and shape (its own first test), or a floating tensor and a Python number. Its
// result, [(shape, dtype)], (None, None), or nullptr (no exception set) for meta to compute.
PyObject* same_meta(PyObject* a0, PyObject* a1) {
  bool t0 = PyObject_TypeCheck(a0, g_tensor_type), t1 = PyObject_TypeCheck(a1, g_tensor_type);
  PyObject* t = t0 ? a0 : a1;
  if (t0 && t1) {
    if (slot(a0, T.dtype) != slot(a1, T.dtype)) return nullptr;
    PyObject* s0 = slot(a0, T.shape);
    PyObject* s1 = slot(a1, T.shape);
    int eq = s0 == s1 ? 1 : PyObject_RichCompareBool(s0, s1, Py_EQ);
    if (eq != 1) return PyErr_Clear(), nullptr;
  } else if (t0 || t1) {
    PyObject* dt = slot(t, T.dtype);
    if (!D.is_floating_point || !dt || slot(dt, D.is_floating_point) != Py_True ||
        !same_dtype_scalar(t0 ? a1 : a0))
      return nullptr;
  } else {
    return nullptr;
  }
  return Py_BuildValue("(((OO)),O)", slot(t, T.shape), slot(t, T.dtype), g_none_pair);
}

// The result, or nullptr: with *fallback set (and no exception) the Python path takes the call, else the call
// failed with the exception set. Nothing observable has happened when *fallback is set: no kernel has run.
PyObject* fast_dispatch(PyObject* op, PyObject* args, PyObject* kw, bool* fallback) {
  *fallback = true;
  if (!PyTuple_Check(args)) return nullptr;
  Py_ssize_t nargs = PyTuple_GET_SIZE(args);
  if (nargs == 0 || nargs > kMaxArgs) return nullptr;
  PyObject* special = slot(op, O.special);
  if (special != Py_False) {
    if (slot(op, O.view) == Py_True) return view_step(op, args, kw, fallback);
    // an op special only for its autocast policy (matmul, linear, convolution ...) takes the common path while
    // autocast is off; composites and mutating ops go to the Python path
    PyObject* meta = slot(op, O.meta);
    PyObject* mutates = slot(op, O.mutates);
    if (!meta || meta == Py_None || !mutates || !PyTuple_Check(mutates) || PyTuple_GET_SIZE(mutates)) return nullptr;
    PyObject* ac = slot(op, O.autocast);
    if (!ac || ac == Py_None || !g_autocast_state) return nullptr;
    int on;
    if (!truthy_attr(g_autocast_state, s_active, &on) || on) return PyErr_Clear(), nullptr;
  }
  PyObject* dev = nullptr;
  PyObject* backend = nullptr;
  bool grad = false;
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    PyObject* a = PyTuple_GET_ITEM(args, i);
    if (!PyObject_TypeCheck(a, g_tensor_type)) continue;
    PyObject* st = slot(a, T.storage);
    if (!st) return nullptr;
    if (!dense_storage(st)) return nullptr;
    if (slot(a, T.requires_grad) == Py_True) grad = true;
    PyObject* d = slot(st, S.device);
    if (!dev) {
      dev = d;
      backend = slot(st, S.backend);
    } else if (d != dev) {
      return nullptr;  // several devices: the Python path applies PyTorch's rule (0-dim cpu tensors join)
    }
  }
  if (!dev || !backend) return nullptr;
  int flag;
  if (!truthy_attr(backend, s_shape_only, &flag) || flag) return PyErr_Clear(), nullptr;
  if (!truthy_attr(g_lazy_state, s_active, &flag) || flag) return PyErr_Clear(), nullptr;
  PyObject* kernels = PyObject_GetAttr(backend, s_kernels);
  if (!kernels) return PyErr_Clear(), nullptr;
  PyObject* kern = PyDict_Check(kernels) ? PyDict_GetItemWithError(kernels, slot(op, O.name)) : nullptr;
  Py_XINCREF(kern);
  Py_DECREF(kernels);
  if (!kern) return PyErr_Clear(), nullptr;  // no kernel: the decomposition runs on the Python path

  // meta: checks, promotion, output shapes and dtypes, the casts
  PyObject* meta_out = nullptr;
  if (g_same_meta && slot(op, O.meta) == g_same_meta && nargs == 2 && (!kw || !PyDict_GET_SIZE(kw)))
    meta_out = same_meta(PyTuple_GET_ITEM(args, 0), PyTuple_GET_ITEM(args, 1));
  if (!meta_out) meta_out = PyObject_Call(slot(op, O.meta), args, kw);
  if (!meta_out) {
    Py_DECREF(kern);
    // an AttributeError may be a non-tensor where a tensor belongs: the Python path reruns meta and translates
    // it (_raise_argument_type); any other error is meta's own, raised as it is
    if (PyErr_ExceptionMatches(PyExc_AttributeError)) PyErr_Clear();
    else *fallback = false;
    return nullptr;
  }
  PyObject* outs = nullptr;
  PyObject* casts = nullptr;
  if (PyTuple_Check(meta_out) && PyTuple_GET_SIZE(meta_out) == 2) {
    outs = PyTuple_GET_ITEM(meta_out, 0);
    casts = PyTuple_GET_ITEM(meta_out, 1);
  }
  if (!outs || (!PyList_Check(outs) && !PyTuple_Check(outs))) {
    Py_DECREF(meta_out);
    Py_DECREF(kern);
    return nullptr;
  }
  *fallback = false;
  PyObject* refused = slot(op, O.refused);
  if (refused && refused != Py_None) {
    PyObject* a[3] = {op, args, casts};
    PyObject* r = PyObject_Vectorcall(g_check_refused, a, 3, nullptr);
    if (!r) { Py_DECREF(meta_out); Py_DECREF(kern); return nullptr; }
    Py_DECREF(r);
  }
  PyObject* casts_seq = PySequence_Fast(casts, "meta's casts");
  if (!casts_seq) { Py_DECREF(meta_out); Py_DECREF(kern); return nullptr; }

  // the kernel's arguments: each tensor's native array, cast where meta says
  PyObject* natives[kMaxArgs];
  Py_ssize_t nn = 0;
  PyObject* result = nullptr;
  bool ok = true;
  for (Py_ssize_t i = 0; i < nargs && ok; ++i) {
    PyObject* a = PyTuple_GET_ITEM(args, i);
    if (!PyObject_TypeCheck(a, g_tensor_type)) {
      Py_INCREF(a);
      natives[nn++] = a;
      continue;
    }
    PyObject* nat = slot(a, T.nat);
    if (nat && nat != Py_None) Py_INCREF(nat);
    else nat = PyObject_CallMethodNoArgs(a, s_native);
    if (!nat) { ok = false; break; }
    PyObject* c = i < PySequence_Fast_GET_SIZE(casts_seq) ? PySequence_Fast_GET_ITEM(casts_seq, i) : Py_None;
    if (c != Py_None && c != slot(a, T.dtype)) {
      PyObject* cast = PyObject_CallMethodObjArgs(backend, s_cast, nat, c, nullptr);
      Py_DECREF(nat);
      if (!cast) { ok = false; break; }
      nat = cast;
    }
    natives[nn++] = nat;
  }
  Py_DECREF(casts_seq);
  PyObject* res = nullptr;
  if (ok) {
    if (kw && PyDict_GET_SIZE(kw)) {
      PyObject* tup = PyTuple_New(nn);
      if (tup) {
        for (Py_ssize_t i = 0; i < nn; ++i) {
          Py_INCREF(natives[i]);
          PyTuple_SET_ITEM(tup, i, natives[i]);
        }
        res = PyObject_Call(kern, tup, kw);
        Py_DECREF(tup);
      }
    } else {
      res = PyObject_Vectorcall(kern, natives, nn, nullptr);
    }
    if (!res) kernel_failed(op, args, kw ? kw : g_empty_kw);
  }
  for (Py_ssize_t i = 0; i < nn; ++i) Py_DECREF(natives[i]);
  Py_DECREF(kern);
  if (!res) {
    Py_DECREF(meta_out);
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "dispatch: kernel failed without an exception");
    return nullptr;
  }

  PyObject* inference = PyObject_GetAttr(g_grad_state, s_inference);
  if (!inference) { Py_DECREF(res); Py_DECREF(meta_out); return nullptr; }
  Py_ssize_t nout = PySequence_Fast_GET_SIZE(outs);
  PyObject** outv = PySequence_Fast_ITEMS(outs);
  if (nout == 1) {
    PyObject* o = outv[0];
    if (PyTuple_Check(o) && PyTuple_GET_SIZE(o) == 2)
      result = from_native(backend, dev, res, PyTuple_GET_ITEM(o, 1), PyTuple_GET_ITEM(o, 0), inference);
    else
      PyErr_SetString(PyExc_RuntimeError, "internal error: meta outputs must be (shape, dtype) pairs");
  } else {
    PyObject* seq = PySequence_Fast(res, "a kernel with several outputs returns a sequence");
    if (seq && PySequence_Fast_GET_SIZE(seq) == nout) {
      result = PyTuple_New(nout);
      for (Py_ssize_t i = 0; result && i < nout; ++i) {
        PyObject* o = outv[i];
        PyObject* t = PyTuple_Check(o) && PyTuple_GET_SIZE(o) == 2
                          ? from_native(backend, dev, PySequence_Fast_GET_ITEM(seq, i), PyTuple_GET_ITEM(o, 1),
                                        PyTuple_GET_ITEM(o, 0), inference)
                          : nullptr;
        if (!t) {
          if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "internal error: bad meta outputs");
          Py_CLEAR(result);
          break;
        }
        PyTuple_SET_ITEM(result, i, t);
      }
    } else if (seq) {
      PyErr_SetString(PyExc_RuntimeError, "internal error: the kernel returned another number of outputs than meta");
    }
    Py_XDECREF(seq);
  }
  Py_DECREF(inference);
  Py_DECREF(res);
  if (result && grad) {
    PyObject* backward = slot(op, O.backward);
    int enabled;
    if (backward && backward != Py_None) {
      if (!truthy_attr(g_grad_state, s_enabled, &enabled)) {
        Py_CLEAR(result);
      } else if (enabled) {
        PyObject* k = kw ? kw : g_empty_kw;
        int done = g_opnode_type ? record(op, args, k, result, outs) : 0;
        if (done < 0) {
          Py_CLEAR(result);
        } else if (done == 0) {
          PyObject* a[5] = {op, args, k, result, outs};
          PyObject* r = PyObject_Vectorcall(g_record, a, 5, nullptr);
          if (!r) Py_CLEAR(result);
          Py_XDECREF(r);
        }
      }
    }
  }
  Py_DECREF(meta_out);
  if (!result && !PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "dispatch: no result");
  return result;
}

PyObject* call_python(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return PyObject_Vectorcall(g_python_dispatch, args, nargs, kwnames);
}

// dispatch(op, args, kw=None, out=None, _observed=False): _dispatch.dispatch's signature and result.
PyObject* py_dispatch(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (!g_python_dispatch) {
    PyErr_SetString(PyExc_RuntimeError, "dispatch: dispatch_setup has not run");
    return nullptr;
  }
  if (!g_tensor_type || kwnames || nargs < 2 || nargs > 5 || tracing()) return call_python(args, nargs, kwnames);
  PyObject* kw = nargs > 2 ? args[2] : nullptr;
  if (kw == Py_None) kw = nullptr;
  if (kw && !PyDict_CheckExact(kw)) return call_python(args, nargs, kwnames);
  if (nargs > 3 && args[3] != Py_None) return call_python(args, nargs, kwnames);  // out=
  bool observed = nargs > 4 && PyObject_IsTrue(args[4]) == 1;
  if (!observed) {
    PyObject* obs = PyDict_GetItemWithError(g_module_dict, s_observer);
    if (!obs && PyErr_Occurred()) return nullptr;
    if (obs && obs != Py_None) return call_python(args, nargs, kwnames);
  }
  if (!PyObject_TypeCheck(args[0], g_op_type)) return call_python(args, nargs, kwnames);
  bool fallback;
  PyObject* r = fast_dispatch(args[0], args[1], kw, &fallback);
  if (r || !fallback) return r;
  return call_python(args, nargs, kwnames);
}

PyObject* intern(const char* s) { return PyUnicode_InternFromString(s); }

// dispatch_setup(python_dispatch): every call goes to the Python path (while the package is being imported);
// dispatch_setup(python_dispatch, module_dict, Tensor, Storage, dense_storage_types, NumpyBackend, Op,
//                grad_state, lazy_state, check_refused, record, raise_kernel_error, empty_kw, wrap_contiguous,
//                record_view, autocast_state):
// the fast path on.
PyObject* py_dispatch_setup(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs == 1) {
    Py_INCREF(args[0]);
    Py_XSETREF(g_python_dispatch, args[0]);
    Py_RETURN_NONE;
  }
  if (nargs != 16) {
    PyErr_SetString(PyExc_TypeError, "dispatch_setup takes 1 or 16 arguments");
    return nullptr;
  }
  for (int i = 2; i <= 3; ++i)
    if (!PyType_Check(args[i])) {
      PyErr_SetString(PyExc_TypeError, "dispatch_setup: Tensor and Storage must be classes");
      return nullptr;
    }
  if (!PyTuple_Check(args[4]) || !PyType_Check(args[5]) || !PyType_Check(args[6])) {
    PyErr_SetString(PyExc_TypeError, "dispatch_setup: bad storage types, backend or Op class");
    return nullptr;
  }
  auto* tensor = reinterpret_cast<PyTypeObject*>(args[2]);
  auto* storage = reinterpret_cast<PyTypeObject*>(args[3]);
  auto* op = reinterpret_cast<PyTypeObject*>(args[6]);
  if (!slot_offsets(tensor, {{&T.storage, "_storage"}, {&T.shape, "_shape"}, {&T.stride, "_stride"},
                             {&T.offset, "_offset"}, {&T.dtype, "dtype"}, {&T.nat, "_nat"},
                             {&T.requires_grad, "requires_grad"}, {&T.grad_fn, "grad_fn"}}) ||
      !slot_offsets(storage, {{&S.buf, "buf"}, {&S.dtype, "dtype"}, {&S.device, "device"}, {&S.size, "size"},
                              {&S.version, "_version"}, {&S.backend, "backend"}, {&S.inference, "inference"}}) ||
      !slot_offsets(op, {{&O.name, "name"}, {&O.meta, "meta"}, {&O.backward, "backward"}, {&O.refused, "refused"},
                         {&O.special, "special"}, {&O.view, "view"}, {&O.autocast, "autocast"},
                         {&O.mutates, "mutates"}}))
    return nullptr;
  PyObject** globals[] = {&g_python_dispatch, &g_module_dict, reinterpret_cast<PyObject**>(&g_tensor_type),
                          reinterpret_cast<PyObject**>(&g_storage_type), &g_dense_storage_types,
                          reinterpret_cast<PyObject**>(&g_numpy_backend_type), reinterpret_cast<PyObject**>(&g_op_type), &g_grad_state,
                          &g_lazy_state, &g_check_refused, &g_record, &g_raise_kernel_error, &g_empty_kw,
                          &g_wrap_contiguous, &g_record_view, &g_autocast_state};
  for (int i = 0; i < 16; ++i) {
    if (!globals[i]) continue;
    Py_INCREF(args[i]);
    Py_XSETREF(*globals[i], args[i]);
  }
  if (g_wrap_contiguous == Py_None) Py_CLEAR(g_wrap_contiguous);
  if (!s_observer) {
    s_observer = intern("_observer");
    s_base = intern("_base");
    s_stack = intern("stack");
    s_grad_acc = intern("_grad_acc");
    s_inference_seen = intern("inference_seen");
    s_output_nr = intern("_output_nr");
    s_save_inputs = intern("save_inputs");
    s_save_output = intern("save_output");
    s_enabled = intern("enabled");
    s_inference = intern("inference");
    s_active = intern("active");
    s_shape_only = intern("shape_only");
    s_kernels = intern("kernels");
    s_native = intern("_native");
    s_cast = intern("cast");
    s_wrap = intern("wrap");
    s_np = intern("np");
    s_shape = intern("shape");
  }
  Py_RETURN_NONE;
}

// record_setup(OpNode, dtype_class, node_counter, saved_hooks_state, edge_of, kept, no_inference_saved): the
// autograd record step in C (without it, the fast path calls _dispatch._record).
PyObject* py_record_setup(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 7 || !PyType_Check(args[0]) || !PyType_Check(args[1]) || !PyList_Check(args[2]) ||
      PyList_GET_SIZE(args[2]) != 1) {
    PyErr_SetString(PyExc_TypeError, "record_setup(OpNode, dtype, Node._counter, _hooks, edge_of, _kept, "
                                     "_no_inference_saved)");
    return nullptr;
  }
  auto* node = reinterpret_cast<PyTypeObject*>(args[0]);
  auto* dtype = reinterpret_cast<PyTypeObject*>(args[1]);
  if (!slot_offsets(node, {{&N.next_edges, "next_edges"}, {&N.pre_hooks, "pre_hooks"}, {&N.seq, "_seq"},
                           {&N.op, "op"}, {&N.inputs, "_inputs"}, {&N.versions, "_versions"}, {&N.kw, "kw"},
                           {&N.out, "_out"}, {&N.out_version, "_out_version"}, {&N.shapes, "shapes"},
                           {&N.dtypes, "dtypes"}, {&N.outs, "outs"}, {&N.released, "released"},
                           {&N.unpack, "_unpack"}}) ||
      !slot_offsets(dtype, {{&D.is_floating_point, "is_floating_point"}, {&D.is_complex, "is_complex"}}))
    return nullptr;
  if (!g_one) g_one = PyLong_FromLong(1);
  if (!g_zero) g_zero = PyLong_FromLong(0);
  PyObject** globals[] = {reinterpret_cast<PyObject**>(&g_opnode_type), nullptr, &g_node_counter, &g_saved_hooks,
                          &g_edge_of, &g_kept, &g_no_inference_saved};
  for (int i = 0; i < 7; ++i) {
    if (!globals[i]) continue;
    Py_INCREF(args[i]);
    Py_XSETREF(*globals[i], args[i]);
  }
  Py_RETURN_NONE;
}

}  // namespace

// dispatch_same_meta(fn): fn is pointwise's "same" meta, whose result for two tensors of one dtype and shape
// the fast path builds itself
PyObject* py_dispatch_same_meta(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "dispatch_same_meta(fn)");
    return nullptr;
  }
  if (!g_none_pair) g_none_pair = Py_BuildValue("(OO)", Py_None, Py_None);
  if (!g_none_pair) return nullptr;
  Py_INCREF(args[0]);
  Py_XSETREF(g_same_meta, args[0]);
  Py_RETURN_NONE;
}

PyMethodDef dispatch_methods[] = {
    {"dispatch_same_meta", (PyCFunction)(void (*)(void))py_dispatch_same_meta, METH_FASTCALL,
     "dispatch_same_meta(fn): pointwise's 'same' meta, built in C for two tensors of one dtype and shape"},
    {"record_setup", (PyCFunction)(void (*)(void))py_record_setup, METH_FASTCALL,
     "record_setup(...): the autograd classes and helpers the C record step reads"},
    {"dispatch", (PyCFunction)(void (*)(void))py_dispatch, METH_FASTCALL | METH_KEYWORDS,
     "dispatch(op, args, kw=None, out=None, _observed=False): the common path of _dispatch.dispatch in C"},
    {"dispatch_setup", (PyCFunction)(void (*)(void))py_dispatch_setup, METH_FASTCALL,
     "dispatch_setup(...): the classes, states and helpers of tinytorch._dispatch that dispatch reads"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace tt
