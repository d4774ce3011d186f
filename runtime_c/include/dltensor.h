/* DLTensor: the tensor descriptor passed at every vendor boundary.
 * Layout-compatible with DLPack's dlpack.h (v0.8+), written out here so bundles
 * need no external header. A vendor runtime sees data, shape, dtype and device
 * and nothing else of aotc. */
#ifndef AOTC_DLTENSOR_H
#define AOTC_DLTENSOR_H

/* First: the bundle's names for the global symbols of its C, a vendor runtime's too (aotc_symbols.h). */
#include "aotc_symbols.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    kDLCPU = 1,
    kDLExtDev = 12,
} DLDeviceType;

typedef struct {
    DLDeviceType device_type;
    int32_t device_id;
} DLDevice;

typedef enum {
    kDLInt = 0U,
    kDLUInt = 1U,
    kDLFloat = 2U,
    kDLBfloat = 4U,
    kDLBool = 6U,
} DLDataTypeCode;

typedef struct {
    uint8_t code;   /* DLDataTypeCode */
    uint8_t bits;   /* 8, 16, 32, 64 */
    uint16_t lanes; /* 1 for scalars */
} DLDataType;

typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides; /* NULL: compact row-major */
    uint64_t byte_offset;
} DLTensor;

#ifdef __cplusplus
}
#endif

#endif /* AOTC_DLTENSOR_H */
