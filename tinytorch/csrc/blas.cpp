// Matrix products of the cpu backend through the BLAS that NumPy loads (blas.h): matmul (2-d and batched with
// broadcast batch dims) and linear (x @ w.T + b with the bias folded into the GEMM's C). Operands are NumPy
// views with any strides: a matrix whose rows or columns are contiguous goes to the BLAS as it is (the
// transposed case as CblasTrans with its leading dimension), anything else is copied once.
//
// Batched products of small matrices run one single-threaded GEMM per batch entry on tt::parallel_for (OpenBLAS
// runs a GEMM of at most 65536 * 4 multiply-adds on the calling thread: interface/gemm.c's SMP threshold);
// larger products are issued one after another and threaded by the BLAS itself. The special cases of the NumPy
// kernel (backends/cpu/linalg.py `_matmul`: split-K for long thin products, column blocks for a tiny left factor,
// K = 1) are kept here, without its Python loop.
#include "blas.h"

#include <algorithm>
#include <mutex>
#include <type_traits>
#include <vector>

#include "kit.h"
#include "tile_gemm.h"

namespace tt {

Stub<TileGemm> tile_gemm_stub[2];
Stub<PackedGemm> packed_gemm_stub[2];

namespace {

// cblas_?gemm with 32-bit (LP64) or 64-bit (ILP64, NumPy's scipy-openblas64) integers
using sgemm32_t = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                           int);
using dgemm32_t = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double,
                           double*, int);
using sgemm64_t = void (*)(int, int, int, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*,
                           int64_t, float, float*, int64_t);
using dgemm64_t = void (*)(int, int, int, int64_t, int64_t, int64_t, double, const double*, int64_t, const double*,
                           int64_t, double, double*, int64_t);

bool g_pool_gemm = false;  // large GEMMs split over the pool (single-threaded packed or BLAS GEMMs)
void* g_sgemm = nullptr;
void* g_dgemm = nullptr;
bool g_ilp64 = true;

// openblas_set_num_threads / openblas_get_num_threads (an int in every OpenBLAS build, ILP64 too)
using set_threads_t = void (*)(int);
using get_threads_t = int (*)();
set_threads_t g_set_threads = nullptr;
get_threads_t g_get_threads = nullptr;

// The BlasThreads scopes alive: the count to restore is read by the first and written back by the last.
std::mutex g_threads_mu;
int g_threads_depth = 0;
int g_threads_saved = 0, g_threads_set = 0;

// multiply-adds below which OpenBLAS runs a GEMM on the calling thread (see the header comment)
constexpr int64_t kBlasSerialMacs = 65536 * 4;
constexpr int64_t kSplitK = 4096;

}  // namespace

bool blas_available() { return g_sgemm && g_dgemm; }

int blas_kernel_threads() { return g_pool_gemm ? 1 : get_num_threads(); }

BlasThreads::BlasThreads(int n) {
  if (n <= 0 || !g_set_threads || !g_get_threads) return;
  std::lock_guard<std::mutex> lock(g_threads_mu);
  active_ = true;
  if (g_threads_depth++ > 0) return;
  g_threads_saved = g_get_threads();
  g_threads_set = n;
  if (n != g_threads_saved) g_set_threads(n);
}

BlasThreads::~BlasThreads() {
  if (!active_) return;
  std::lock_guard<std::mutex> lock(g_threads_mu);
  if (--g_threads_depth == 0 && g_threads_set != g_threads_saved) g_set_threads(g_threads_saved);
}

void blas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  // a product OpenBLAS runs on the calling thread anyway needs no thread setting: attention's and convolution's
  // tiles call this thousands of times a step from the pool's threads, and the scope's mutex would serialise them
  BlasThreads threads(m * n * k > kBlasSerialMacs ? blas_kernel_threads() : 0);
  int oa = ta ? kTrans : kNoTrans, ob = tb ? kTrans : kNoTrans;
  if (g_ilp64)
    reinterpret_cast<sgemm64_t>(g_sgemm)(kRowMajor, oa, ob, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    reinterpret_cast<sgemm32_t>(g_sgemm)(kRowMajor, oa, ob, (int)m, (int)n, (int)k, alpha, a, (int)lda, b,
                                         (int)ldb, beta, c, (int)ldc);
}

void blas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
               const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  // a product OpenBLAS runs on the calling thread anyway needs no thread setting: attention's and convolution's
  // tiles call this thousands of times a step from the pool's threads, and the scope's mutex would serialise them
  BlasThreads threads(m * n * k > kBlasSerialMacs ? blas_kernel_threads() : 0);
  int oa = ta ? kTrans : kNoTrans, ob = tb ? kTrans : kNoTrans;
  if (g_ilp64)
    reinterpret_cast<dgemm64_t>(g_dgemm)(kRowMajor, oa, ob, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    reinterpret_cast<dgemm32_t>(g_dgemm)(kRowMajor, oa, ob, (int)m, (int)n, (int)k, alpha, a, (int)lda, b,
                                         (int)ldb, beta, c, (int)ldc);
}

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  PackedGemm pg = packed_gemm_stub[0].get();
  if (!pg || k == 0) return blas_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  pg(m, n, k, &alpha, a, ta ? 1 : lda, ta ? lda : 1, b, tb ? 1 : ldb, tb ? ldb : 1, &beta, c, ldc);
}

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  PackedGemm pg = packed_gemm_stub[1].get();
  if (!pg || k == 0) return blas_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  pg(m, n, k, &alpha, a, ta ? 1 : lda, ta ? lda : 1, b, tb ? 1 : ldb, tb ? ldb : 1, &beta, c, ldc);
}

namespace {

// A rows x cols matrix at byte strides (s0, s1) as a BLAS operand: rows contiguous (NoTrans, ld = s0) or
// columns contiguous (Trans: the stored matrix is its cols x rows transpose, ld = s1). False when neither.
bool blas_layout(int64_t rows, int64_t cols, npy_intp s0, npy_intp s1, int item, bool* trans, int64_t* ld) {
  // the BLAS needs ld >= max(1, stored columns) and 32-bit ld for an LP64 library
  const int64_t lim = g_ilp64 ? INT64_MAX : INT32_MAX;
  if ((cols <= 1 || s1 == item) && (rows <= 1 || (s0 > 0 && s0 % item == 0 && s0 / item >= cols))) {
    *trans = false;
    *ld = rows <= 1 ? std::max<int64_t>(cols, 1) : s0 / item;
    return *ld <= lim;
  }
  if ((rows <= 1 || s0 == item) && (cols <= 1 || (s1 > 0 && s1 % item == 0 && s1 / item >= rows))) {
    *trans = true;
    *ld = cols <= 1 ? std::max<int64_t>(rows, 1) : s1 / item;
    return *ld <= lim;
  }
  return false;
}

// One operand of a product: base pointer, layout of its matrices, byte strides of its batch dims.
struct Operand {
  PyArrayObject* a = nullptr;  // owned reference (the input or its contiguous copy)
  bool trans = false;
  int64_t ld = 1;
  ~Operand() { Py_XDECREF(a); }

  // false with an exception set when the copy fails
  bool init(PyArrayObject* x, int64_t rows, int64_t cols) {
    int nd = PyArray_NDIM(x);
    int item = (int)PyArray_ITEMSIZE(x);
    const npy_intp* st = PyArray_STRIDES(x);
    if (PyArray_ISALIGNED(x) && blas_layout(rows, cols, st[nd - 2], st[nd - 1], item, &trans, &ld)) {
      Py_INCREF(x);
      a = x;
      return true;
    }
    a = reinterpret_cast<PyArrayObject*>(PyArray_NewCopy(x, NPY_CORDER));
    if (!a) return false;
    trans = false;
    ld = std::max<int64_t>(cols, 1);
    return true;
  }
};

// C = A @ B + beta * C through the packed GEMM (kernels/gemm.inc), split over the pool into blocks of C: blocks of
// whole 32-column groups (each packs only its own columns of B; 32 is a multiple of every capability's sliver
// width) when the columns go round the threads evenly, else blocks of rows.
template <typename T>
void packed_mm(PackedGemm pg, int64_t m, int64_t n, int64_t k, const T* a, bool ta, int64_t lda, const T* b, bool tb,
               int64_t ldb, T beta, T* c, int64_t ldc) {
  const int64_t rsa = ta ? 1 : lda, csa = ta ? lda : 1, rsb = tb ? 1 : ldb, csb = tb ? ldb : 1;
  const T one(1);
  auto block = [&](int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    if (i1 > i0 && j1 > j0)
      pg(i1 - i0, j1 - j0, k, &one, a + i0 * rsa, rsa, csa, b + j0 * csb, rsb, csb, &beta, c + i0 * ldc + j0, ldc);
  };
  const int nt = in_parallel_region() ? 1 : get_num_threads();
  if (nt <= 1 || m * n * k <= kBlasSerialMacs) return block(0, m, 0, n);
  constexpr int64_t kGroup = 32;
  const int64_t groups = (n + kGroup - 1) / kGroup;
  // columns when they share out evenly (a GPT's 65-column output head as 2 + 1 groups would leave one thread a
  // single column), else rows while there are enough of them
  if (groups >= nt && (groups % nt == 0 || groups >= 4 * nt || m < 16 * nt)) {
    const int64_t per = (groups + nt - 1) / nt;
    parallel_for(0, nt, 1, [&](int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1; ++q) block(0, m, std::min(n, q * per * kGroup), std::min(n, (q + 1) * per * kGroup));
    });
    return;
  }
  const int64_t nblk = std::min<int64_t>(nt, std::max<int64_t>(1, m / 16));
  const int64_t per = (m + nblk - 1) / nblk;
  parallel_for(0, nblk, 1, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) block(std::min(m, q * per), std::min(m, (q + 1) * per), 0, n);
  });
}

// C = A @ B + beta * C for one (m, k) @ (k, n) product, with the NumPy kernel's special cases.
template <typename T>
void mm(int64_t m, int64_t n, int64_t k, const T* a, bool ta, int64_t lda, const T* b, bool tb, int64_t ldb,
        T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0 || k == 1) {
    // K = 0 leaves beta * C; K = 1 is an outer product, which the BLAS runs several times slower than this loop
    for (int64_t i = 0; i < m; ++i) {
      T* ci = c + i * ldc;
      T ai = k == 0 ? T(0) : (ta ? a[i] : a[i * lda]);
      if (beta == T(0)) {
        if (k == 0) std::fill(ci, ci + n, T(0));
        else if (tb) for (int64_t j = 0; j < n; ++j) ci[j] = ai * b[j * ldb];
        else for (int64_t j = 0; j < n; ++j) ci[j] = ai * b[j];
      } else if (k == 1) {
        if (tb) for (int64_t j = 0; j < n; ++j) ci[j] += ai * b[j * ldb];
        else for (int64_t j = 0; j < n; ++j) ci[j] += ai * b[j];
      }
    }
    return;
  }
  if (k >= 2 * kSplitK && k >= 16 * std::max(m, n)) {
    // long thin products (convolution weight gradients, K = N*H*W): OpenBLAS runs them on one core at a few
    // GFLOP/s, and summing GEMMs over K blocks is ~3x faster. The blocks run on the pool, each small enough to
    // stay on its thread, into their own partial products, summed in block order (the same sum for any number
    // of threads); too many partial products for memory: the blocks accumulate into C one after another
    const int64_t kb = std::min(kSplitK, std::max<int64_t>(256, kBlasSerialMacs / std::max<int64_t>(m * n, 1)));
    const int64_t nblk = (k + kb - 1) / kb;
    auto block = [&](int64_t p, T bt, T* cp, int64_t ldcp) {
      int64_t kk = std::min(kb, k - p);
      gemm(ta, tb, m, n, kk, T(1), ta ? a + p * lda : a + p, lda, tb ? b + p : b + p * ldb, ldb, bt, cp, ldcp);
    };
    if (get_num_threads() > 1 && nblk * m * n * (int64_t)sizeof(T) <= (int64_t(8) << 20)) {
      std::vector<T> part(nblk * m * n);
      parallel_for(0, nblk, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t i = b0; i < b1; ++i) block(i * kb, T(0), part.data() + i * m * n, n);
      });
      for (int64_t i = 0; i < m; ++i) {
        T* ci = c + i * ldc;
        if (beta == T(0)) std::fill(ci, ci + n, T(0));
        for (int64_t blk = 0; blk < nblk; ++blk) {
          const T* pi = part.data() + (blk * m + i) * n;
          for (int64_t j = 0; j < n; ++j) ci[j] += pi[j];
        }
      }
    } else {
      for (int64_t blk = 0; blk < nblk; ++blk) block(blk * kb, blk == 0 ? beta : T(1), c, ldc);
    }
    return;
  }
  if (m * k >= 32 && m * k <= 160 && n >= 16384) {
    // a tiny left factor times very wide columns (a CNN's first convolution, (6, 25) @ (25, N*H*W)): OpenBLAS
    // takes 2-6x longer on it than on column blocks that stay in cache; the blocks run on the pool, each small
    // enough for the BLAS to keep it on its thread
    const int64_t nb = 1024;  // at most 160 * 1024 multiply-adds: below kBlasSerialMacs
    parallel_for(0, (n + nb - 1) / nb, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t blk = b0; blk < b1; ++blk) {
        int64_t j = blk * nb, w = std::min(nb, n - j);
        gemm(ta, tb, m, w, k, T(1), a, lda, tb ? b + j * ldb : b + j, ldb, beta, c + j, ldc);
      }
    });
    return;
  }
  PackedGemm pg = packed_gemm_stub[sizeof(T) == 4 ? 0 : 1].get();
  if (pg && (g_pool_gemm || m * n * k <= kBlasSerialMacs)) {  // else TINYTORCH_GEMM_THREADS=blas: the BLAS's threads
    packed_mm<T>(pg, m, n, k, a, ta, lda, b, tb, ldb, beta, c, ldc);
    return;
  }
  if (g_pool_gemm && m * n * k > kBlasSerialMacs && get_num_threads() > 1 && !in_parallel_region()) {
    // the pool runs blocks of C's rows (or columns), each one single-threaded GEMM: threads that sleep soon after
    // a step's kernels end and a caller that never waits for a late one, instead of the BLAS's own spinning
    // threads. One block a thread: each block packs the whole other factor, so more blocks cost more packing
    // (128x784x256: 82 GFLOP/s with 4 blocks, 120 with 2)
    const bool by_rows = m >= n;
    const int64_t len = by_rows ? m : n;
    const int64_t nblk = std::min<int64_t>(get_num_threads(), std::max<int64_t>(1, len / 32));
    const int64_t blk = (len + nblk - 1) / nblk;
    parallel_for(0, nblk, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t q = b0; q < b1; ++q) {
        int64_t s0 = q * blk, w = std::min(blk, len - s0);
        if (w <= 0) continue;
        if (by_rows)
          gemm(ta, tb, w, n, k, T(1), ta ? a + s0 : a + s0 * lda, lda, b, ldb, beta, c + s0 * ldc, ldc);
        else
          gemm(ta, tb, m, w, k, T(1), a, lda, tb ? b + s0 * ldb : b + s0, ldb, beta, c + s0, ldc);
      }
    });
    return;
  }
  blas_gemm(ta, tb, m, n, k, T(1), a, lda, b, ldb, beta, c, ldc);  // threaded by the BLAS
}

template <typename T>
void run_batched(int64_t nbatch, int64_t m, int64_t n, int64_t k, const Operand& A, const Operand& B,
                 const std::vector<int64_t>& oa, const std::vector<int64_t>& ob, T* out) {
  const char* pa = PyArray_BYTES(A.a);
  const char* pb = PyArray_BYTES(B.a);
  int64_t macs = m * n * k;
  // a small product with a row-major right factor: the tile microkernel, which skips the BLAS's per-call packing
  TileGemm tile = macs <= kTileGemmMacs && k > 1 && !B.trans ? tile_gemm_stub[sizeof(T) == 4 ? 0 : 1].get() : nullptr;
  auto one = [&](int64_t i) {
    if (tile) {
      tile(m, n, k, pa + oa[i], A.trans ? 1 : A.ld, A.trans ? A.ld : 1, pb + ob[i], B.ld, out + i * m * n, n);
      return;
    }
    mm<T>(m, n, k, reinterpret_cast<const T*>(pa + oa[i]), A.trans, A.ld, reinterpret_cast<const T*>(pb + ob[i]),
          B.trans, B.ld, T(0), out + i * m * n, n);
  };
  // many products, each one GEMM on one thread: small ones always (threading inside a tiny product costs more
  // than it gains), larger ones too when the batch alone fills the pool twice over (attention's per-head
  // products) and the BLAS is single-threaded under the pool, so no thread waits inside a product
  const int nt = get_num_threads();
  if (nbatch > 1 && nt > 1 && (macs <= kBlasSerialMacs || (g_pool_gemm && nbatch >= 2 * nt))) {
    int64_t grain = std::max<int64_t>(1, (int64_t(1) << 16) / std::max<int64_t>(macs, 1));
    parallel_for(0, nbatch, grain, [&](int64_t b0, int64_t b1) {
      for (int64_t i = b0; i < b1; ++i) one(i);
    });
  } else {
    for (int64_t i = 0; i < nbatch; ++i) one(i);
  }
}

// matmul(a, b): (..., m, k) @ (..., k, n) with broadcast batch dims, float32/float64, same dtype.
TT_ENTRY(py_matmul) {
  PyArrayObject *a, *b;
  TT_ARGS(a, b);
  if (!blas_available() || loop_index(a) < 0 || PyArray_TYPE(b) != PyArray_TYPE(a)) return not_implemented();
  int nda = PyArray_NDIM(a), ndb = PyArray_NDIM(b);
  if (nda < 2 || ndb < 2 || nda > NPY_MAXDIMS || ndb > NPY_MAXDIMS) return not_implemented();
  const npy_intp* da = PyArray_DIMS(a);
  const npy_intp* db = PyArray_DIMS(b);
  int64_t m = da[nda - 2], k = da[nda - 1], n = db[ndb - 1];
  if (db[ndb - 2] != k) return not_implemented();
  // broadcast batch shape and each operand's batch strides (0 where broadcast)
  int nb = std::max(nda, ndb) - 2;
  std::vector<npy_intp> oshape(nb + 2);
  std::vector<int64_t> sa(nb, 0), sb(nb, 0);
  int64_t nbatch = 1;
  for (int i = 0; i < nb; ++i) {
    int ia = i - (nb - (nda - 2)), ib = i - (nb - (ndb - 2));
    npy_intp xa = ia >= 0 ? da[ia] : 1, xb = ib >= 0 ? db[ib] : 1;
    if (xa != xb && xa != 1 && xb != 1) return not_implemented();
    oshape[i] = std::max(xa, xb);
    if (xa == 0 || xb == 0) oshape[i] = 0;
    nbatch *= oshape[i];
  }
  oshape[nb] = m;
  oshape[nb + 1] = n;
  PyArrayObject* out = empty(nb + 2, oshape.data(), PyArray_TYPE(a));
  if (!out || nbatch == 0 || m == 0 || n == 0) return reinterpret_cast<PyObject*>(out);
  Operand A, B;
  if (!A.init(a, m, k) || !B.init(b, k, n)) {
    Py_DECREF(out);
    return nullptr;
  }
  for (int i = 0; i < nb; ++i) {
    int ia = i - (nb - (nda - 2)), ib = i - (nb - (ndb - 2));
    if (ia >= 0 && da[ia] != 1) sa[i] = PyArray_STRIDES(A.a)[ia];
    if (ib >= 0 && db[ib] != 1) sb[i] = PyArray_STRIDES(B.a)[ib];
  }
  // a right factor shared by the whole batch and a left one whose batch dims continue its rows: one
  // (batch*m, k) @ (k, n) GEMM instead of a loop of small ones
  bool b_shared = std::all_of(sb.begin(), sb.end(), [](int64_t s) { return s == 0; });
  if (b_shared && nbatch > 1 && !A.trans) {
    int item = (int)PyArray_ITEMSIZE(a);
    // the batch dims must coalesce into one stride, which must be m rows (or, for m = 1, at least k elements)
    int64_t inner = 0, expect = 0;
    bool fold = true;
    for (int i = nb - 1; i >= 0 && fold; --i) {
      if (oshape[i] == 1) continue;
      if (inner == 0) inner = expect = sa[i];
      else if (sa[i] != expect) fold = false;
      expect *= oshape[i];
    }
    if (fold && m > 1 && inner == A.ld * item * m) {
      m *= nbatch;
      nbatch = 1;
    } else if (fold && m == 1 && inner > 0 && inner % item == 0 && inner / item >= k) {
      A.ld = inner / item;
      m = nbatch;
      nbatch = 1;
    }
  }
  std::vector<int64_t> oa(nbatch), ob(nbatch);
  {
    std::vector<npy_intp> idx(nb, 0);
    int64_t pa = 0, pb = 0;
    for (int64_t t = 0; t < nbatch; ++t) {
      oa[t] = pa;
      ob[t] = pb;
      for (int i = nb - 1; i >= 0; --i) {
        if (++idx[i] < oshape[i]) {
          pa += sa[i];
          pb += sb[i];
          break;
        }
        pa -= sa[i] * (oshape[i] - 1);
        pb -= sb[i] * (oshape[i] - 1);
        idx[i] = 0;
      }
    }
  }
  const DType dt = dtype_of(a);  // read with the GIL held
  run_released(nbatch * m * n * std::max<int64_t>(k, 1), [&] {
    BlasThreads threads(blas_kernel_threads());  // one set and restore for the call's every GEMM
    TT_DISPATCH_FLOATING_TYPES(dt, "matmul", [&] {
      run_batched<scalar_t>(nbatch, m, n, k, A, B, oa, ob, reinterpret_cast<scalar_t*>(PyArray_BYTES(out)));
    });
  });
  return reinterpret_cast<PyObject*>(out);
}

// linear(x, w, b): x (..., k) @ w.T + b, w (n, k), b (n,) or None; NotImplemented for other bias shapes.
TT_ENTRY(py_linear) {
  PyArrayObject *x, *w;
  Opt<PyArrayObject*> b;
  TT_ARGS(x, w, b);
  PyArrayObject* bias = b.has ? b.v : nullptr;
  if (!blas_available() || loop_index(x) < 0 || PyArray_TYPE(w) != PyArray_TYPE(x) ||
      (bias && PyArray_TYPE(bias) != PyArray_TYPE(x)))
    return not_implemented();
  int ndx = PyArray_NDIM(x);
  if (ndx < 1 || ndx > NPY_MAXDIMS || PyArray_NDIM(w) != 2) return not_implemented();
  int64_t k = PyArray_DIMS(x)[ndx - 1], n = PyArray_DIMS(w)[0];
  if (PyArray_DIMS(w)[1] != k) return not_implemented();
  if (bias && !(PyArray_NDIM(bias) == 1 && PyArray_DIMS(bias)[0] == n)) return not_implemented();
  int64_t m = 1;
  for (int i = 0; i < ndx - 1; ++i) m *= PyArray_DIMS(x)[i];
  std::vector<npy_intp> oshape(PyArray_DIMS(x), PyArray_DIMS(x) + ndx);
  oshape[ndx - 1] = n;
  PyArrayObject* out = empty(ndx, oshape.data(), PyArray_TYPE(x));
  if (!out || m == 0 || n == 0) return reinterpret_cast<PyObject*>(out);
  // x as an (m, k) matrix: its leading dims must continue its rows, else a contiguous copy
  int item = (int)PyArray_ITEMSIZE(x);
  npy_intp s0 = k * item, s1 = item;
  bool ok = PyArray_ISALIGNED(x);
  if (ndx >= 2) {
    s1 = PyArray_STRIDES(x)[ndx - 1];
    int64_t expect = -1;
    for (int i = ndx - 2; i >= 0 && ok; --i) {
      npy_intp d = PyArray_DIMS(x)[i], s = PyArray_STRIDES(x)[i];
      if (d == 1) continue;
      if (expect < 0) s0 = s;
      else if (s != expect) ok = false;
      expect = (expect < 0 ? s : expect) * d;
    }
  } else if (k > 1) {
    s1 = PyArray_STRIDES(x)[0];
  }
  Operand X, W;
  X.ld = 1;
  if (ok && blas_layout(m, k, s0, s1, item, &X.trans, &X.ld)) {
    Py_INCREF(x);
    X.a = x;
  } else {
    X.a = reinterpret_cast<PyArrayObject*>(PyArray_NewCopy(x, NPY_CORDER));
    X.trans = false;
    X.ld = std::max<int64_t>(k, 1);
  }
  // w.T as a (k, n) matrix
  bool wok = PyArray_ISALIGNED(w) && blas_layout(k, n, PyArray_STRIDES(w)[1], PyArray_STRIDES(w)[0],
                                                 (int)PyArray_ITEMSIZE(w), &W.trans, &W.ld);
  if (wok) {
    Py_INCREF(w);
    W.a = w;
  } else {
    W.a = reinterpret_cast<PyArrayObject*>(PyArray_NewCopy(w, NPY_CORDER));
    W.trans = true;  // the contiguous (n, k) copy is w.T stored transposed
    W.ld = std::max<int64_t>(k, 1);
  }
  if (!X.a || !W.a) {
    Py_DECREF(out);
    return nullptr;
  }
  const char* pbias = bias ? PyArray_BYTES(bias) : nullptr;
  npy_intp bs = bias ? PyArray_STRIDES(bias)[0] : 0;
  char* pout = PyArray_BYTES(out);
  auto run = [&](auto* c) {
    using T = std::remove_pointer_t<decltype(c)>;
    if (pbias) {
      // C starts as the broadcast bias and the GEMM adds to it (beta = 1): no second pass over the output
      for (int64_t j = 0; j < n; ++j) c[j] = *reinterpret_cast<const T*>(pbias + j * bs);
      for (int64_t i = 1; i < m; ++i) std::copy(c, c + n, c + i * n);
    }
    mm<T>(m, n, k, reinterpret_cast<const T*>(PyArray_BYTES(X.a)), X.trans, X.ld,
          reinterpret_cast<const T*>(PyArray_BYTES(W.a)), W.trans, W.ld, pbias ? T(1) : T(0), c, n);
  };
  const DType dt = dtype_of(x);  // read with the GIL held
  run_released(m * n * std::max<int64_t>(k, 1), [&] {
    BlasThreads threads(blas_kernel_threads());
    TT_DISPATCH_FLOATING_TYPES(dt, "linear", [&] { run(reinterpret_cast<scalar_t*>(pout)); });
  });
  return reinterpret_cast<PyObject*>(out);
}

// set_blas(sgemm_address, dgemm_address, ilp64, set_threads_address=0, get_threads_address=0): the cblas_sgemm /
// cblas_dgemm to call (0, 0 disables) and OpenBLAS's thread-count functions (0: the count is left alone)
PyObject* py_set_blas(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3 && nargs != 5) {
    PyErr_SetString(PyExc_TypeError, "set_blas(sgemm, dgemm, ilp64, set_threads=0, get_threads=0)");
    return nullptr;
  }
  void* addr[4] = {};
  for (int i = 0; i < (nargs == 5 ? 4 : 2); ++i) {
    addr[i] = PyLong_AsVoidPtr(args[i < 2 ? i : i + 1]);
    if (PyErr_Occurred()) return nullptr;
  }
  int ilp64 = PyObject_IsTrue(args[2]);
  if (ilp64 < 0) return nullptr;
  std::lock_guard<std::mutex> lock(g_threads_mu);
  if (g_threads_depth) {  // a GEMM is running on another thread: its scope must restore with the old functions
    PyErr_SetString(PyExc_RuntimeError, "set_blas: a native GEMM is running");
    return nullptr;
  }
  g_sgemm = addr[0];
  g_dgemm = addr[1];
  g_ilp64 = ilp64 != 0;
  g_set_threads = addr[2] && addr[3] ? reinterpret_cast<set_threads_t>(addr[2]) : nullptr;
  g_get_threads = addr[2] && addr[3] ? reinterpret_cast<get_threads_t>(addr[3]) : nullptr;
  Py_RETURN_NONE;
}

}  // namespace

// set_gemm_pool(on): large GEMMs split over the pool (on) or threaded by the BLAS (off)
PyObject* py_set_gemm_pool(PyObject*, PyObject* arg) {
  int on = PyObject_IsTrue(arg);
  if (on < 0) return nullptr;
  g_pool_gemm = on;
  Py_RETURN_NONE;
}

PyMethodDef blas_methods[] = {
    {"set_gemm_pool", py_set_gemm_pool, METH_O, "split large GEMMs over the pool (True) or leave them to the BLAS"},
    {"set_blas", (PyCFunction)(void (*)(void))py_set_blas, METH_FASTCALL, "the BLAS GEMMs the products call"},
    TT_METHOD("matmul", py_matmul, "batched, broadcast matrix product"),
    TT_METHOD("linear", py_linear, "x @ w.T + b"),
    {nullptr, nullptr, 0, nullptr}};

}  // namespace tt
