/* mynpu: the device library of the mynpu example vendor (examples/vendors/mynpu).
 *
 * It stands in for an NPU's driver: float32 tensors with activations in NHWC (channels last),
 * convolution weights blocked OIHW<B>o at compile time (output channels in blocks of B, the
 * innermost axis, so one weight load feeds B accumulators), and a handle per model instance
 * that the generated code keeps in the state aotc reserves for it. It knows nothing of aotc:
 * the generated functions (aotc_mynpu/codegen.py) turn DLTensors into these calls.
 *
 * Plain C99: no heap, no libm, no globals; warning-free under -Wall -Wextra. */
#ifndef MYNPU_H
#define MYNPU_H

#include <stddef.h>
#include <stdint.h>

#define MYNPU_MAGIC 0x55504E4Du  /* "MNPU": the handle was opened */
#define MYNPU_MAX_BLOCK 8        /* output channels per weight block, at most */
#define MYNPU_MAX_RANK 6         /* mynpu_permute's ranks */
/* sizeof(mynpu_device): the state each function reserves (DEVICE_BYTES in aotc_mynpu/codegen.py) */
#define MYNPU_DEVICE_BYTES 24

enum {
    MYNPU_OK = 0,
    MYNPU_ERR_NOT_OPEN = 101,  /* a call before <model>_init opened the handle */
    MYNPU_ERR_PARAMS = 102,    /* parameters the device cannot run */
    MYNPU_ERR_TENSOR = 103     /* a DLTensor of another type or shape than compiled for */
};

/* One per function and model instance, in the arena's state bytes (Artifact.state_bytes). */
typedef struct {
    uint32_t magic;   /* MYNPU_MAGIC once mynpu_open ran */
    uint32_t layers;  /* layers the last call ran */
    uint64_t calls;   /* calls since mynpu_open */
    uint64_t macs;    /* multiply-accumulates since mynpu_open */
} mynpu_device;

/* A convolution: 3x3 or 1x1, stride 1 or 2, group 1 or depthwise (group = channels). */
typedef struct {
    int32_t n, h, w, c;          /* input, NHWC */
    int32_t oh, ow, oc;          /* output, NHWC (batch n) */
    int32_t kh, kw;
    int32_t sh, sw;
    int32_t pad_top, pad_left;   /* the bottom and right pads follow from oh and ow */
    int32_t depthwise;           /* 1: c == oc and weights [oc/B][1][kh][kw][B] */
    int32_t block;               /* B: output channels per weight block, 1..MYNPU_MAX_BLOCK */
    int32_t relu;                /* 1: max(0, .) last */
} mynpu_conv_params;

/* Opens a handle in `dev` (MYNPU_DEVICE_BYTES of memory the caller keeps). */
int32_t mynpu_open(mynpu_device *dev);

/* Starts a call: MYNPU_ERR_NOT_OPEN unless `dev` was opened. */
int32_t mynpu_begin(mynpu_device *dev);

/* y = relu?(conv(x, w) + bias + residual). w blocked [ceil(oc/B)][c or 1][kh][kw][B] (zeros past
 * oc); bias [oc] or NULL; residual NULL or NHWC of y's shape. x, y and residual do not overlap. */
int32_t mynpu_conv2d(mynpu_device *dev, const mynpu_conv_params *p, const float *x, const float *w,
                     const float *bias, const float *residual, float *y);

/* Elementwise over n floats; y may be x (or a). */
void mynpu_relu(size_t n, const float *x, float *y);
void mynpu_add(size_t n, const float *a, const float *b, float *y);

/* The device's int8 store of an activation, read back: y = (clamp(round(x / scale) + zero_point,
 * -128, 127) - zero_point) * scale, rounding half to even (QuantizeLinear then DequantizeLinear). */
void mynpu_requant(size_t n, float scale, int32_t zero_point, const float *x, float *y);

/* y = x with its axes permuted: y's axis k is x's axis perm[k] (dims are x's). x and y do not overlap. */
int32_t mynpu_permute(int32_t rank, const int32_t *dims, const int32_t *perm, const float *x, float *y);

#endif /* MYNPU_H */
