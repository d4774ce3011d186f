/* ONNX Max, Min (float32 and float64, broadcasting) and PRelu: rarer in float models than the
 * arithmetic of elementwise.c, so a file of their own (elementwise_impl.h). */
#include "elementwise_impl.h"

/* NaN propagates, as in ONNX */
AOTC_FLOATS(AOTC_BINARY, max, (x0 > x1 || x0 != x0) ? x0 : x1)
AOTC_FLOATS(AOTC_BINARY, min, (x0 < x1 || x0 != x0) ? x0 : x1)
AOTC_BINARY(prelu, f32, float, float, x0 < 0.0f ? x0 * x1 : x0)
