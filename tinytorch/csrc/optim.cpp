// Python entry points of the native multi-tensor optimizer updates (the cpu kernels of the ops fused_adam,
// fused_sgd, fused_rmsprop and fused_adagrad in tinytorch/_ops/optim.py): one call updates every tensor of a
// param group, as PyTorch's _fused_adam_ / _fused_sgd_ / _fused_adagrad_ (ATen's native/cpu/Fused*Kernel.cpp).
// The elements of all the tensors are cut into one flat list of chunks that tt::parallel_for shares out, so
// small parameters (biases, norms) share threads with the big ones instead of each costing a parallel region.
// Per-tensor scalars (bias corrections, Adagrad's decayed lr) are computed here once, in double; the loops
// compute in the parameter's dtype. Entries return NotImplemented for anything but float32/float64 tensors
// whose written buffers are C-contiguous and aligned (the Python wrapper then runs the NumPy kernel).
#include <array>
#include <cmath>

#include "kit.h"
#include "optim_ops.h"

namespace tt {

Stub<OptimLoop> adam_stub[2];
Stub<OptimLoop> sgd_stub[2];
Stub<OptimLoop> rmsprop_stub[2];
Stub<OptimLoop> adagrad_stub[2];

namespace {

// The operand buffers of a param group: for tensor t, ptr[t][slot] (nullptr for an absent optional list).
struct Group {
  DType dt = DType::unsupported;
  Py_ssize_t n = 0;
  std::vector<std::array<char*, OPT_OPERANDS>> ptr;
  std::vector<int64_t> size;
  std::vector<PyObject*> owned;  // contiguous copies of gradients
  Group() = default;
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  ~Group() {
    for (PyObject* o : owned) Py_DECREF(o);
  }
};

inline bool is_seq(PyObject* o) { return PyList_Check(o) || PyTuple_Check(o); }

// Fills `g` from the operand lists (slot k: lists[k], None when absent; slot OPT_GRAD is read, the others
// written). 1: the native loops can run; 0: NotImplemented; -1: an exception is set.
int gather(PyObject* const* lists, int k, Group& g) {
  if (!is_seq(lists[OPT_PARAM])) return 0;
  g.n = PySequence_Fast_GET_SIZE(lists[OPT_PARAM]);
  g.ptr.assign(g.n, {});
  g.size.assign(g.n, 0);
  for (int s = 0; s < k; ++s) {
    PyObject* list = lists[s];
    if (list == Py_None && s > OPT_GRAD) continue;
    if (!is_seq(list) || PySequence_Fast_GET_SIZE(list) != g.n) return 0;
    PyObject** items = PySequence_Fast_ITEMS(list);
    for (Py_ssize_t t = 0; t < g.n; ++t) {
      PyObject* o = items[t];
      if (!is_array(o)) return 0;
      PyArrayObject* a = arr(o);
      if (!PyArray_ISNOTSWAPPED(a)) return 0;
      DType dt = dtype_of(a);
      if (s == 0 && t == 0) g.dt = dt;
      if (dt != g.dt || loop_index(dt) < 0) return 0;
      if (s == OPT_PARAM) {
        g.size[t] = PyArray_SIZE(a);
      } else if (!PyArray_SAMESHAPE(a, arr(PySequence_Fast_ITEMS(lists[OPT_PARAM])[t]))) {
        return 0;
      }
      if (s == OPT_GRAD) {
        if (!(c_contig(a) && PyArray_ISALIGNED(a))) {
          // the gradient is only read: a contiguous copy costs one pass and keeps the loops contiguous
          PyObject* c = PyArray_FromAny(o, nullptr, 0, 0, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED, nullptr);
          if (!c) return -1;
          g.owned.push_back(c);
          a = arr(c);
        }
      } else if (!(c_contig(a) && PyArray_ISALIGNED(a) && PyArray_ISWRITEABLE(a))) {
        return 0;  // written in place: it must be the buffer itself
      }
      g.ptr[t][s] = static_cast<char*>(PyArray_DATA(a));
    }
  }
  return 1;
}

struct Chunk {
  Py_ssize_t t;
  int64_t begin, end;
};

constexpr int64_t kChunkSize = 8192;  // elements of one work item: small enough to balance, big enough to vectorize

// Runs `loop` over every element of the group: coefficients of tensor t at coef + t * cstride.
void run(const Group& g, OptimLoop loop, const double* coef, int64_t cstride, int flags) {
  std::vector<Chunk> chunks;
  int64_t total = 0;
  for (Py_ssize_t t = 0; t < g.n; ++t) {
    for (int64_t b = 0; b < g.size[t]; b += kChunkSize) chunks.push_back({t, b, std::min(g.size[t], b + kChunkSize)});
    total += g.size[t];
  }
  if (chunks.empty()) return;
  const int64_t m = (int64_t)chunks.size();
  const int64_t itemsize = loop_index(g.dt) == 0 ? 4 : 8;
  // a thread's share of chunks should hold about kGrainSize elements; below that the caller runs them all
  const int64_t grain = std::max<int64_t>(1, (kGrainSize * m + total - 1) / std::max<int64_t>(total, 1));
  run_released(total, [&] {
    parallel_for(0, m, grain, [&](int64_t cb, int64_t ce) {
      for (int64_t i = cb; i < ce; ++i) {
        const Chunk& c = chunks[i];
        char* d[OPT_OPERANDS];
        for (int s = 0; s < OPT_OPERANDS; ++s) {
          char* base = g.ptr[c.t][s];
          d[s] = base ? base + c.begin * itemsize : nullptr;
        }
        loop(d, c.end - c.begin, coef + c.t * cstride, flags);
      }
    });
  });
}

// The step counts (state['step']: one-element float32 arrays, written): false when `o` is not n of them.
bool step_buffers(PyObject* o, Py_ssize_t n, std::vector<float*>& out) {
  if (!is_seq(o) || PySequence_Fast_GET_SIZE(o) != n) return false;
  out.resize(n);
  PyObject** items = PySequence_Fast_ITEMS(o);
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!is_array(items[i])) return false;
    PyArrayObject* a = arr(items[i]);
    if (PyArray_TYPE(a) != NPY_FLOAT32 || PyArray_SIZE(a) != 1 || !PyArray_ISNOTSWAPPED(a) ||
        !PyArray_ISALIGNED(a) || !PyArray_ISWRITEABLE(a))
      return false;
    out[i] = static_cast<float*>(PyArray_DATA(a));
  }
  return true;
}

// Adds one to every step count (in float32, as PyTorch's `step_t += 1`) and returns the new counts. Called only
// once the call is sure to run natively, so a NotImplemented leaves the counts to the NumPy kernel.
std::vector<double> bump_steps(const std::vector<float*>& steps) {
  std::vector<double> out(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    *steps[i] = *steps[i] + 1.0f;
    out[i] = *steps[i];
  }
  return out;
}

}  // namespace

// fused_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs|None, state_steps, lr, beta1, beta2, eps,
//            weight_decay, decoupled, maximize)
static TT_ENTRY(py_fused_adam) {
  PyObject* lists[6];  // params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps
  double lr, b1, b2, eps, wd;
  bool decoupled, maximize;
  TT_ARGS(lists[0], lists[1], lists[2], lists[3], lists[4], lists[5], lr, b1, b2, eps, wd, decoupled, maximize);
  Group g;
  int r = gather(lists, 5, g);
  if (r <= 0) return declined(r);
  std::vector<float*> step_ptrs;
  if (!step_buffers(lists[5], g.n, step_ptrs)) return not_implemented();
  const std::vector<double> steps = bump_steps(step_ptrs);
  std::vector<double> coef(9 * g.n);
  for (Py_ssize_t t = 0; t < g.n; ++t) {
    double* c = &coef[9 * t];
    const double bc1 = 1 - std::pow(b1, steps[t]), bc2 = 1 - std::pow(b2, steps[t]);
    c[0] = wd; c[1] = 1 - lr * wd; c[2] = b1; c[3] = 1 - b1; c[4] = b2; c[5] = 1 - b2;
    c[6] = std::sqrt(bc2); c[7] = eps; c[8] = -lr / bc1;
  }
  int flags = (maximize ? OPT_MAXIMIZE : 0) | (lists[4] != Py_None ? OPT_AMSGRAD : 0);
  if (wd != 0) flags |= decoupled ? OPT_DECOUPLED : OPT_WEIGHT_DECAY;
  run(g, adam_stub[loop_index(g.dt)].get(), coef.data(), 9, flags);
  Py_RETURN_NONE;
}

// fused_sgd(params, grads, momentum_buffers|None, lr, momentum, dampening, nesterov, weight_decay, maximize,
//           is_first_step)
static TT_ENTRY(py_fused_sgd) {
  PyObject* lists[3];  // params, grads, momentum_buffers
  double lr, momentum, dampening, wd;
  bool nesterov, maximize, first;
  TT_ARGS(lists[0], lists[1], lists[2], lr, momentum, dampening, nesterov, wd, maximize, first);
  const bool with_momentum = momentum != 0;
  if (with_momentum && lists[2] == Py_None) return not_implemented();
  Group g;
  int r = gather(lists, 3, g);
  if (r <= 0) return declined(r);
  const double coef[4] = {wd, momentum, 1 - dampening, lr};
  int flags = (maximize ? OPT_MAXIMIZE : 0) | (wd != 0 ? OPT_WEIGHT_DECAY : 0);
  if (with_momentum) flags |= OPT_MOMENTUM | (nesterov ? OPT_NESTEROV : 0) | (first ? OPT_FIRST_STEP : 0);
  run(g, sgd_stub[loop_index(g.dt)].get(), coef, 0, flags);
  Py_RETURN_NONE;
}

// fused_rmsprop(params, grads, square_avgs, grad_avgs|None, momentum_buffers|None, state_steps, lr, alpha, eps,
//               weight_decay, momentum, centered, maximize)
static TT_ENTRY(py_fused_rmsprop) {
  PyObject* lists[6];  // params, grads, square_avgs, grad_avgs, momentum_buffers, state_steps
  double lr, alpha, eps, wd, momentum;
  bool centered, maximize;
  TT_ARGS(lists[0], lists[1], lists[2], lists[3], lists[4], lists[5], lr, alpha, eps, wd, momentum, centered,
          maximize);
  const bool with_momentum = momentum > 0;
  if (lists[2] == Py_None || (centered && lists[3] == Py_None) || (with_momentum && lists[4] == Py_None))
    return not_implemented();
  Group g;
  int r = gather(lists, 5, g);
  if (r <= 0) return declined(r);
  std::vector<float*> step_ptrs;
  if (!step_buffers(lists[5], g.n, step_ptrs)) return not_implemented();
  bump_steps(step_ptrs);  // counted only: the update does not use them
  const double coef[6] = {wd, alpha, 1 - alpha, eps, momentum, lr};
  int flags = (maximize ? OPT_MAXIMIZE : 0) | (wd != 0 ? OPT_WEIGHT_DECAY : 0) |
              (centered ? OPT_CENTERED : 0) | (with_momentum ? OPT_RMS_MOMENTUM : 0);
  run(g, rmsprop_stub[loop_index(g.dt)].get(), coef, 0, flags);
  Py_RETURN_NONE;
}

// fused_adagrad(params, grads, state_sums, state_steps, lr, lr_decay, weight_decay, eps, maximize)
static TT_ENTRY(py_fused_adagrad) {
  PyObject* lists[4];  // params, grads, state_sums, state_steps
  double lr, lr_decay, wd, eps;
  bool maximize;
  TT_ARGS(lists[0], lists[1], lists[2], lists[3], lr, lr_decay, wd, eps, maximize);
  if (lists[2] == Py_None) return not_implemented();
  Group g;
  int r = gather(lists, 3, g);
  if (r <= 0) return declined(r);
  std::vector<float*> step_ptrs;
  if (!step_buffers(lists[3], g.n, step_ptrs)) return not_implemented();
  const std::vector<double> steps = bump_steps(step_ptrs);
  std::vector<double> coef(3 * g.n);
  for (Py_ssize_t t = 0; t < g.n; ++t) {
    coef[3 * t] = wd;
    coef[3 * t + 1] = eps;
    coef[3 * t + 2] = lr / (1 + (steps[t] - 1) * lr_decay);
  }
  int flags = (maximize ? OPT_MAXIMIZE : 0) | (wd != 0 ? OPT_WEIGHT_DECAY : 0);
  run(g, adagrad_stub[loop_index(g.dt)].get(), coef.data(), 3, flags);
  Py_RETURN_NONE;
}

PyMethodDef optim_methods[] = {
    TT_METHOD("fused_adam", py_fused_adam,
     "fused_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2, eps, "
     "weight_decay, decoupled, maximize)"),
    TT_METHOD("fused_sgd", py_fused_sgd,
     "fused_sgd(params, grads, momentum_buffers, lr, momentum, dampening, nesterov, weight_decay, maximize, "
     "is_first_step)"),
    TT_METHOD("fused_rmsprop", py_fused_rmsprop,
     "fused_rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffers, state_steps, lr, alpha, eps, "
     "weight_decay, momentum, centered, maximize)"),
    TT_METHOD("fused_adagrad", py_fused_adagrad,
     "fused_adagrad(params, grads, state_sums, state_steps, lr, lr_decay, weight_decay, eps, maximize)"),
    {nullptr, nullptr, 0, nullptr}};

}  // namespace tt
