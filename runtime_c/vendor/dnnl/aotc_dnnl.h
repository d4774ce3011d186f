/* dnnl: aotc's oneDNN vendor runtime. Generated functions describe their region as static const
 * tables (tensors, ops, the workspace plan); this runtime turns the tables into oneDNN primitives
 * once, in <symbol>_init, and executes them on every call.
 *
 * Layouts. Region inputs and outputs are plain row-major DLTensors, used in place (no copy)
 * wherever a primitive accepts the plain layout. Inside a region a tensor keeps the layout its
 * producer chose (format "any": nChw8c on AVX2, nChw16c on AVX-512), so reorders only happen at
 * the region's boundary, and where a concat puts its inputs into one layout or a normalisation
 * takes a plain source into the channel-blocked one (aotc_dnnl.c, docs/dnnl.md). Weights are reordered once, at init, into memory oneDNN allocates.
 *
 * Memory. Every intermediate, boundary reorder buffer and primitive scratchpad (user-managed
 * scratchpad mode) lives in the workspace the host planned for the call. Their sizes depend on
 * the CPU, so aotc measures them at compile time by running this same init in probe mode
 * (AOTC_DNNL_PROBE, see aot/vendor/dnnl/probe.py), plans the offsets, and init checks that the
 * plan still fits the machine it runs on. oneDNN itself allocates its primitive objects and the
 * reordered weights on the heap (once, at init).
 *
 * Targets oneDNN 3.x (docs/dnnl.md says why 2.x is not supported). */
#ifndef AOTC_DNNL_H
#define AOTC_DNNL_H

#include <stddef.h>
#include <stdint.h>

#include <oneapi/dnnl/dnnl.h>

#include "dltensor.h"

#if DNNL_VERSION_MAJOR < 3
#error "aotc's dnnl vendor needs oneDNN 3.x (pip install aotc[dnnl]); see docs/dnnl.md"
#endif

/* Error codes (0 = success). */
#define AOTC_DNNL_E_TENSOR 0x444E0001    /* a DLTensor's dtype, rank or shape is not what was compiled */
#define AOTC_DNNL_E_ONEDNN 0x444E0002    /* a oneDNN call failed (message on stderr) */
#define AOTC_DNNL_E_WORKSPACE 0x444E0003 /* this machine needs more workspace than was planned */
#define AOTC_DNNL_E_NOT_READY 0x444E0004 /* <symbol>_init was not called or failed */
#define AOTC_DNNL_E_CAPACITY 0x444E0005  /* more slots or steps than the generator reserved */
#define AOTC_DNNL_E_ISA 0x444E0006       /* int8 ops on a CPU without VNNI, where oneDNN's are not exact */

#define AOTC_DNNL_MAX_DIMS 6
#define AOTC_DNNL_MAX_INPUTS 16 /* Concat takes at most this many inputs */
#define AOTC_DNNL_MAX_POST 3
#define AOTC_DNNL_MAX_ARGS (AOTC_DNNL_MAX_INPUTS + 2)

/* Where a tensor of the table comes from. */
enum { AOTC_DNNL_INPUT, AOTC_DNNL_OUTPUT, AOTC_DNNL_INTERNAL, AOTC_DNNL_CONST };

typedef struct {
    int32_t ndims;
    dnnl_dims_t dims; /* oneDNN's dims type (12 entries); the first ndims are used */
    int32_t dtype;    /* dnnl_f32, dnnl_s8, dnnl_u8 or dnnl_s32 */
    int32_t kind;     /* AOTC_DNNL_INPUT / _OUTPUT / _INTERNAL / _CONST */
    int32_t index;    /* input or output number; CONST: index into the weights array */
    int32_t last_use; /* the last op reading it or a view of it (-1: none) */
} aotc_dnnl_tensor;

/* The op kinds; each reads inputs[0..n_inputs) and writes output (an input of -1: none). An int8
 * CONV or MATMUL (quant = 1) reads src and weights (s8) and writes dst (u8 or s8 like src), with
 * bias (f32: the int32 bias), then src and dst zero points (s32 [1], -1 when 0):
 * dst = saturate(post_ops(conv(src - src_zero, weights) + bias) + dst_zero), its post-ops the
 * requantisation (a binary multiply by each channel's scale, clip, round: aot/vendor/dnnl/quant.py). */
enum {
    AOTC_DNNL_CONV,    /* inputs: src, weights[, bias]; quant: + src_zero, dst_zero; post-ops */
    AOTC_DNNL_MATMUL,  /* inputs: src [.., K], weights [K, N][, bias [1|M, N]]; quant: as CONV; post-ops */
    AOTC_DNNL_POOL,    /* alg: dnnl_pooling_* */
    AOTC_DNNL_BNORM,   /* inputs: src, scale, shift, mean, variance; flags: dnnl_normalization_flags_t */
    AOTC_DNNL_LRN,     /* across channels */
    AOTC_DNNL_SOFTMAX, /* alg: dnnl_softmax_accurate or _log, over axis 1 of the input viewed as
                          [outer, n, inner] (given in kernel[0..2]) */
    AOTC_DNNL_BINARY,  /* alg: dnnl_binary_*; inputs[1] broadcasts to inputs[0]; quant: int8 sources
                          scaled by inputs[2], inputs[3] (f32 [1]), post-ops (QLinearAdd) */
    AOTC_DNNL_ELTWISE, /* alg: dnnl_eltwise_* with alpha, beta */
    AOTC_DNNL_CONCAT,  /* along axis */
    AOTC_DNNL_RESHAPE  /* same bytes, new dims: a view when the input is plain */
};

enum { AOTC_DNNL_POST_ELTWISE, AOTC_DNNL_POST_SUM, AOTC_DNNL_POST_BINARY, AOTC_DNNL_POST_SWISH };

typedef struct {
    int32_t kind;        /* AOTC_DNNL_POST_ELTWISE: dst = alg(dst); _SUM: dst += tensor;
                            _BINARY: dst = alg(dst, tensor), the tensor broadcast (plain);
                            _SWISH (last only): dst = dst * sigmoid(alpha dst), run by this runtime
                            over the primitive's result (aotc_dnnl_swish), not by oneDNN */
    int32_t alg;         /* dnnl_eltwise_*, dnnl_binary_* */
    float alpha, beta;
    int32_t tensor;      /* _SUM: the tensor added (ONNX's residual Add); _BINARY: the second operand */
} aotc_dnnl_post_op;

typedef struct {
    int32_t kind;
    int32_t alg;
    int32_t n_inputs;
    int32_t inputs[AOTC_DNNL_MAX_INPUTS];
    int32_t output;
    dnnl_dims_t strides, kernel, dilation, pad_l, pad_r; /* spatial, as oneDNN's: dilation 0 = dense */
    int64_t groups;
    int32_t axis;
    float alpha, beta, k;   /* ELTWISE alpha, beta; LRN alpha, beta, k */
    int64_t local_size;     /* LRN */
    float epsilon;          /* BNORM */
    uint32_t flags;         /* BNORM */
    int32_t quant;          /* CONV, MATMUL: int8, with zero points (inputs 3, 4); BINARY: int8
                               sources with scales (inputs 2, 3) */
    int32_t n_post;
    aotc_dnnl_post_op post[AOTC_DNNL_MAX_POST];
    int32_t layout;         /* CONV: 0, or 1 + the layout (aotc_dnnl.c's LAYOUTS) to ask for the
                               output in first, because a later op reads it in that layout (the
                               probe found the reorder: aot/vendor/dnnl/codegen.py) */
} aotc_dnnl_op;

/* One workspace buffer of the plan, by slot number (bytes 0: not a workspace slot). */
typedef struct {
    uint64_t offset, bytes;
} aotc_dnnl_plan_entry;

/* Where a slot's bytes are. */
enum { AOTC_DNNL_AT_INPUT, AOTC_DNNL_AT_OUTPUT, AOTC_DNNL_AT_WORKSPACE, AOTC_DNNL_AT_CONST, AOTC_DNNL_AT_OWNED };

/* A memory object and where its data is; views share `where`/`index` with what they view. */
typedef struct {
    dnnl_memory_t mem;
    int32_t where;
    int32_t index;       /* input/output number, or the workspace buffer (a slot number) */
    int32_t first, last; /* steps that use the buffer (probe: its lifetime) */
} aotc_dnnl_slot;

typedef struct {
    dnnl_primitive_t prim;
    int32_t op; /* the op of the table it serves (a reorder: the op it feeds or follows) */
    int32_t n_args;
    dnnl_exec_arg_t args[AOTC_DNNL_MAX_ARGS];
    dnnl_memory_t swish;  /* the result a SWISH post-op runs over after the primitive (NULL: none) */
    size_t swish_n;       /* its floats, padding included (a blocked layout's padding stays 0) */
    float swish_alpha;
} aotc_dnnl_step;

/* A region as the generator describes it. */
typedef struct {
    const char *name;
    const aotc_dnnl_tensor *tensors;
    int32_t n_tensors;
    const aotc_dnnl_op *ops;
    int32_t n_ops;
    const void *const *weights;      /* CONST tensors' data; NULL in probe mode */
    const aotc_dnnl_plan_entry *plan; /* NULL in probe mode */
    int32_t n_plan;
} aotc_dnnl_net_desc;

/* A region's primitives and memories, built by aotc_dnnl_net_init (static storage in the
 * generated file, sized by the generator). */
typedef struct {
    const aotc_dnnl_net_desc *desc;
    aotc_dnnl_slot *slots;
    int32_t n_slots, max_slots;
    aotc_dnnl_step *steps;
    int32_t n_steps, max_steps;
    int32_t *tensor_slot; /* tensor -> slot holding its value */
    int32_t ready;
    int32_t building; /* the op init is building (aotc_dnnl_step.op) */
} aotc_dnnl_net;

/* Build every primitive of the region (once; later calls return 0). */
int32_t aotc_dnnl_net_init(aotc_dnnl_net *net, const aotc_dnnl_net_desc *desc);

/* Run the region on DLTensors; workspace holds the planned buffers. */
int32_t aotc_dnnl_net_run(aotc_dnnl_net *net, const DLTensor *const *inputs, DLTensor *const *outputs,
                          void *workspace);

/* x[i] *= sigmoid(alpha x[i]) in place: the SWISH post-op. AVX-512 code where the compiler targets
 * it, else a loop over fast_math.h's aotc_sigmoid_poly (AOTC_DNNL_PLAIN_SWISH forces that one). */
void aotc_dnnl_swish(float *x, size_t n, float alpha);

/* Probe mode: print the workspace buffers this machine needs ("slot <n> <bytes> <first> <last>") and
 * the primitives a run executes ("step <n> <kind> <entry|exit|inside|-> <op> <tensor> <layout> <implementation>"). */
void aotc_dnnl_net_print_plan(const aotc_dnnl_net *net);

#endif /* AOTC_DNNL_H */
