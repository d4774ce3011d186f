/* ONNX Greater and GreaterOrEqual: bool (uint8_t) results for every dtype (see elementwise_impl.h). */
#include "elementwise_impl.h"

AOTC_CMP_ALL(greater, x0 > x1)
AOTC_CMP_ALL(greater_equal, x0 >= x1)
