/* ONNX data movement ops. Reference kernels: portable C99, no allocation. */
#include "aotc_shape.h"

#include <string.h>

void aotc_copy(size_t nbytes, const void *src, void *dst) {
    if (src != dst) memmove(dst, src, nbytes);
}
