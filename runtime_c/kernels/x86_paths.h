/* The AVX-512F paths that are kernels of their own (the implicit GEMM's, conv_*_x86.c; the float
 * MaxPool's, pool_max_*_x86.c): the compiler picks one per node (aot/kernels/conv_x86.py,
 * aot/kernels/pool.py), so a bundle compiles only the paths its nodes take. Given a node its path
 * does not take (a bundle built without AVX-512F, or the Python side's choice and the C's
 * disagreeing), an entry runs the plain kernel instead, with the same result. The tests build with
 * AOTC_STRICT_PATHS, where a disagreement stops the program, so that the Python side's choice is
 * checked against the C it stands for. Internal to runtime_c/kernels. */
#ifndef AOTC_X86_PATHS_H
#define AOTC_X86_PATHS_H

#if defined(AOTC_STRICT_PATHS)
#include <stdio.h>
#include <stdlib.h>
#define X86_PATH_MISSED(kernel) (fprintf(stderr, "aotc: %s did not take this node\n", kernel), abort())
#else
#define X86_PATH_MISSED(kernel) ((void)0)
#endif

#endif
