/* Shared definitions for aotc kernels and generated code. C99, no dependencies beyond libc. */
#ifndef AOTC_COMMON_H
#define AOTC_COMMON_H

/* First: this bundle's names for the global symbols of its C (aotc_symbols.h). */
#include "aotc_symbols.h"

#include <stddef.h>
#include <stdint.h>

/* Largest tensor rank a kernel's params struct can describe. */
#define AOTC_MAX_RANK 8

/* What a run returns when a parameter read at run time (e.g. Reduce axes given as an input) names a
 * shape the bundle was not compiled for: nothing of that node is written. */
#define AOTC_ERR_SHAPE (-2)

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

/* Tap points for `aotc compare`: right after the node that computes a tensor, generated code
 * (and a vendor function that exposes its internals) writes
 *     AOTC_TAP("node", "tensor", "float32[1,6,28,28]", data, nbytes);
 * In a normal build this keeps nothing (the string literals vanish; `data` is only named).
 * Built with AOTC_TAPS defined (cmake -DAOTC_TAPS=ON: the debug variant aotc compare builds),
 * it calls aotc_tap(), which the bundle's runner defines: it appends the tensor to a file.
 * Firmware may instead define AOTC_TAP itself (before this header) to send tensors elsewhere. */
#ifndef AOTC_TAP
#if defined(AOTC_TAPS)
void aotc_tap(const char *node, const char *tensor, const char *type, const void *data, size_t nbytes);
#define AOTC_TAP(node, tensor, type, data, nbytes) aotc_tap(node, tensor, type, (const void *)(data), nbytes)
#else
#define AOTC_TAP(node, tensor, type, data, nbytes) ((void)(data))
#endif
#endif

#endif /* AOTC_COMMON_H */
