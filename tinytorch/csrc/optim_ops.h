// Stubs of the native multi-tensor optimizer updates (kernels/optim.inc has the loops, optim.cpp the Python
// entry points).
#pragma once
#include "dispatch_stub.h"

namespace tt {

// Operand slots of one tensor's update: the parameter, its gradient and up to three state buffers, each a
// contiguous buffer of n elements (already offset to the chunk being run).
enum OptimOperand : int { OPT_PARAM, OPT_GRAD, OPT_S0, OPT_S1, OPT_S2, OPT_OPERANDS };

// Flags of an update (bits; the low two are common, the next ones are per optimizer): which terms it has.
enum OptimFlag : int {
  OPT_MAXIMIZE = 1, OPT_WEIGHT_DECAY = 2,       // every optimizer (Adam: L2 weight decay, added to the gradient)
  OPT_DECOUPLED = 4, OPT_AMSGRAD = 8,           // Adam (OPT_DECOUPLED: AdamW's decay of the parameter)
  OPT_MOMENTUM = 4, OPT_NESTEROV = 8, OPT_FIRST_STEP = 16,  // SGD
  OPT_CENTERED = 4, OPT_RMS_MOMENTUM = 8,       // RMSprop
};

// (operands, n, coefficients, flags): the update of n elements of one tensor; the coefficients (doubles,
// cast to the element type in the loop) are per tensor, laid out per optimizer (see optim.cpp).
using OptimLoop = void (*)(char* const* data, int64_t n, const double* c, int flags);
extern Stub<OptimLoop> adam_stub[2];
extern Stub<OptimLoop> sgd_stub[2];
extern Stub<OptimLoop> rmsprop_stub[2];
extern Stub<OptimLoop> adagrad_stub[2];

}  // namespace tt
