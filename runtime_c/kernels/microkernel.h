/* Building blocks of the register-tile kernels ("micro-kernels") shared by the GEMM core
 * (gemm.c) and the conv strategies that keep their sums in registers (conv_implicit.c,
 * conv_direct.c, conv_depthwise*.c, conv_flat3x3.c). Internal to runtime_c/kernels: no
 * generated code includes it.
 *
 * A tile is R rows of W accumulators, c0[W] .. c<R-1>[W]: plain float arrays that gcc -O3
 * keeps in vector registers (no intrinsics). MK_ROWSn(X, W) applies the macro X(i, W) to rows
 * i = 0 .. n - 1, so that one macro body defines the kernels of every tile height; the tile
 * sizes are AOTC_GEMM_MR x AOTC_GEMM_NR (aotc_gemm.h). Inner loops that sum over k step a
 * pointer until it reaches its end: compilers cannot count their trips, so they vectorise
 * along the tile's columns instead of k (an in-order reduction over k, much slower). */
#ifndef AOTC_MICROKERNEL_H
#define AOTC_MICROKERNEL_H

#include <math.h>
#include <string.h>

/* a * b + c, fused where the target has a fast fma (FP_FAST_FMAF is C99) */
#if defined(FP_FAST_FMAF)
#define MK_MADD(a, b, c) fmaf((a), (b), (c))
#else
#define MK_MADD(a, b, c) ((a) * (b) + (c))
#endif

/* Kernels stay separate functions (MK_NOINLINE): inlined into the blocking loops, they lose
 * their registers to the loops' variables. MK_NOCLONE also keeps gcc from cloning a function
 * for a constant argument. MK_INLINE: inlined always (a run of blocks into each plane loop). */
#if defined(__GNUC__) || defined(__clang__)
#define MK_NOINLINE __attribute__((noinline))
#define MK_INLINE inline __attribute__((always_inline))
#else
#define MK_NOINLINE
#define MK_INLINE inline
#endif
#if defined(__GNUC__) && !defined(__clang__)
#define MK_NOCLONE __attribute__((noinline, noclone))
#else
#define MK_NOCLONE MK_NOINLINE
#endif
/* A static function in a header that not every file including it calls. */
#if defined(__GNUC__) || defined(__clang__)
#define MK_UNUSED __attribute__((unused))
#else
#define MK_UNUSED
#endif

/* X(i, W) for the rows i of a tile of 6, 4, 3, 2 or 1 rows. */
#define MK_ROWS6(X, W) X(0, W) X(1, W) X(2, W) X(3, W) X(4, W) X(5, W)
#define MK_ROWS4(X, W) X(0, W) X(1, W) X(2, W) X(3, W)
#define MK_ROWS3(X, W) X(0, W) X(1, W) X(2, W)
#define MK_ROWS2(X, W) X(0, W) X(1, W)
#define MK_ROWS1(X, W) X(0, W)

/* Row i's accumulators: float c<i>[W]. */
#define MK_DECL(i, W) float c##i[W];
/* c<i>[j] += A * B[j] for j < W: A a scalar, B a pointer (the caller declares int32_t j). */
#define MK_AXPY(i, W, A, B)                                                                       \
    {                                                                                             \
        const float a_ = (A);                                                                     \
        for (j = 0; j < (W); ++j) c##i[j] = MK_MADD(a_, (B)[j], c##i[j]);                         \
    }
/* Row i's accumulators to T + i * STRIDE. */
#define MK_STORE(i, W, T, STRIDE) memcpy((T) + (i) * (STRIDE), c##i, sizeof c##i);

#endif /* AOTC_MICROKERNEL_H */
