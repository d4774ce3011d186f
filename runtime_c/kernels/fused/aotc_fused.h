/* Loops the code generator writes itself: a tree of elementwise ops fused into one pass
 * (aot/passes/fuse_elementwise.py). Each op is the expression its own kernel computes, so the
 * fused loop needs only the kernels' inline helpers, and gives the same bits. */
#ifndef AOTC_FUSED_H
#define AOTC_FUSED_H

#include <math.h>
#include <stddef.h>

#include "fast_math.h"

#endif
