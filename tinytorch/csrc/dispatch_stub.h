// Run-time choice of the instruction set, as ATen's DispatchStub: the inner loops (kernels/*.inc) are compiled
// once per CPU capability (cpu_default.cpp, cpu_avx2.cpp, cpu_avx512.cpp, each under its own namespace and
// `#pragma GCC target`), each registers its function in a Stub, and callers get the best one the CPU running
// them supports. TINYTORCH_CPU_CAPABILITY=default|avx2|avx512 caps the choice (to test the other loops).
#pragma once
#include <cstdint>

namespace tt {

enum Capability : int { CAP_DEFAULT = 0, CAP_AVX2 = 1, CAP_AVX512 = 2, CAP_COUNT = 3 };

Capability cpu_capability();
const char* capability_name(Capability c);

template <typename Fn>
struct Stub {
  Fn impl[CAP_COUNT] = {};
  Fn get() const {
    for (int c = cpu_capability(); c >= 0; --c)
      if (impl[c]) return impl[c];
    return nullptr;
  }
};

// 1-d inner loop over n elements of several operands: data[i] advances by strides[i] bytes (TensorIterator's
// basic loop). Operand 0 is the output.
using Loop1d = void (*)(char** data, const int64_t* strides, int64_t n, const double* scalars);

}  // namespace tt

// inside a kernels/*.inc file: register `fn` for the capability being compiled
#define TT_REGISTER(stub, fn) \
  static const int TT_CAT(reg_, __COUNTER__) = ((stub).impl[TT_CAPABILITY_INDEX] = (fn), 0)
#define TT_CAT_(a, b) a##b
#define TT_CAT(a, b) TT_CAT_(a, b)
