/* Building blocks of the register-tile kernels ("micro-kernels") shared by the GEMM core
 * (gemm.c) and the conv strategies that keep their sums in registers (conv_implicit.c,
 * conv_direct.c, conv_depthwise*.c, conv_flat3x3.c). Internal to runtime_c/kernels: no
 * generated code includes it.
 *
 * A tile is R rows of W accumulators, c0[W] .. c<R-1>[W]: plain float arrays that the compiler
 * keeps in registers (no intrinsics): vector registers where the loops over a row's W columns
 * vectorise, else scalar ones once those loops are unrolled whole. They say so (MK_UNROLL):
 * gcc's own heuristics unroll them at -O3 only, and at -O2 or -Os the arrays stayed in memory
 * (issue 27: twice the instructions on a Cortex-M4). MK_ROWSn(X, W) applies the macro X(i, W)
 * to rows i = 0 .. n - 1, so that one macro body defines the kernels of every tile height; the tile
 * sizes are AOTC_GEMM_MR x AOTC_GEMM_NR (aotc_gemm.h). Inner loops that sum over k step a
 * pointer until it reaches its end: compilers cannot count their trips, so they vectorise
 * along the tile's columns instead of k (an in-order reduction over k, much slower). */
#ifndef AOTC_MICROKERNEL_H
#define AOTC_MICROKERNEL_H

#include <math.h>
#include <string.h>

/* MK_SPEED: compiled for speed in a build for size. At -Os gcc weighs every choice by bytes: in
 * the register-tile loops it keeps the tile's row pointers on the stack and re-reads them at
 * every step (issue 27: a ResNet-8 took 27 % more instructions at -Os than at -O3 on a
 * Cortex-M4, the micro-kernels at -O2 5 %, for 256 bytes more). No option turns that weighing
 * off, so these few functions ask for -O2 themselves (gcc's optimize attribute, whose manual
 * keeps it for debugging: here it selects the level, no single pass). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE_SIZE__)
#define MK_SPEED __attribute__((optimize("O2")))
#else
#define MK_SPEED
#endif

/* Kernels stay separate functions (MK_NOINLINE): inlined into the blocking loops, they lose
 * their registers to the loops' variables. MK_NOCLONE also keeps gcc from cloning a function
 * for a constant argument. MK_INLINE: inlined always (a run of blocks into each plane loop).
 * The register-tile kernels are MK_NOINLINE, so they are MK_SPEED too. */
#if defined(__GNUC__) || defined(__clang__)
#define MK_NOINLINE __attribute__((noinline)) MK_SPEED
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

/* Put before a loop over a tile row's W columns (W a constant, at most 16): unroll it whole at
 * every optimisation level, so that the accumulators become registers. Only where the floats
 * have no vector unit that gcc vectorises these loops for (Cortex-M without Helium, soft
 * float, RISC-V without V): there, gcc's own heuristics unroll them at -O3 only. With SSE/AVX
 * or NEON, -O3 vectorises the loop and then unrolls the vector loop; unrolling first costs the
 * AVX2 GEMM tile 40 % more instructions. gcc 8 and later; clang unrolls such loops on its own,
 * and its pragma would warn where it cannot (-Wpass-failed); other compilers get nothing. */
#if !defined(__SSE2__) && !defined(__ARM_NEON) && !defined(__ARM_NEON__) && !defined(__riscv_vector) && \
    !defined(__ARM_FEATURE_MVE)
#define MK_SCALAR_TILES 1 /* the tiles live in scalar registers */
#else
#define MK_SCALAR_TILES 0
#endif
/* Helium with floats (a Cortex-M55): the kernels that are written with its intrinsics
 * (arm_mve.h), where gcc's vectoriser does badly (issue 27: at -O3 it split a 4 x 4 tile into
 * vector and scalar rows of separate multiplies and adds, 16 % more instructions than at -O2).
 * -DAOTC_NO_MVE takes the plain C instead. */
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2) && !defined(AOTC_NO_MVE)
#define MK_HELIUM 1
#else
#define MK_HELIUM 0
#endif
/* Helium (M55): -O2 and -O3 vectorise the loops; -Os does not, so there the unrolling is what
 * keeps the tile in registers. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8 && \
    (MK_SCALAR_TILES || (defined(__ARM_FEATURE_MVE) && defined(__OPTIMIZE_SIZE__)))
#define MK_UNROLL _Pragma("GCC unroll 16")
#else
#define MK_UNROLL
#endif

/* a * b + c, fused where the target has a fast fma: FP_FAST_FMAF is C99's; __FP_FAST_FMAF is
 * gcc's, which newlib's math.h does not turn into FP_FAST_FMAF, taken for scalar tiles: on a
 * Cortex-M4/M7/M33 one VFMA per multiply-add, where unfused gcc -O2/-O3 issues a VMUL and a
 * VADD (its cost model avoids VMLA's stall), twice the instructions. Not with Helium: gcc does
 * not vectorise fmaf there (the M55's ResNet-8 took 19 % more instructions at -O3). */
#if defined(FP_FAST_FMAF) || (defined(__FP_FAST_FMAF) && MK_SCALAR_TILES)
#define MK_MADD(a, b, c) fmaf((a), (b), (c))
#else
#define MK_MADD(a, b, c) ((a) * (b) + (c))
#endif

/* MK_LDM4(P, V) and MK_LDM5(P, V): V##0 .. V##3 (or V##4) = P[0] .. P[3] (P[4]), floats the
 * caller declared. On an Arm core with a single-precision FPU (Cortex-M4/M7/M33, the float ABI
 * hard or softfp) one VLDM loads them, through inline assembly: gcc does not merge consecutive
 * float loads into one, and a register tile that loads a row of its operands per step spends
 * up to a third of its instructions on loads (issue 27). The registers are fixed, s16 .. s19 and
 * s27 .. s31 (callee-saved: the kernels using these save them anyway), so a tile may use both at
 * once; the memory operand tells gcc what is read. -DAOTC_NO_ASM, and every other target, take
 * the plain loads: the twin the tests compare with (tests/kernels_c/test_kernels_c.py runs the conv kernels'
 * test on the M4 under qemu both ways). */
#if MK_SCALAR_TILES && defined(__GNUC__) && !defined(__clang__) && defined(__arm__) && defined(__thumb2__) && \
    defined(__ARM_FP) && (__ARM_FP & 4) && !defined(AOTC_NO_ASM)
#define MK_HAVE_LDM 1
#define MK_LDM4(P, V)                                                                              \
    {                                                                                              \
        register float r0_ __asm__("s16"), r1_ __asm__("s17"), r2_ __asm__("s18"), r3_ __asm__("s19"); \
        __asm__("vldmia %4, {s16-s19}"                                                             \
                : "=t"(r0_), "=t"(r1_), "=t"(r2_), "=t"(r3_)                                       \
                : "r"(P), "m"(*(const float(*)[4])(P)));                                           \
        V##0 = r0_, V##1 = r1_, V##2 = r2_, V##3 = r3_;                                            \
    }
#define MK_LDM5(P, V)                                                                              \
    {                                                                                              \
        register float r0_ __asm__("s27"), r1_ __asm__("s28"), r2_ __asm__("s29"), r3_ __asm__("s30"); \
        register float r4_ __asm__("s31");                                                        \
        __asm__("vldmia %5, {s27-s31}"                                                             \
                : "=t"(r0_), "=t"(r1_), "=t"(r2_), "=t"(r3_), "=t"(r4_)                            \
                : "r"(P), "m"(*(const float(*)[5])(P)));                                           \
        V##0 = r0_, V##1 = r1_, V##2 = r2_, V##3 = r3_, V##4 = r4_;                                \
    }
/* MK_LDM6, MK_LDM9 and MK_LDM10: V##0 .. V##5 (8, 9) = P[0] .. P[5] (8, 9), one VLDM into s0 ..
 * (caller-saved): the depthwise kernels' rows of inputs (conv_depthwise3x3_direct.c). */
#define MK_LDM6(P, V)                                                                              \
    {                                                                                              \
        register float r0_ __asm__("s0"), r1_ __asm__("s1"), r2_ __asm__("s2"), r3_ __asm__("s3"); \
        register float r4_ __asm__("s4"), r5_ __asm__("s5");                                       \
        __asm__("vldmia %6, {s0-s5}"                                                               \
                : "=t"(r0_), "=t"(r1_), "=t"(r2_), "=t"(r3_), "=t"(r4_),                           \
                  "=t"(r5_)                                                                        \
                : "r"(P), "m"(*(const float(*)[6])(P)));                                           \
        V##0 = r0_, V##1 = r1_, V##2 = r2_, V##3 = r3_, V##4 = r4_,                                \
        V##5 = r5_;                                                                                \
    }
#define MK_LDM9(P, V)                                                                              \
    {                                                                                              \
        register float r0_ __asm__("s0"), r1_ __asm__("s1"), r2_ __asm__("s2"), r3_ __asm__("s3"); \
        register float r4_ __asm__("s4"), r5_ __asm__("s5"), r6_ __asm__("s6"), r7_ __asm__("s7"); \
        register float r8_ __asm__("s8");                                                          \
        __asm__("vldmia %9, {s0-s8}"                                                               \
                : "=t"(r0_), "=t"(r1_), "=t"(r2_), "=t"(r3_), "=t"(r4_),                           \
                  "=t"(r5_), "=t"(r6_), "=t"(r7_), "=t"(r8_)                                       \
                : "r"(P), "m"(*(const float(*)[9])(P)));                                           \
        V##0 = r0_, V##1 = r1_, V##2 = r2_, V##3 = r3_, V##4 = r4_,                                \
        V##5 = r5_, V##6 = r6_, V##7 = r7_, V##8 = r8_;                                            \
    }
#define MK_LDM10(P, V)                                                                             \
    {                                                                                              \
        register float r0_ __asm__("s0"), r1_ __asm__("s1"), r2_ __asm__("s2"), r3_ __asm__("s3"); \
        register float r4_ __asm__("s4"), r5_ __asm__("s5"), r6_ __asm__("s6"), r7_ __asm__("s7"); \
        register float r8_ __asm__("s8"), r9_ __asm__("s9");                                       \
        __asm__("vldmia %10, {s0-s9}"                                                              \
                : "=t"(r0_), "=t"(r1_), "=t"(r2_), "=t"(r3_), "=t"(r4_),                           \
                  "=t"(r5_), "=t"(r6_), "=t"(r7_), "=t"(r8_), "=t"(r9_)                            \
                : "r"(P), "m"(*(const float(*)[10])(P)));                                          \
        V##0 = r0_, V##1 = r1_, V##2 = r2_, V##3 = r3_, V##4 = r4_,                                \
        V##5 = r5_, V##6 = r6_, V##7 = r7_, V##8 = r8_, V##9 = r9_;                                \
    }
#else
#define MK_HAVE_LDM 0
#define MK_LDM4(P, V) V##0 = (P)[0], V##1 = (P)[1], V##2 = (P)[2], V##3 = (P)[3];
#define MK_LDM5(P, V) V##0 = (P)[0], V##1 = (P)[1], V##2 = (P)[2], V##3 = (P)[3], V##4 = (P)[4];
#define MK_LDM6(P, V) MK_LDM5(P, V) V##5 = (P)[5];
#define MK_LDM9(P, V) MK_LDM6(P, V) V##6 = (P)[6], V##7 = (P)[7], V##8 = (P)[8];
#define MK_LDM10(P, V) MK_LDM9(P, V) V##9 = (P)[9];
#endif

/* MK_LDMR6(P, V): V##0 .. V##5 = P[0] .. P[5], floats in core registers (r0 .. r5) through one
 * LDM, for Helium's VFMA by a scalar, which reads its scalar from a core register: gcc loads the
 * six with six LDRs (issue 27: the M55's implicit-GEMM runs spent 6 of 16 instructions a step
 * on them). -DAOTC_NO_ASM takes the plain loads, the twin the tests compare with. */
#if MK_HELIUM && defined(__GNUC__) && !defined(__clang__) && defined(__thumb2__) && !defined(AOTC_NO_ASM)
#define MK_HAVE_LDMR 1
#define MK_LDMR6(P, V)                                                                             \
    {                                                                                              \
        register float r0_ __asm__("r0"), r1_ __asm__("r1"), r2_ __asm__("r2");                    \
        register float r3_ __asm__("r3"), r4_ __asm__("r4"), r5_ __asm__("r5");                    \
        __asm__("ldm %6, {r0-r5}"                                                                  \
                : "=r"(r0_), "=r"(r1_), "=r"(r2_), "=r"(r3_), "=r"(r4_), "=r"(r5_)                 \
                : "r"(P), "m"(*(const float(*)[6])(P)));                                           \
        V##0 = r0_, V##1 = r1_, V##2 = r2_, V##3 = r3_, V##4 = r4_, V##5 = r5_;                    \
    }
/* MK_LDMR7(P, V): the same for 7 floats, r0 .. r6 (conv_implicit.c's 1 x 1 runs of 7). */
#define MK_LDMR7(P, V)                                                                             \
    {                                                                                              \
        register float r0_ __asm__("r0"), r1_ __asm__("r1"), r2_ __asm__("r2"), r3_ __asm__("r3"); \
        register float r4_ __asm__("r4"), r5_ __asm__("r5"), r6_ __asm__("r6");                    \
        __asm__("ldm %7, {r0-r6}"                                                                  \
                : "=r"(r0_), "=r"(r1_), "=r"(r2_), "=r"(r3_), "=r"(r4_), "=r"(r5_), "=r"(r6_)      \
                : "r"(P), "m"(*(const float(*)[7])(P)));                                           \
        V##0 = r0_, V##1 = r1_, V##2 = r2_, V##3 = r3_, V##4 = r4_, V##5 = r5_, V##6 = r6_;        \
    }
/* MK_LDMR5(P, V) and MK_LDMR3(P, V): the same for 5 and 3 floats (conv_stem_mve.h's blocks of 5
 * and 3 channels' weights). */
#define MK_LDMR5(P, V)                                                                             \
    {                                                                                              \
        register float r0_ __asm__("r0"), r1_ __asm__("r1"), r2_ __asm__("r2");                    \
        register float r3_ __asm__("r3"), r4_ __asm__("r4");                                       \
        __asm__("ldm %5, {r0-r4}"                                                                  \
                : "=r"(r0_), "=r"(r1_), "=r"(r2_), "=r"(r3_), "=r"(r4_)                            \
                : "r"(P), "m"(*(const float(*)[5])(P)));                                           \
        V##0 = r0_, V##1 = r1_, V##2 = r2_, V##3 = r3_, V##4 = r4_;                                \
    }
#define MK_LDMR3(P, V)                                                                             \
    {                                                                                              \
        register float r0_ __asm__("r0"), r1_ __asm__("r1"), r2_ __asm__("r2");                    \
        __asm__("ldm %3, {r0-r2}" : "=r"(r0_), "=r"(r1_), "=r"(r2_) : "r"(P), "m"(*(const float(*)[3])(P))); \
        V##0 = r0_, V##1 = r1_, V##2 = r2_;                                                        \
    }
/* MK_LDMR4(P, V): the same for 4 floats, r0 .. r3 (conv_stem_mve.h's weights). */
#define MK_LDMR4(P, V)                                                                             \
    {                                                                                              \
        register float r0_ __asm__("r0"), r1_ __asm__("r1"), r2_ __asm__("r2"), r3_ __asm__("r3"); \
        __asm__("ldm %4, {r0-r3}"                                                                  \
                : "=r"(r0_), "=r"(r1_), "=r"(r2_), "=r"(r3_)                                       \
                : "r"(P), "m"(*(const float(*)[4])(P)));                                           \
        V##0 = r0_, V##1 = r1_, V##2 = r2_, V##3 = r3_;                                            \
    }
#else
#define MK_HAVE_LDMR 0
#define MK_LDMR6(P, V)                                                                             \
    V##0 = (P)[0], V##1 = (P)[1], V##2 = (P)[2], V##3 = (P)[3], V##4 = (P)[4], V##5 = (P)[5];
#define MK_LDMR7(P, V) MK_LDMR6(P, V) V##6 = (P)[6];
#define MK_LDMR4(P, V) V##0 = (P)[0], V##1 = (P)[1], V##2 = (P)[2], V##3 = (P)[3];
#define MK_LDMR5(P, V) MK_LDMR4(P, V) V##4 = (P)[4];
#define MK_LDMR3(P, V) V##0 = (P)[0], V##1 = (P)[1], V##2 = (P)[2];
#endif

/* X(i, W) for the rows i of a tile of 6, 5, 4, 3, 2 or 1 rows. */
#define MK_ROWS6(X, W) X(0, W) X(1, W) X(2, W) X(3, W) X(4, W) X(5, W)
#define MK_ROWS5(X, W) X(0, W) X(1, W) X(2, W) X(3, W) X(4, W)
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
        MK_UNROLL for (j = 0; j < (W); ++j) c##i[j] = MK_MADD(a_, (B)[j], c##i[j]);               \
    }
/* Row i's accumulators to T + i * STRIDE. */
#define MK_STORE(i, W, T, STRIDE) memcpy((T) + (i) * (STRIDE), c##i, sizeof c##i);

#endif /* AOTC_MICROKERNEL_H */
