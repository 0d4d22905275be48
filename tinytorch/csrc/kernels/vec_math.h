// Branch-free float32 math that GCC vectorizes (no libm calls in the loop), included inside each capability's
// namespace so every instruction set gets its own copy. Accuracy: exp ~1 ulp (Cephes' expf polynomial with
// exact subnormal/overflow/NaN handling), tanh ~2 ulp (Cephes' tanhf: a polynomial below 0.625, the exp form
// above), erf with ATen's vectorized erf (Abramowitz & Stegun 7.1.26, |error| < 1.5e-7), the same formula
// PyTorch's CPU GELU uses.
#pragma once
#define TT_INLINE __attribute__((always_inline))

// a * b + c, rounded once (an FMA instruction) where the capability has one (TT_HAS_FMA: the AVX2 and AVX-512
// files, and the fused kernels compiled for them), else twice. Written out because both the native loops and the
// fused kernels of tinytorch.compile are compiled without contraction, so that they round alike: GCC fuses nothing
// by itself, and the polynomials keep their FMAs' speed.
#if defined(TT_HAS_FMA)
#define TT_MADD(a, b, c) __builtin_fmaf((a), (b), (c))
#else
#define TT_MADD(a, b, c) ((a) * (b) + (c))
#endif

static inline TT_INLINE float tt_bits_to_float(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

// Cephes' polynomial on r = x - n ln2, n = floor(x log2(e) + 1/2), with 2^n in two factors so results in the
// subnormal range are exact too. The input is not clamped: where n overflows the conversion (|x| large, NaN),
// the three selects at the end give the result (inf, 0, the NaN itself), so garbage in between is never seen.
static inline TT_INLINE float tt_exp_poly(float x, float n) {
  float r = TT_MADD(n, -0.693359375f, x);  // n * ln2_hi is exact
  r = TT_MADD(n, 2.12194440e-4f, r);
  float z = r * r;
  float y = 1.9875691500E-4f;
  y = TT_MADD(y, r, 1.3981999507E-3f);
  y = TT_MADD(y, r, 8.3334519073E-3f);
  y = TT_MADD(y, r, 4.1665795894E-2f);
  y = TT_MADD(y, r, 1.6666665459E-1f);
  y = TT_MADD(y, r, 5.0000001201E-1f);
  return TT_MADD(y, z, r) + 1.0f;
}

static inline TT_INLINE float tt_exp_round(float x) {
  float v = TT_MADD(x, 1.44269504088896341f, 0.5f);
#if defined(TT_HAS_ROUND)  // set by the AVX2 and AVX-512 capability files (#pragma GCC target defines no ISA macros)
  return __builtin_floorf(v);  // one rounding instruction
#else
  // SSE2 has no rounding instruction: floor through a truncating conversion instead of a libm call
  float t = (float)(int32_t)v;
  return t - (t > v ? 1.0f : 0.0f);
#endif
}

static inline TT_INLINE float tt_exp(float x) {
  float n = tt_exp_round(x);
  float y = tt_exp_poly(x, n);
  int32_t ni = (int32_t)n;
  int32_t n1 = ni >> 1, n2 = ni - n1;
  y = y * tt_bits_to_float((uint32_t)(n1 + 127) << 23) * tt_bits_to_float((uint32_t)(n2 + 127) << 23);
  y = x > 88.72283935546875f ? __builtin_inff() : y;
  y = x < -103.972084045410f ? 0.0f : y;
  return x != x ? x : y;
}

// exp(x) for x <= 0 where only normal results matter: tt_exp's value down to x = -87 (2^n is one factor there,
// n >= -126), 0 below. A NaN gives an unspecified value: the caller (tt_erf) gets its NaN from elsewhere.
static inline TT_INLINE float tt_exp_nonpos(float x) {
  float n = tt_exp_round(x);
  float y = tt_exp_poly(x, n);
  y = y * tt_bits_to_float((uint32_t)((int32_t)n + 127) << 23);
  return x < -87.0f ? 0.0f : y;
}

static inline TT_INLINE double tt_exp(double x) { return __builtin_exp(x); }

static inline TT_INLINE float tt_tanh(float x) {
  float ax = __builtin_fabsf(x);
  float z = x * x;
  float p = -5.70498872745E-3f;
  p = TT_MADD(p, z, 2.06390887954E-2f);
  p = TT_MADD(p, z, -5.37397155531E-2f);
  p = TT_MADD(p, z, 1.33314422036E-1f);
  p = TT_MADD(p, z, -3.33332819422E-1f);
  float small = TT_MADD(p * z, x, x);
  float e = tt_exp(2.0f * ax);
  float big = 1.0f - 2.0f / (e + 1.0f);
  big = __builtin_copysignf(big, x);
  // x == 0 keeps the sign of zero (the polynomial's products would give +0 for -0)
  return ax < 0.625f ? (x == 0.0f ? x : small) : (x != x ? x : big);
}

static inline TT_INLINE double tt_tanh(double x) { return __builtin_tanh(x); }

static inline TT_INLINE float tt_sigmoid(float x) { return 1.0f / (1.0f + tt_exp(-x)); }
static inline TT_INLINE double tt_sigmoid(double x) { return 1.0 / (1.0 + __builtin_exp(-x)); }

static inline TT_INLINE float tt_erf(float x) {
  float ax = __builtin_fabsf(x);
  float t = 1.0f / TT_MADD(0.3275911f, ax, 1.0f);
  float r = 1.061405429f;
  r = TT_MADD(r, t, -1.453152027f);
  r = TT_MADD(r, t, 1.421413741f);
  r = TT_MADD(r, t, -0.284496736f);
  r = TT_MADD(r, t, 0.254829592f);
  // exp(-x^2) below 1.7e-38 (|x| > 9.3) changes nothing: 1 - r t e rounds to 1 either way
  float y = TT_MADD(-(r * t), tt_exp_nonpos(-x * x), 1.0f);
  return __builtin_copysignf(y, x);
}

static inline TT_INLINE double tt_erf(double x) { return __builtin_erf(x); }

// float16 / bfloat16 <-> float32, bit-exact with round-to-nearest-even (F. Giesen's float_to_half_fast3_rtne;
// bfloat16 is the top half of a float32). The pointwise loops of the 16-bit types convert blocks through float32,
// as ATen's Vectorized<Half> / Vectorized<BFloat16> do.
static inline TT_INLINE uint32_t tt_float_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }

static inline TT_INLINE float tt_half_to_float(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;
  // shift exponent and mantissa into place and rebias by 2^(127-15): exact for normals and subnormals
  float f = tt_bits_to_float(em << 13) * 5.192296858534828e+33f;
  if (em >= 0x7c00u) f = tt_bits_to_float((em << 13) | 0x7f800000u);  // inf, NaN (payload kept)
  return tt_bits_to_float(tt_float_bits(f) | sign);
}

static inline TT_INLINE uint16_t tt_float_to_half(float f) {
  uint32_t u = tt_float_bits(f);
  const uint32_t sign = u & 0x80000000u;
  u ^= sign;
  uint32_t o;
  if (u >= (uint32_t)(127 + 16) << 23) {
    o = u > 0x7f800000u ? 0x7e00u : 0x7c00u;  // NaN -> quiet NaN, too large -> inf
  } else if (u < (uint32_t)113 << 23) {
    // subnormal result: let the FPU round by adding a magic number whose ulp is the half subnormal step
    const uint32_t magic = (uint32_t)((127 - 15) + (23 - 10) + 1) << 23;
    o = tt_float_bits(tt_bits_to_float(u) + tt_bits_to_float(magic)) - magic;
  } else {
    const uint32_t mant_odd = (u >> 13) & 1u;
    u += ((uint32_t)(15 - 127) << 23) + 0xfffu + mant_odd;
    o = u >> 13;
  }
  return (uint16_t)(o | (sign >> 16));
}

static inline TT_INLINE float tt_bf16_to_float(uint16_t h) { return tt_bits_to_float((uint32_t)h << 16); }

static inline TT_INLINE uint16_t tt_float_to_bf16(float f) {
  uint32_t u = tt_float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);  // NaN stays a quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
