// TensorIterator for the native pointwise kernels (after ATen's TensorIterator): broadcasts the inputs to one
// shape, allocates the output in the inputs' memory order (a permuted dense input gives a permuted output, as
// in PyTorch), coalesces dimensions that are contiguous in every operand, and runs a 1-d inner loop over the
// result, split across threads by parallel_for.
#pragma once
#include "common.h"
#include "dispatch_stub.h"

namespace tt {

constexpr int kMaxOperands = 4;

class TensorIter {
 public:
  // out = f(inputs...). Each input is an ndarray of element type `dt` or a Python number (a stride-0 operand).
  // Returns false with no error set when an input is neither (the caller falls back to NumPy); false with an
  // exception set when the shapes do not broadcast or the output cannot be allocated.
  // `first_dt`, when given, is input 0's element type instead of `dt` (where's bool condition).
  bool build(PyObject* const* inputs, int nin, DType dt, int out_npy_type, DType first_dt = DType::unsupported,
             PyArrayObject* into = nullptr);

  // The same with an existing output `into` (an in-place op: into is also an input). False, no error set, when the
  // inputs do not broadcast to its shape or one of them overlaps its memory without being the same view.
  bool build_into(PyArrayObject* into, PyObject* const* inputs, int nin, DType dt) {
    return build(inputs, nin, dt, PyArray_TYPE(into), DType::unsupported, into);
  }

  // Runs loop over every element (operand 0 = output). `scalars` are passed through to the loop.
  void run(Loop1d loop, const double* scalars = nullptr) const;

  PyArrayObject* output() const { return out_; }  // a new reference, handed to the caller (not with build_into)
  int64_t numel() const { return numel_; }

 private:
  int nops_ = 0;
  int ndim_ = 0;                           // after coalescing; outermost first
  int64_t shape_[NPY_MAXDIMS + 1];
  int64_t strides_[kMaxOperands][NPY_MAXDIMS + 1];
  char* data_[kMaxOperands];
  double scalar_store_[kMaxOperands];      // Python number inputs, converted to dt
  PyArrayObject* out_ = nullptr;
  int64_t numel_ = 0;
};

}  // namespace tt
