/* The quantized kernels of quant_impl.h for int8 activations (_i8). One file per element type so that a
 * build compiles the two in parallel: each is the largest compile of the runtime. */
#include "quant_config.h"

#define QT int8_t
#define QT_MIN (-128)
#define QT_MAX 127
#define AOTC_Q(name) aotc_##name##_i8
#define AOTC_QOFFSET 128 /* the patches hold x + 128 as unsigned bytes */
#include "quant_impl.h"
