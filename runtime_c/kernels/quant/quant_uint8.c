/* The quantized kernels of quant_impl.h for uint8 activations (_u8); see quant_int8.c. */
#include "quant_config.h"

#define QT uint8_t
#define QT_MIN 0
#define QT_MAX 255
#define AOTC_Q(name) aotc_##name##_u8
#define AOTC_QOFFSET 0
#include "quant_impl.h"
