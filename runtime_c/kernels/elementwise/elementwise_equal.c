/* ONNX Equal: a bool (uint8_t) result for every dtype (see elementwise_impl.h). */
#include "elementwise_impl.h"

AOTC_CMP_ALL(equal, x0 == x1)
AOTC_BINARY(equal, b8, uint8_t, uint8_t, (x0 != 0) == (x1 != 0))
