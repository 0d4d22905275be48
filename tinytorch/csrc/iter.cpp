#include "iter.h"

#include <algorithm>
#include <cstdlib>

#include "parallel.h"

namespace tt {

namespace conv {
#include "kernels/vec_math.h"
}

// A Python number as an element of dtype dt (the 16-bit types rounded as PyTorch casts a wrapped number).
static void store_scalar(double v, DType dt, double* slot) {
  if (dt == DType::f32) {
    float f = static_cast<float>(v);
    std::memcpy(slot, &f, sizeof f);
  } else if (dt == DType::f16 || dt == DType::bf16) {
    uint16_t h = dt == DType::f16 ? conv::tt_float_to_half(static_cast<float>(v))
                                  : conv::tt_float_to_bf16(static_cast<float>(v));
    std::memcpy(slot, &h, sizeof h);
  } else {
    *slot = v;
  }
}

// The byte range [lo, hi) an array's elements occupy.
static void extent(PyArrayObject* a, char** lo, char** hi) {
  char* p = static_cast<char*>(PyArray_DATA(a));
  *lo = *hi = p;
  for (int d = 0; d < PyArray_NDIM(a); ++d) {
    npy_intp n = PyArray_DIM(a, d), s = PyArray_STRIDE(a, d);
    if (n == 0) { *hi = *lo; return; }
    if (s < 0) *lo += (n - 1) * s; else *hi += (n - 1) * s;
  }
  *hi += PyArray_ITEMSIZE(a);
}

static bool same_view(PyArrayObject* a, PyArrayObject* b) {
  if (PyArray_DATA(a) != PyArray_DATA(b) || PyArray_NDIM(a) != PyArray_NDIM(b)) return false;
  for (int d = 0; d < PyArray_NDIM(a); ++d)
    if (PyArray_DIM(a, d) != PyArray_DIM(b, d) || PyArray_STRIDE(a, d) != PyArray_STRIDE(b, d)) return false;
  return true;
}

bool TensorIter::build(PyObject* const* inputs, int nin, DType dt, int out_npy_type, DType first_dt,
                       PyArrayObject* into) {
  nops_ = nin + 1;
  if (into) {
    if (dtype_of(into) != dt || !PyArray_ISWRITEABLE(into)) return false;
    char *olo, *ohi;
    extent(into, &olo, &ohi);
    for (int i = 0; i < nin; ++i) {
      if (!is_array(inputs[i])) continue;
      PyArrayObject* a = arr(inputs[i]);
      if (a == into || same_view(a, into)) continue;  // elementwise in place: each element read before written
      char *lo, *hi;
      extent(a, &lo, &hi);
      if (lo < ohi && olo < hi) return false;  // a partial overlap: NumPy buffers it, we do not
    }
  }
  // broadcast shape
  int nd = into ? PyArray_NDIM(into) : 0;
  for (int i = 0; i < nin; ++i)
    if (is_array(inputs[i])) nd = std::max(nd, PyArray_NDIM(arr(inputs[i])));
  int64_t shape[NPY_MAXDIMS];
  for (int d = 0; d < nd; ++d) shape[d] = into ? PyArray_DIM(into, d) : 1;
  for (int i = 0; i < nin; ++i) {
    if (!is_array(inputs[i])) continue;
    PyArrayObject* a = arr(inputs[i]);
    int ad = PyArray_NDIM(a);
    if (ad > nd) return false;  // only with `into`: an input larger than the output
    for (int d = 0; d < ad; ++d) {
      int64_t s = PyArray_DIM(a, d);
      int64_t& t = shape[nd - ad + d];
      if (s == t || s == 1) continue;
      if (t == 1 && !into) { t = s; continue; }
      if (into) return false;  // does not broadcast to the output: NumPy raises the error
      PyErr_SetString(PyExc_RuntimeError, "native kernel: operands do not broadcast");
      return false;
    }
  }
  // input strides in bytes over the broadcast shape (0 where broadcast or a Python number)
  int64_t st[kMaxOperands][NPY_MAXDIMS];
  for (int i = 0; i < nin; ++i) {
    int k = i + 1;
    if (is_array(inputs[i])) {
      PyArrayObject* a = arr(inputs[i]);
      if (dtype_of(a) != (i == 0 && first_dt != DType::unsupported ? first_dt : dt)) return false;
      int ad = PyArray_NDIM(a);
      for (int d = 0; d < nd; ++d) {
        int ai = d - (nd - ad);
        st[k][d] = (ai < 0 || PyArray_DIM(a, ai) == 1) ? 0 : PyArray_STRIDE(a, ai);
      }
      data_[k] = static_cast<char*>(PyArray_DATA(a));
    } else {
      double v;
      if (!as_double(inputs[i], &v)) return false;
      store_scalar(v, dt, &scalar_store_[k]);
      for (int d = 0; d < nd; ++d) st[k][d] = 0;
      data_[k] = reinterpret_cast<char*>(&scalar_store_[k]);
    }
  }
  // memory order: perm[0] outermost. Insertion sort by the first input whose strides tell two dims apart
  int perm[NPY_MAXDIMS];
  for (int d = 0; d < nd; ++d) perm[d] = d;
  if (into)
    for (int d = 0; d < nd; ++d) st[0][d] = PyArray_DIM(into, d) == 1 ? 0 : PyArray_STRIDE(into, d);
  auto inner_first = [&](int d0, int d1) {  // true when d0 should sit inside d1
    for (int k = into ? 0 : 1; k < nops_; ++k) {
      int64_t s0 = std::llabs(st[k][d0]), s1 = std::llabs(st[k][d1]);
      if (s0 == 0 || s1 == 0 || s0 == s1) continue;
      return s0 < s1;
    }
    return false;
  };
  for (int i = 1; i < nd; ++i)
    for (int j = i; j > 0 && inner_first(perm[j - 1], perm[j]); --j) std::swap(perm[j - 1], perm[j]);
  if (into) {
    out_ = into;
    data_[0] = static_cast<char*>(PyArray_DATA(into));
    numel_ = PyArray_SIZE(into);
    for (int d = 0; d < nd; ++d) st[0][d] = PyArray_STRIDE(into, d);
  } else {
    // the output: dense in that order
    PyArray_Descr* descr = PyArray_DescrFromType(out_npy_type);
    if (!descr) return false;
    const int64_t out_isz = PyDataType_ELSIZE(descr);
    npy_intp oshape[NPY_MAXDIMS], ostrides[NPY_MAXDIMS];
    int64_t acc = out_isz;
    numel_ = 1;
    for (int d = 0; d < nd; ++d) { oshape[d] = shape[d]; numel_ *= shape[d]; }
    for (int j = nd - 1; j >= 0; --j) {
      ostrides[perm[j]] = acc;
      acc *= std::max<int64_t>(shape[perm[j]], 1);
    }
    out_ = reinterpret_cast<PyArrayObject*>(
        PyArray_NewFromDescr(&PyArray_Type, descr, nd, oshape, nd ? ostrides : nullptr, nullptr, 0, nullptr));
    if (!out_) return false;
    data_[0] = static_cast<char*>(PyArray_DATA(out_));
    for (int d = 0; d < nd; ++d) st[0][d] = ostrides[d];
  }
  // permute, then coalesce neighbours that are one run of memory in every operand
  ndim_ = 0;
  for (int j = 0; j < nd; ++j) {
    int d = perm[j];
    if (shape[d] == 1) continue;
    if (ndim_ > 0) {
      int p = ndim_ - 1;
      bool merge = true;
      for (int k = 0; k < nops_; ++k)
        if (strides_[k][p] != st[k][d] * shape[d]) { merge = false; break; }
      if (merge) {
        shape_[p] *= shape[d];
        for (int k = 0; k < nops_; ++k) strides_[k][p] = st[k][d];
        continue;
      }
    }
    shape_[ndim_] = shape[d];
    for (int k = 0; k < nops_; ++k) strides_[k][ndim_] = st[k][d];
    ++ndim_;
  }
  if (ndim_ == 0) {  // 0-d or all ones: one element
    shape_[0] = 1;
    for (int k = 0; k < nops_; ++k) strides_[k][0] = 0;
    ndim_ = 1;
  }
  return true;
}

void TensorIter::run(Loop1d loop, const double* scalars) const {
  if (numel_ == 0) return;
  const int nd = ndim_, nops = nops_;
  const int64_t inner = shape_[nd - 1];
  auto body = [&](int64_t begin, int64_t end) {
    // the coordinates of `begin`, then whole or partial rows of the innermost dimension
    int64_t idx[NPY_MAXDIMS + 1];
    int64_t rem = begin;
    for (int d = nd - 1; d >= 0; --d) { idx[d] = rem % shape_[d]; rem /= shape_[d]; }
    char* ptr[kMaxOperands];
    int64_t inner_strides[kMaxOperands];
    for (int k = 0; k < nops; ++k) {
      inner_strides[k] = strides_[k][nd - 1];
      char* p = data_[k];
      for (int d = 0; d < nd; ++d) p += idx[d] * strides_[k][d];
      ptr[k] = p;
    }
    int64_t i = begin;
    while (i < end) {
      int64_t n = std::min(inner - idx[nd - 1], end - i);
      loop(ptr, inner_strides, n, scalars);
      i += n;
      if (i >= end) break;
      // next row: carry into the outer coordinates
      for (int k = 0; k < nops; ++k) ptr[k] -= idx[nd - 1] * strides_[k][nd - 1];
      idx[nd - 1] = 0;
      for (int d = nd - 2; d >= 0; --d) {
        for (int k = 0; k < nops; ++k) ptr[k] += strides_[k][d];
        if (++idx[d] < shape_[d]) break;
        for (int k = 0; k < nops; ++k) ptr[k] -= shape_[d] * strides_[k][d];
        idx[d] = 0;
      }
    }
  };
  parallel_for(0, numel_, kGrainSize, body);
}

}  // namespace tt
