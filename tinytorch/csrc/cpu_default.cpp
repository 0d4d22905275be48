// The inner loops (kernels/*.inc) compiled for the CPU capability "default"; dispatch_stub.h picks at run time.
// Standard headers come first so that only our loops get the target attribute.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <type_traits>

#include "dispatch_stub.h"

#define TT_CAPABILITY cpu_default
#define TT_CAPABILITY_INDEX tt::CAP_DEFAULT

#include "kernels/all.inc"
