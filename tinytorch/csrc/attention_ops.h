// The fused attention kernel's tiles (kernels/attention.inc, compiled once per CPU capability) and what
// attention.cpp, its Python entry points, hands them: the problem's geometry, its operands read through element
// strides, and the per-thread scratch that the tile loops use (allocated once per chunk of tiles, never inside).
#pragma once
#include <cstdint>

#include "dispatch_stub.h"

namespace tt {

constexpr int64_t kAttnBlockQ = 64;  // query rows per tile
constexpr int64_t kAttnBlockK = 64;  // key rows per tile: a 64 x 64 score tile (16 KiB in float32) stays in L1/L2

// The mask as the kernel reads it: kind 0 none, 1 bool (true = attend), 2 additive; byte strides of (B, H, L, S).
struct AttnMask {
  int kind = 0;
  const char* p = nullptr;
  int64_t sb = 0, sh = 0, sl = 0, ss = 0;
};

// One 4-D operand: element pointer and element strides of its (batch, head, row) dims; columns contiguous.
struct AttnOperand {
  const void* p = nullptr;
  int64_t sb = 0, sh = 0, sr = 0;
};

// q (B, H, L, E), k (B, Hk, S, E), v (B, Hk, S, Ev); g and o (the output's gradient and the output) as q with Ev
// columns; out (B, H, L, Ev), lse (B, H, L), dq, dk, dv, dmask C-contiguous.
struct AttnArgs {
  int64_t B = 0, H = 0, Hk = 0, L = 0, S = 0, E = 0, Ev = 0;
  bool causal = false;
  double scale = 1.0;
  AttnMask mask;
  AttnOperand q, k, v, g, o;
  void* out = nullptr;
  void* lse = nullptr;
  void *dq = nullptr, *dk = nullptr, *dv = nullptr, *dmask = nullptr;
};

// Elements of scratch (of the dtype) one thread needs for the forward's or the backward's tiles.
inline int64_t attn_scratch_elems(const AttnArgs& a, bool backward) {
  const int64_t tile = kAttnBlockQ * kAttnBlockK, e = a.E > a.Ev ? a.E : a.Ev;
  return backward ? 2 * tile + kAttnBlockQ + 2 * e * kAttnBlockK
                  : tile + kAttnBlockQ * a.Ev + 2 * kAttnBlockQ + a.E * kAttnBlockK;
}

// Forward tiles t in [t0, t1): t = (b * H + h) * ceil(L / kAttnBlockQ) + query block.
using AttnForwardTiles = void (*)(const AttnArgs& a, int64_t t0, int64_t t1, void* scratch);
// Backward items t in [t0, t1): t = b * Hk + key/value head; each owns the dk, dv of its head (no atomics).
using AttnBackwardItems = void (*)(const AttnArgs& a, int64_t t0, int64_t t1, void* scratch);
extern Stub<AttnForwardTiles> attn_forward_stub[2];    // float32, float64
extern Stub<AttnBackwardItems> attn_backward_stub[2];  // float32, float64

}  // namespace tt
