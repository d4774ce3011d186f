/* Data movement kernels: copies, concatenation, slicing, transposition, padding,
 * gathering and casts. They move bytes, so most work for any dtype. */
#ifndef AOTC_SHAPE_H
#define AOTC_SHAPE_H

#include "aotc_common.h"

/* dst[0..nbytes) = src[0..nbytes); src and dst may be the same. */
void aotc_copy(size_t nbytes, const void *src, void *dst);

#endif /* AOTC_SHAPE_H */
