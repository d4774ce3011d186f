/* ONNX Less and LessOrEqual: bool (uint8_t) results for every dtype (see elementwise_impl.h). */
#include "elementwise_impl.h"

AOTC_CMP_ALL(less, x0 < x1)
AOTC_CMP_ALL(less_equal, x0 <= x1)
