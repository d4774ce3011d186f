/* The AVX-512F paths that are kernels of their own (the implicit GEMM's, conv_*_avx512.c; the float
 * MaxPool's, pool_max_*_avx512.c): the compiler picks one per node (aot/kernels/conv_avx512.py,
 * aot/kernels/pool.py), so a bundle compiles only the paths its nodes take.
 *
 * One rule for all of them: where AOTC_X86_PATHS is 1 (__AVX512F__ defined, AOTC_NO_INTRINSICS not),
 * an entry runs its path and nothing else. It never references the plain kernel (conv_implicit.c's
 * aotc_conv_implicit_f32, pool_max.c's aotc_maxpool_f32), so an AVX-512F build need not compile that
 * file (the bundle's CMakeLists.txt compiles it only when a configure check finds the rule false), and
 * a node the path does not take means the compiler's choice and the C disagree: a compiler bug, so
 * X86_PATH_MISSED prints the entry and aborts. Where AOTC_X86_PATHS is 0 (a bundle built without
 * AVX-512F) the entry runs the plain kernel, with the same result. Internal to runtime_c/kernels. */
#ifndef AOTC_X86_PATHS_H
#define AOTC_X86_PATHS_H

#if defined(__AVX512F__) && !defined(AOTC_NO_INTRINSICS)
#define AOTC_X86_PATHS 1
#if defined(AOTC_TEST_X86_PATHS)
/* tests/kernels_c/test_{conv,pool}_kernels.c give every entry every case: a miss returns, naming the entry
 * here, and the test skips that case for that entry */
extern const char *aotc_test_avx512_path_missed;
#define X86_PATH_MISSED(kernel) (void)(aotc_test_avx512_path_missed = (kernel))
#else
#include <stdio.h>
#include <stdlib.h>
#define X86_PATH_MISSED(kernel) (fprintf(stderr, "aotc: %s did not take this node\n", kernel), abort())
#endif
#else
#define AOTC_X86_PATHS 0
#endif

#endif
