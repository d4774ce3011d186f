/* Shared definitions for aotc kernels and generated code. C99, no dependencies beyond libc. */
#ifndef AOTC_COMMON_H
#define AOTC_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* Largest tensor rank a kernel's params struct can describe. */
#define AOTC_MAX_RANK 8

#if defined(__GNUC__) || defined(__clang__)
#define AOTC_ALIGNED(n) __attribute__((aligned(n)))
#elif defined(_MSC_VER)
#define AOTC_ALIGNED(n) __declspec(align(n))
#else
#define AOTC_ALIGNED(n)
#endif

#if defined(__cplusplus)
#define AOTC_RESTRICT __restrict
#else
#define AOTC_RESTRICT restrict
#endif

#endif /* AOTC_COMMON_H */
