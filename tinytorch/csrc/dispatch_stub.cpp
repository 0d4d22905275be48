#include "dispatch_stub.h"

#include <cstdlib>
#include <cstring>

namespace tt {

static Capability detect() {
  __builtin_cpu_init();
  Capability best = CAP_DEFAULT;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) best = CAP_AVX2;
  if (best == CAP_AVX2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    best = CAP_AVX512;
  const char* env = std::getenv("TINYTORCH_CPU_CAPABILITY");
  if (env) {
    Capability cap = !std::strcmp(env, "default") ? CAP_DEFAULT : !std::strcmp(env, "avx2") ? CAP_AVX2 : CAP_AVX512;
    if (cap < best) best = cap;
  }
  return best;
}

Capability cpu_capability() {
  static const Capability c = detect();
  return c;
}

const char* capability_name(Capability c) {
  return c == CAP_AVX512 ? "avx512" : c == CAP_AVX2 ? "avx2" : "default";
}

}  // namespace tt
