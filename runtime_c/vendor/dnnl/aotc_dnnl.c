/* dnnl vendor runtime: region tables -> oneDNN primitives (see aotc_dnnl.h). */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* dladdr and RTLD_NOLOAD (omp_threads) */
#endif
#include "aotc_dnnl.h"

#include <stdio.h>
#include <string.h>
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
#include <dlfcn.h>
#endif

#include <oneapi/dnnl/dnnl_debug.h>

#include "fast_math.h"

static dnnl_engine_t g_engine;
static dnnl_stream_t g_stream;

#define TRY(call)                                                                     \
    do {                                                                              \
        dnnl_status_t s_ = (call);                                                    \
        if (s_ != dnnl_success) {                                                     \
            fprintf(stderr, "aotc dnnl: %s: %s failed (status %d)\n", net->desc->name, #call, (int)s_); \
            return AOTC_DNNL_E_ONEDNN;                                                \
        }                                                                             \
    } while (0)

#define CHECK(expr)             \
    do {                        \
        int32_t rc_ = (expr);   \
        if (rc_ != 0) return rc_; \
    } while (0)

/* ---- memory descriptors ---------------------------------------------------------------- */

static const dnnl_format_tag_t PLAIN_TAGS[AOTC_DNNL_MAX_DIMS + 1] = {
    dnnl_a, dnnl_a, dnnl_ab, dnnl_abc, dnnl_abcd, dnnl_abcde, dnnl_abcdef};

static dnnl_status_t plain_md(dnnl_memory_desc_t *md, int32_t ndims, const dnnl_dims_t dims, int32_t dtype) {
    static const dnnl_dims_t one = {1};
    if (ndims == 0) return dnnl_memory_desc_create_with_tag(md, 1, one, (dnnl_data_type_t)dtype, dnnl_a);
    return dnnl_memory_desc_create_with_tag(md, ndims, dims, (dnnl_data_type_t)dtype, PLAIN_TAGS[ndims]);
}

static dnnl_status_t any_md(dnnl_memory_desc_t *md, int32_t ndims, const dnnl_dims_t dims, int32_t dtype) {
    return dnnl_memory_desc_create_with_tag(md, ndims, dims, (dnnl_data_type_t)dtype, dnnl_format_tag_any);
}

static int32_t dtype_of(const_dnnl_memory_desc_t md) {
    dnnl_data_type_t dt = dnnl_data_type_undef;
    dnnl_memory_desc_query(md, dnnl_query_data_type, &dt);
    return (int32_t)dt;
}

static const_dnnl_memory_desc_t md_of(const aotc_dnnl_net *net, int32_t slot) {
    const_dnnl_memory_desc_t md = NULL;
    dnnl_memory_get_memory_desc(net->slots[slot].mem, &md);
    return md;
}

/* True when md is dense row-major over its own dims: the bytes a DLTensor of those dims holds. */
static int is_plain(const_dnnl_memory_desc_t md) {
    int32_t ndims = 0, nblks = 0, d;
    dnnl_format_kind_t kind = dnnl_format_kind_undef;
    const dnnl_dims_t *dims = NULL, *strides = NULL, *padded = NULL;
    int64_t expect = 1;
    dnnl_memory_desc_query(md, dnnl_query_ndims_s32, &ndims);
    dnnl_memory_desc_query(md, dnnl_query_format_kind, &kind);
    if (kind != dnnl_blocked) return 0;
    dnnl_memory_desc_query(md, dnnl_query_inner_nblks_s32, &nblks);
    if (nblks != 0) return 0;
    dnnl_memory_desc_query(md, dnnl_query_dims, &dims);
    dnnl_memory_desc_query(md, dnnl_query_padded_dims, &padded);
    dnnl_memory_desc_query(md, dnnl_query_strides, &strides);
    for (d = ndims - 1; d >= 0; --d) {
        if ((*padded)[d] != (*dims)[d]) return 0;
        if ((*dims)[d] != 1 && (*strides)[d] != expect) return 0;
        expect *= (*dims)[d];
    }
    return 1;
}

/* The layouts activations take here, for rank 3 to 5: plain, channels-last, and channels
 * blocked by 8 and by 16 (LAYOUTS[ndims - 3][layout]). */
enum { AOTC_DNNL_PLAIN, AOTC_DNNL_CHANNELS_LAST, AOTC_DNNL_BLOCKED_8, AOTC_DNNL_BLOCKED_16, AOTC_DNNL_N_LAYOUTS };
static const dnnl_format_tag_t LAYOUTS[3][AOTC_DNNL_N_LAYOUTS] = {
    {dnnl_abc, dnnl_acb, dnnl_aBc8b, dnnl_aBc16b},
    {dnnl_abcd, dnnl_acdb, dnnl_aBcd8b, dnnl_aBcd16b},
    {dnnl_abcde, dnnl_acdeb, dnnl_aBcde8b, dnnl_aBcde16b}};

/* Which of LAYOUTS md is (-1: none of them, or a rank they do not cover). */
static int layout_of(const_dnnl_memory_desc_t md, int32_t ndims, const dnnl_dims_t dims) {
    int l, found = -1;
    if (ndims < 3 || ndims > 5) return -1;
    for (l = 0; l < AOTC_DNNL_N_LAYOUTS && found < 0; ++l) {
        dnnl_memory_desc_t cand;
        if (dnnl_memory_desc_create_with_tag(&cand, ndims, dims, (dnnl_data_type_t)dtype_of(md),
                                             LAYOUTS[ndims - 3][l]) != dnnl_success)
            continue;
        if (dnnl_memory_desc_equal(cand, md)) found = l;
        dnnl_memory_desc_destroy(cand);
    }
    return found;
}

/* The channel-blocked layout oneDNN's own kernels use on this CPU: by 16 with AVX-512, else by 8
 * (what a convolution picks for "any"). */
static int native_blocked(void) {
    return (dnnl_get_effective_cpu_isa() & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core
               ? AOTC_DNNL_BLOCKED_16 : AOTC_DNNL_BLOCKED_8;
}

/* ---- slots and steps ----------------------------------------------------------------- */

static int32_t new_slot(aotc_dnnl_net *net, const_dnnl_memory_desc_t md, int32_t where, int32_t index,
                        void *handle, int32_t *out) {
    aotc_dnnl_slot *s;
    if (net->n_slots >= net->max_slots) return AOTC_DNNL_E_CAPACITY;
    s = &net->slots[net->n_slots];
    TRY(dnnl_memory_create(&s->mem, md, g_engine, handle));
    s->where = where;
    s->index = where == AOTC_DNNL_AT_WORKSPACE && index < 0 ? net->n_slots : index;
    s->first = -1;
    s->last = -1;
    *out = net->n_slots++;
    return 0;
}

/* A new slot viewing `slot`'s bytes through another descriptor (same buffer). */
static int32_t view_slot(aotc_dnnl_net *net, int32_t slot, const_dnnl_memory_desc_t md, int32_t *out) {
    const aotc_dnnl_slot *s = &net->slots[slot];
    void *handle = DNNL_MEMORY_NONE;
    if (s->where == AOTC_DNNL_AT_CONST || s->where == AOTC_DNNL_AT_OWNED)
        dnnl_memory_get_data_handle(s->mem, &handle);
    return new_slot(net, md, s->where, s->index, handle, out);
}

static void touch(aotc_dnnl_net *net, int32_t slot, int32_t step) {
    aotc_dnnl_slot *root;
    if (net->slots[slot].where != AOTC_DNNL_AT_WORKSPACE) return;
    root = &net->slots[net->slots[slot].index];
    if (root->first < 0 || step < root->first) root->first = step;
    if (step > root->last) root->last = step;
}

/* The inputs of an int8 conv or matmul after src, weights and bias (aotc_dnnl.h); an int8 binary
 * op has its sources' scales after the sources. */
enum { AOTC_DNNL_Q_SRC_ZERO = 3, AOTC_DNNL_Q_DST_ZERO = 4 };

/* Primitive attributes: user-managed scratchpad (it lives in the workspace), an int8 op's zero
 * points or (binary) source scales, and post-ops. */
static int32_t make_attr(aotc_dnnl_net *net, const aotc_dnnl_op *op, dnnl_primitive_attr_t *attr) {
    dnnl_post_ops_t po;
    int32_t i;
    TRY(dnnl_primitive_attr_create(attr));
    TRY(dnnl_primitive_attr_set_scratchpad_mode(*attr, dnnl_scratchpad_mode_user));
    if (op != NULL && op->quant && op->kind == AOTC_DNNL_BINARY) {
        TRY(dnnl_primitive_attr_set_scales_mask(*attr, DNNL_ARG_SRC_0, 0));
        TRY(dnnl_primitive_attr_set_scales_mask(*attr, DNNL_ARG_SRC_1, 0));
    } else if (op != NULL && op->quant) {
        if (op->inputs[AOTC_DNNL_Q_SRC_ZERO] >= 0)
            TRY(dnnl_primitive_attr_set_zero_points_mask(*attr, DNNL_ARG_SRC, 0));
        if (op->inputs[AOTC_DNNL_Q_DST_ZERO] >= 0)
            TRY(dnnl_primitive_attr_set_zero_points_mask(*attr, DNNL_ARG_DST, 0));
    }
    if (op == NULL || op->n_post == 0) return 0;
    TRY(dnnl_post_ops_create(&po));
    for (i = 0; i < op->n_post; ++i) {
        const aotc_dnnl_post_op *p = &op->post[i];
        if (p->kind == AOTC_DNNL_POST_SWISH) {
            continue; /* run by this runtime after the primitive (swish_step) */
        } else if (p->kind == AOTC_DNNL_POST_SUM) {
            TRY(dnnl_post_ops_append_sum(po, 1.0f, 0, dnnl_data_type_undef));
        } else if (p->kind == AOTC_DNNL_POST_BINARY) {
            const aotc_dnnl_tensor *t = &net->desc->tensors[p->tensor];
            dnnl_memory_desc_t md;
            TRY(plain_md(&md, t->ndims, t->dims, t->dtype));
            TRY(dnnl_post_ops_append_binary(po, (dnnl_alg_kind_t)p->alg, md));
            TRY(dnnl_memory_desc_destroy(md));
        } else
            TRY(dnnl_post_ops_append_eltwise(po, (dnnl_alg_kind_t)p->alg, p->alpha, p->beta));
    }
    TRY(dnnl_primitive_attr_set_post_ops(*attr, po));
    TRY(dnnl_post_ops_destroy(po));
    return 0;
}

/* Append a step running the primitive of `pd`; args are (DNNL_ARG_*, slot) pairs. The
 * scratchpad, when the primitive needs one, gets its own workspace slot. */
static int32_t add_step(aotc_dnnl_net *net, dnnl_primitive_desc_t pd, int32_t n, const int32_t *kinds,
                        const int32_t *slots) {
    aotc_dnnl_step *st;
    const_dnnl_memory_desc_t scratch_md;
    int32_t i, step = net->n_steps;
    if (net->n_steps >= net->max_steps || n + 1 > AOTC_DNNL_MAX_ARGS) return AOTC_DNNL_E_CAPACITY;
    st = &net->steps[step];
    TRY(dnnl_primitive_create(&st->prim, pd));
    st->op = net->building;
    st->n_args = 0;
    st->swish = NULL;
    for (i = 0; i < n; ++i) {
        st->args[st->n_args].arg = kinds[i];
        st->args[st->n_args].memory = net->slots[slots[i]].mem;
        st->n_args++;
        touch(net, slots[i], step);
    }
    scratch_md = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    if (scratch_md != NULL && dnnl_memory_desc_get_size(scratch_md) > 0) {
        int32_t s;
        CHECK(new_slot(net, scratch_md, AOTC_DNNL_AT_WORKSPACE, -1, DNNL_MEMORY_NONE, &s));
        st->args[st->n_args].arg = DNNL_ARG_SCRATCHPAD;
        st->args[st->n_args].memory = net->slots[s].mem;
        st->n_args++;
        touch(net, s, step);
    }
    net->n_steps++;
    TRY(dnnl_primitive_desc_destroy(pd));
    return 0;
}

static int32_t add_reorder(aotc_dnnl_net *net, int32_t from, int32_t to) {
    dnnl_primitive_desc_t pd;
    dnnl_primitive_attr_t attr;
    const int32_t kinds[2] = {DNNL_ARG_FROM, DNNL_ARG_TO}, slots[2] = {from, to};
    CHECK(make_attr(net, NULL, &attr));
    TRY(dnnl_reorder_primitive_desc_create(&pd, md_of(net, from), g_engine, md_of(net, to), g_engine, attr));
    TRY(dnnl_primitive_attr_destroy(attr));
    return add_step(net, pd, 2, kinds, slots);
}

/* `slot` in layout `md`: itself when it already is, else a boundary reorder into a workspace buffer. */
static int32_t as_layout(aotc_dnnl_net *net, int32_t slot, const_dnnl_memory_desc_t md, int32_t *out) {
    if (dnnl_memory_desc_equal(md_of(net, slot), md)) {
        *out = slot;
        return 0;
    }
    CHECK(new_slot(net, md, AOTC_DNNL_AT_WORKSPACE, -1, DNNL_MEMORY_NONE, out));
    return add_reorder(net, slot, *out);
}

/* `slot` seen as a plain tensor of the given dims: a view when its layout is plain, else a
 * reorder into a plain buffer first. */
static int32_t plain_view(aotc_dnnl_net *net, int32_t slot, int32_t ndims, const dnnl_dims_t dims, int32_t *out) {
    dnnl_memory_desc_t plain, view;
    const_dnnl_memory_desc_t md = md_of(net, slot);
    int32_t src = slot, src_ndims = 0;
    const dnnl_dims_t *src_dims = NULL;
    if (!is_plain(md)) {
        dnnl_memory_desc_query(md, dnnl_query_ndims_s32, &src_ndims);
        dnnl_memory_desc_query(md, dnnl_query_dims, &src_dims);
        TRY(plain_md(&plain, src_ndims, *src_dims, dtype_of(md)));
        CHECK(as_layout(net, slot, plain, &src));
        TRY(dnnl_memory_desc_destroy(plain));
    }
    TRY(plain_md(&view, ndims, dims, dtype_of(md)));
    CHECK(view_slot(net, src, view, out));
    TRY(dnnl_memory_desc_destroy(view));
    return 0;
}

/* ---- tensors ----------------------------------------------------------------------- */

/* The slot holding tensor t, created on first use for inputs and constants (plain). */
static int32_t value(aotc_dnnl_net *net, int32_t t, int32_t *out) {
    const aotc_dnnl_tensor *ten = &net->desc->tensors[t];
    dnnl_memory_desc_t md;
    if (net->tensor_slot[t] >= 0) {
        *out = net->tensor_slot[t];
        return 0;
    }
    TRY(plain_md(&md, ten->ndims, ten->dims, ten->dtype));
    if (ten->kind == AOTC_DNNL_INPUT) {
        CHECK(new_slot(net, md, AOTC_DNNL_AT_INPUT, ten->index, DNNL_MEMORY_NONE, out));
    } else if (ten->kind == AOTC_DNNL_CONST) {
        void *data = net->desc->weights ? (void *)net->desc->weights[ten->index] : DNNL_MEMORY_NONE;
        CHECK(new_slot(net, md, AOTC_DNNL_AT_CONST, ten->index, data, out));
    } else {
        fprintf(stderr, "aotc dnnl: %s: tensor %d is read before it is written\n", net->desc->name, (int)t);
        return AOTC_DNNL_E_ONEDNN;
    }
    TRY(dnnl_memory_desc_destroy(md));
    net->tensor_slot[t] = *out;
    return 0;
}

/* Tensor t seen with `ndims` dims (leading 1s added: ONNX broadcasting), plain when reshaped. */
static int32_t value_rank(aotc_dnnl_net *net, int32_t t, int32_t ndims, int32_t *out) {
    const aotc_dnnl_tensor *ten = &net->desc->tensors[t];
    dnnl_dims_t dims;
    int32_t i, pad = ndims - ten->ndims, slot;
    CHECK(value(net, t, &slot));
    if (pad <= 0) {
        *out = slot;
        return 0;
    }
    for (i = 0; i < ndims; ++i) dims[i] = i < pad ? 1 : ten->dims[i - pad];
    return plain_view(net, slot, ndims, dims, out);
}

/* Constant weights in the layout the primitive chose: used in place when plain, else reordered
 * now, once, into memory oneDNN allocates (not in probe mode, which has no weights). */
static int32_t weights(aotc_dnnl_net *net, int32_t t, const_dnnl_memory_desc_t want, int32_t ndims,
                       const dnnl_dims_t dims, int32_t *out) {
    const aotc_dnnl_tensor *ten = &net->desc->tensors[t];
    dnnl_memory_desc_t user;
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    dnnl_memory_t from;
    void *data = net->desc->weights ? (void *)net->desc->weights[ten->index] : DNNL_MEMORY_NONE;
    TRY(plain_md(&user, ndims, dims, ten->dtype));
    if (dnnl_memory_desc_equal(user, want)) {
        CHECK(new_slot(net, user, AOTC_DNNL_AT_CONST, ten->index, data, out));
        TRY(dnnl_memory_desc_destroy(user));
        return 0;
    }
    CHECK(new_slot(net, want, AOTC_DNNL_AT_OWNED, -1, net->desc->weights ? DNNL_MEMORY_ALLOCATE
                                                                        : DNNL_MEMORY_NONE, out));
    if (net->desc->weights) {
        dnnl_exec_arg_t args[2];
        TRY(dnnl_memory_create(&from, user, g_engine, data));
        TRY(dnnl_reorder_primitive_desc_create(&pd, user, g_engine, want, g_engine, NULL));
        TRY(dnnl_primitive_create(&prim, pd));
        args[0].arg = DNNL_ARG_FROM;
        args[0].memory = from;
        args[1].arg = DNNL_ARG_TO;
        args[1].memory = net->slots[*out].mem;
        TRY(dnnl_primitive_execute(prim, g_stream, 2, args));
        TRY(dnnl_stream_wait(g_stream));
        TRY(dnnl_primitive_destroy(prim));
        TRY(dnnl_primitive_desc_destroy(pd));
        TRY(dnnl_memory_destroy(from));
    }
    TRY(dnnl_memory_desc_destroy(user));
    return 0;
}

/* Where op k writes tensor t in layout md: straight into the region's output when the layout is
 * plain; into the residual's own buffer for an in-place sum when the residual dies here; else
 * a workspace buffer. A sum post-op's residual is copied into the destination first. */
static int32_t destination(aotc_dnnl_net *net, int32_t k, int32_t t, const_dnnl_memory_desc_t md,
                           int32_t residual, int32_t *out) {
    const aotc_dnnl_tensor *ten = &net->desc->tensors[t];
    const aotc_dnnl_op *op = &net->desc->ops[k];
    int32_t res_slot = -1, i, read = 0;
    for (i = 0; i < op->n_inputs; ++i) read |= op->inputs[i] == residual;
    if (residual >= 0) {
        CHECK(value(net, residual, &res_slot));
        /* not over the op's own source: y = conv(r) + r would overwrite r while reading it */
        if (!read && net->desc->tensors[residual].kind == AOTC_DNNL_INTERNAL &&
            net->desc->tensors[residual].last_use == k &&
            net->slots[res_slot].where == AOTC_DNNL_AT_WORKSPACE &&
            dnnl_memory_desc_equal(md_of(net, res_slot), md) && ten->kind != AOTC_DNNL_OUTPUT) {
            *out = res_slot; /* in place: dst += conv(...) over the residual's bytes */
            return 0;
        }
    }
    if (ten->kind == AOTC_DNNL_OUTPUT && is_plain(md)) { /* same bytes as the caller's buffer */
        CHECK(new_slot(net, md, AOTC_DNNL_AT_OUTPUT, ten->index, DNNL_MEMORY_NONE, out));
    } else {
        CHECK(new_slot(net, md, AOTC_DNNL_AT_WORKSPACE, -1, DNNL_MEMORY_NONE, out));
    }
    if (res_slot >= 0) CHECK(add_reorder(net, res_slot, *out));
    return 0;
}

/* Record slot as tensor t's value, viewed with t's dims; a region output that was computed in
 * another layout gets its boundary reorder into the caller's buffer. */
static int32_t produced(aotc_dnnl_net *net, int32_t t, int32_t slot) {
    const aotc_dnnl_tensor *ten = &net->desc->tensors[t];
    int32_t nd = 0;
    dnnl_memory_desc_query(md_of(net, slot), dnnl_query_ndims_s32, &nd);
    if (nd != (ten->ndims ? ten->ndims : 1)) CHECK(plain_view(net, slot, ten->ndims, ten->dims, &slot));
    net->tensor_slot[t] = slot;
    if (ten->kind == AOTC_DNNL_OUTPUT && net->slots[slot].where != AOTC_DNNL_AT_OUTPUT) {
        dnnl_memory_desc_t md;
        int32_t dst;
        TRY(plain_md(&md, ten->ndims, ten->dims, ten->dtype));
        CHECK(new_slot(net, md, AOTC_DNNL_AT_OUTPUT, ten->index, DNNL_MEMORY_NONE, &dst));
        TRY(dnnl_memory_desc_destroy(md));
        CHECK(add_reorder(net, slot, dst));
    }
    return 0;
}

static int32_t sum_residual(const aotc_dnnl_op *op) {
    int32_t i;
    for (i = 0; i < op->n_post; ++i)
        if (op->post[i].kind == AOTC_DNNL_POST_SUM) return op->post[i].tensor;
    return -1;
}

/* The step just added runs op's SWISH post-op (the last one, when it has one) over its result
 * `dst` after the primitive. oneDNN 3.2's swish (eltwise_swish post-op or primitive) costs 0.5-1.9 ns
 * per element on AVX-512 (EfficientNet-B0: 3.0-3.4 ms of its 12.4 ms), this runtime's pass over
 * the result, 0.31 (docs/dnnl.md). */
static int32_t swish_step(aotc_dnnl_net *net, const aotc_dnnl_op *op, int32_t dst) {
    aotc_dnnl_step *st = &net->steps[net->n_steps - 1];
    const aotc_dnnl_post_op *p = op->n_post > 0 ? &op->post[op->n_post - 1] : NULL;
    const_dnnl_memory_desc_t md = md_of(net, dst);
    if (p == NULL || p->kind != AOTC_DNNL_POST_SWISH) return 0;
    if (dtype_of(md) != dnnl_f32) {
        fprintf(stderr, "aotc dnnl: %s: a swish post-op over a result that is not float32\n", net->desc->name);
        return AOTC_DNNL_E_ONEDNN;
    }
    st->swish = net->slots[dst].mem;
    st->swish_n = dnnl_memory_desc_get_size(md) / sizeof(float);
    st->swish_alpha = p->alpha;
    return 0;
}

/* ---- one builder per op kind ----------------------------------------------------------- */

static int impl_has(const_dnnl_primitive_desc_t pd, const char *what) {
    const char *impl = NULL;
    return dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl != NULL &&
           strstr(impl, what) != NULL;
}

/* The execution arguments of an int8 conv's or matmul's zero points and of binary post-ops'
 * second operands (constants, used in place). */
static int32_t quant_args(aotc_dnnl_net *net, const aotc_dnnl_op *op, int32_t *kinds, int32_t *slots, int32_t *n) {
    static const int32_t args[2] = {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST};
    int32_t i;
    for (i = 0; op->quant && i < 2; ++i) {
        if (op->inputs[AOTC_DNNL_Q_SRC_ZERO + i] < 0) continue;
        CHECK(value(net, op->inputs[AOTC_DNNL_Q_SRC_ZERO + i], &slots[*n]));
        kinds[(*n)++] = args[i];
    }
    for (i = 0; i < op->n_post; ++i) {
        if (op->post[i].kind != AOTC_DNNL_POST_BINARY) continue;
        CHECK(value(net, op->post[i].tensor, &slots[*n]));
        kinds[(*n)++] = DNNL_ARG_ATTR_MULTIPLE_POST_OP(i) | DNNL_ARG_SRC_1;
    }
    return 0;
}

/* The convolution primitive: "any" layouts unless nhwc gets oneDNN's brgemm kernel. On AVX2,
 * "any" picks oneDNN 3.2's direct nChw8c kernel, which runs dense 3x3 convolutions about 20 %
 * slower at 28x28 to 7x7 pixels than its brgemm kernel over nhwc (oneDNN 3.13 picks nhwc
 * itself). So a dense 2-D convolution with a spatial kernel and at least 16 input channels
 * asks for nhwc source and destination first, and keeps them only when oneDNN answers with a
 * brgemm implementation (docs/dnnl.md, Layouts). */
static dnnl_status_t conv_pd(dnnl_primitive_desc_t *pd, const aotc_dnnl_op *op, const aotc_dnnl_tensor *x,
                             const aotc_dnnl_tensor *w, const_dnnl_memory_desc_t src_any,
                             const_dnnl_memory_desc_t wei_any, const_dnnl_memory_desc_t bias_md,
                             const_dnnl_memory_desc_t dst_any, const dnnl_dims_t ydims, const_dnnl_primitive_attr_t attr) {
    if (x->ndims == 4 && op->groups == 1 && w->dims[2] * w->dims[3] > 1 && x->dims[1] >= 16) {
        dnnl_memory_desc_t src_nhwc = NULL, dst_nhwc = NULL;
        const dnnl_data_type_t dt = (dnnl_data_type_t)x->dtype; /* the destination's type too */
        dnnl_status_t s = dnnl_memory_desc_create_with_tag(&src_nhwc, 4, x->dims, dt, dnnl_nhwc);
        if (s == dnnl_success) s = dnnl_memory_desc_create_with_tag(&dst_nhwc, 4, ydims, dt, dnnl_nhwc);
        if (s == dnnl_success)
            s = dnnl_convolution_forward_primitive_desc_create(pd, g_engine, dnnl_forward_inference,
                                                               dnnl_convolution_direct, src_nhwc, wei_any, bias_md,
                                                               dst_nhwc, op->strides, op->dilation, op->pad_l,
                                                               op->pad_r, attr);
        if (src_nhwc) dnnl_memory_desc_destroy(src_nhwc);
        if (dst_nhwc) dnnl_memory_desc_destroy(dst_nhwc);
        if (s == dnnl_success) {
            if (impl_has(*pd, "brg")) return dnnl_success;
            dnnl_primitive_desc_destroy(*pd);
        }
    }
    return dnnl_convolution_forward_primitive_desc_create(pd, g_engine, dnnl_forward_inference,
                                                          dnnl_convolution_direct, src_any, wei_any, bias_md, dst_any,
                                                          op->strides, op->dilation, op->pad_l, op->pad_r, attr);
}

/* A source kept in the blocked layout its producer chose can leave oneDNN only its reference
 * kernel (LeNet's 6-channel nChw8c: 16 ms instead of 20 us): then let the convolution pick the
 * source's layout too, at the price of a reorder on the way in. */
static dnnl_status_t conv_pd_not_ref(dnnl_primitive_desc_t *pd, const aotc_dnnl_op *op, const aotc_dnnl_tensor *x,
                                     const aotc_dnnl_tensor *w, const_dnnl_memory_desc_t src_md,
                                     const_dnnl_memory_desc_t wei_any, const_dnnl_memory_desc_t bias_md,
                                     const_dnnl_memory_desc_t dst_any, const dnnl_dims_t ydims,
                                     const_dnnl_primitive_attr_t attr) {
    dnnl_memory_desc_t src_any = NULL;
    dnnl_primitive_desc_t other;
    dnnl_status_t s = conv_pd(pd, op, x, w, src_md, wei_any, bias_md, dst_any, ydims, attr);
    if (s != dnnl_success || !impl_has(*pd, "ref") || any_md(&src_any, x->ndims, x->dims, x->dtype) != dnnl_success)
        return s;
    if (conv_pd(&other, op, x, w, src_any, wei_any, bias_md, dst_any, ydims, attr) == dnnl_success) {
        if (impl_has(other, "ref")) {
            dnnl_primitive_desc_destroy(other);
        } else {
            dnnl_primitive_desc_destroy(*pd);
            *pd = other;
        }
    }
    dnnl_memory_desc_destroy(src_any);
    return dnnl_success;
}

static int32_t build_conv(aotc_dnnl_net *net, int32_t k, const aotc_dnnl_op *op) {
    const aotc_dnnl_tensor *x = &net->desc->tensors[op->inputs[0]], *w = &net->desc->tensors[op->inputs[1]];
    const aotc_dnnl_tensor *y = &net->desc->tensors[op->output];
    dnnl_memory_desc_t src_any, wei_any, dst_any, bias_md = NULL;
    dnnl_primitive_desc_t pd;
    dnnl_primitive_attr_t attr;
    dnnl_dims_t wdims, bdims;
    int32_t wnd = w->ndims, i, src, wei, bias = -1, dst, kinds[7], slots[7], n = 0;
    int64_t taps;
    const int has_bias = op->n_inputs > 2 && op->inputs[2] >= 0;
    CHECK(value(net, op->inputs[0], &src));
    /* weights [O, I/g, k...] become [g, O/g, I/g, k...] for a grouped convolution */
    if (op->groups > 1) {
        wdims[0] = op->groups;
        wdims[1] = w->dims[0] / op->groups;
        for (i = 1; i < w->ndims; ++i) wdims[i + 1] = w->dims[i];
        wnd = w->ndims + 1;
    } else {
        for (i = 0; i < w->ndims; ++i) wdims[i] = w->dims[i];
    }
    /* a plain source (a region input) lets the convolution pick its layout, reordered on the
     * way in; a tensor the region produced in a blocked layout is read as it is */
    if (x->kind == AOTC_DNNL_INPUT || is_plain(md_of(net, src))) TRY(any_md(&src_any, x->ndims, x->dims, x->dtype));
    else TRY(dnnl_memory_desc_clone(&src_any, md_of(net, src)));
    TRY(any_md(&wei_any, wnd, wdims, w->dtype));
    TRY(any_md(&dst_any, y->ndims, y->dims, y->dtype));
    bdims[0] = y->dims[1];
    if (has_bias) TRY(plain_md(&bias_md, 1, bdims, net->desc->tensors[op->inputs[2]].dtype));
    CHECK(make_attr(net, op, &attr));
    if (op->layout > 0 && y->ndims >= 3 && y->ndims <= 5 && !op->quant) {
        /* the layout a later op reads this output in, when oneDNN has a kernel for it: one
         * reorder fewer per run (else "any", as without the hint) */
        dnnl_memory_desc_t hint;
        TRY(dnnl_memory_desc_create_with_tag(&hint, y->ndims, y->dims, (dnnl_data_type_t)y->dtype,
                                             LAYOUTS[y->ndims - 3][op->layout - 1]));
        if (conv_pd_not_ref(&pd, op, x, w, src_any, wei_any, bias_md, hint, y->dims, attr) == dnnl_success) {
            if (impl_has(pd, "ref") || !dnnl_memory_desc_equal(dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), hint)) {
                TRY(dnnl_primitive_desc_destroy(pd));
                pd = NULL;
            }
        } else {
            pd = NULL;
        }
        TRY(dnnl_memory_desc_destroy(hint));
    } else {
        pd = NULL;
    }
    if (pd == NULL) TRY(conv_pd_not_ref(&pd, op, x, w, src_any, wei_any, bias_md, dst_any, y->dims, attr));
    /* int8 with a spatial kernel: oneDNN 3.2 lists its brgemm kernel first and its direct int8
     * kernel next; the direct one ran ResNet-8's 3x3 convolutions 1.3-1.6x faster and ResNet-18's
     * as fast (docs/dnnl.md, int8) */
    for (i = 2, taps = 1; i < w->ndims; ++i) taps *= w->dims[i];
    if (op->quant && op->groups == 1 && taps > 1 && impl_has(pd, "brgconv:") &&
        (dnnl_primitive_desc_next_impl(pd) != dnnl_success || !impl_has(pd, "jit_int8:"))) {
        TRY(dnnl_primitive_desc_destroy(pd)); /* not offered: the first choice again */
        TRY(conv_pd_not_ref(&pd, op, x, w, src_any, wei_any, bias_md, dst_any, y->dims, attr));
    }
    TRY(dnnl_primitive_attr_destroy(attr));
    CHECK(as_layout(net, src, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), &src));
    CHECK(weights(net, op->inputs[1], dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), wnd, wdims,
                  &wei));
    if (has_bias) CHECK(weights(net, op->inputs[2], bias_md, 1, bdims, &bias));
    CHECK(destination(net, k, op->output, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0),
                      sum_residual(op), &dst));
    kinds[n] = DNNL_ARG_SRC, slots[n++] = src;
    kinds[n] = DNNL_ARG_WEIGHTS, slots[n++] = wei;
    if (has_bias) kinds[n] = DNNL_ARG_BIAS, slots[n++] = bias;
    kinds[n] = DNNL_ARG_DST, slots[n++] = dst;
    CHECK(quant_args(net, op, kinds, slots, &n));
    CHECK(add_step(net, pd, n, kinds, slots));
    CHECK(swish_step(net, op, dst));
    TRY(dnnl_memory_desc_destroy(src_any));
    TRY(dnnl_memory_desc_destroy(wei_any));
    TRY(dnnl_memory_desc_destroy(dst_any));
    if (bias_md) TRY(dnnl_memory_desc_destroy(bias_md));
    return produced(net, op->output, dst);
}

/* y[M, N] = x[M, K] . w[K, N] (+ bias), where M is every dim of x but the last. */
static int32_t build_matmul(aotc_dnnl_net *net, int32_t k, const aotc_dnnl_op *op) {
    const aotc_dnnl_tensor *x = &net->desc->tensors[op->inputs[0]], *w = &net->desc->tensors[op->inputs[1]];
    dnnl_memory_desc_t wei_any, dst_any, bias_md = NULL;
    dnnl_primitive_desc_t pd;
    dnnl_primitive_attr_t attr;
    dnnl_dims_t xd, yd, bd;
    int32_t i, src, wei, bias = -1, dst, kinds[7], slots[7], n = 0;
    const int has_bias = op->n_inputs > 2 && op->inputs[2] >= 0;
    xd[0] = 1;
    for (i = 0; i + 1 < x->ndims; ++i) xd[0] *= x->dims[i];
    xd[1] = x->dims[x->ndims - 1];
    yd[0] = xd[0];
    yd[1] = w->dims[1];
    CHECK(value(net, op->inputs[0], &src));
    CHECK(plain_view(net, src, 2, xd, &src));
    TRY(any_md(&wei_any, 2, w->dims, w->dtype));
    TRY(any_md(&dst_any, 2, yd, net->desc->tensors[op->output].dtype));
    if (has_bias) {
        const aotc_dnnl_tensor *b = &net->desc->tensors[op->inputs[2]];
        bd[0] = b->dims[0];
        bd[1] = b->dims[1];
        TRY(plain_md(&bias_md, 2, bd, b->dtype));
    }
    CHECK(make_attr(net, op, &attr));
    TRY(dnnl_matmul_primitive_desc_create(&pd, g_engine, md_of(net, src), wei_any, bias_md, dst_any, attr));
    TRY(dnnl_primitive_attr_destroy(attr));
    CHECK(weights(net, op->inputs[1], dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), 2, w->dims,
                  &wei));
    if (has_bias) CHECK(weights(net, op->inputs[2], bias_md, 2, bd, &bias));
    CHECK(destination(net, k, op->output, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), -1, &dst));
    kinds[n] = DNNL_ARG_SRC, slots[n++] = src;
    kinds[n] = DNNL_ARG_WEIGHTS, slots[n++] = wei;
    if (has_bias) kinds[n] = DNNL_ARG_BIAS, slots[n++] = bias;
    kinds[n] = DNNL_ARG_DST, slots[n++] = dst;
    CHECK(quant_args(net, op, kinds, slots, &n));
    CHECK(add_step(net, pd, n, kinds, slots));
    CHECK(swish_step(net, op, dst));
    TRY(dnnl_memory_desc_destroy(wei_any));
    TRY(dnnl_memory_desc_destroy(dst_any));
    if (bias_md) TRY(dnnl_memory_desc_destroy(bias_md));
    return produced(net, op->output, dst);
}

/* Ops whose destination has the source's dims: pooling excepted, each keeps the source's layout
 * (a normalisation, the channel-blocked one when its source is plain). */
static int32_t build_simple(aotc_dnnl_net *net, int32_t k, const aotc_dnnl_op *op) {
    const aotc_dnnl_tensor *y = &net->desc->tensors[op->output];
    dnnl_memory_desc_t dst_md = NULL;
    dnnl_primitive_desc_t pd;
    dnnl_primitive_attr_t attr;
    int32_t src, dst, i, n = 0, kinds[6], slots[6];
    CHECK(value(net, op->inputs[0], &src));
    CHECK(make_attr(net, NULL, &attr));
    if (op->kind == AOTC_DNNL_SOFTMAX) {
        CHECK(plain_view(net, src, 3, op->kernel, &src));
        TRY(plain_md(&dst_md, 3, op->kernel, y->dtype));
        TRY(dnnl_softmax_forward_primitive_desc_create(&pd, g_engine, dnnl_forward_inference, (dnnl_alg_kind_t)op->alg,
                                                       md_of(net, src), dst_md, 1, attr));
    } else if (op->kind == AOTC_DNNL_POOL) {
        TRY(any_md(&dst_md, y->ndims, y->dims, y->dtype));
        TRY(dnnl_pooling_forward_primitive_desc_create(&pd, g_engine, dnnl_forward_inference,
                                                       (dnnl_alg_kind_t)op->alg, md_of(net, src), dst_md,
                                                       op->strides, op->kernel, op->dilation, op->pad_l,
                                                       op->pad_r, attr));
    } else if (op->kind == AOTC_DNNL_ELTWISE) {
        TRY(dnnl_eltwise_forward_primitive_desc_create(&pd, g_engine, dnnl_forward_inference,
                                                       (dnnl_alg_kind_t)op->alg, md_of(net, src),
                                                       md_of(net, src), op->alpha, op->beta, attr));
    } else if (op->kind == AOTC_DNNL_LRN) {
        TRY(dnnl_lrn_forward_primitive_desc_create(&pd, g_engine, dnnl_forward_inference, dnnl_lrn_across_channels,
                                                   md_of(net, src), md_of(net, src), op->local_size, op->alpha,
                                                   op->beta, op->k, attr));
    } else { /* AOTC_DNNL_BNORM */
        /* oneDNN's normalisation over plain data (ncsp_bnorm) is 4-60x slower than over the
         * channel-blocked layout, far more than the reorder in costs: reorder a plain source */
        if (y->ndims >= 3 && y->ndims <= 5 && is_plain(md_of(net, src))) {
            dnnl_memory_desc_t blocked;
            TRY(dnnl_memory_desc_create_with_tag(&blocked, y->ndims, y->dims, (dnnl_data_type_t)y->dtype,
                                                 LAYOUTS[y->ndims - 3][native_blocked()]));
            CHECK(as_layout(net, src, blocked, &src));
            TRY(dnnl_memory_desc_destroy(blocked));
        }
        TRY(dnnl_batch_normalization_forward_primitive_desc_create(&pd, g_engine, dnnl_forward_inference,
                                                                   md_of(net, src), md_of(net, src), op->epsilon,
                                                                   op->flags, attr));
    }
    TRY(dnnl_primitive_attr_destroy(attr));
    kinds[n] = DNNL_ARG_SRC, slots[n++] = src;
    if (op->kind == AOTC_DNNL_BNORM) {
        static const int32_t args[4] = {DNNL_ARG_SCALE, DNNL_ARG_SHIFT, DNNL_ARG_MEAN, DNNL_ARG_VARIANCE};
        for (i = 0; i < 4; ++i) {
            CHECK(value(net, op->inputs[1 + i], &slots[n]));
            kinds[n++] = args[i];
        }
    }
    CHECK(destination(net, k, op->output, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), -1, &dst));
    kinds[n] = DNNL_ARG_DST, slots[n++] = dst;
    CHECK(add_step(net, pd, n, kinds, slots));
    if (dst_md) TRY(dnnl_memory_desc_destroy(dst_md));
    return produced(net, op->output, dst);
}

static int32_t build_binary(aotc_dnnl_net *net, int32_t k, const aotc_dnnl_op *op) {
    const aotc_dnnl_tensor *y = &net->desc->tensors[op->output];
    dnnl_memory_desc_t dst_any;
    dnnl_primitive_desc_t pd;
    dnnl_primitive_attr_t attr;
    int32_t a, b, dst, kinds[5], slots[5], i;
    CHECK(value_rank(net, op->inputs[0], y->ndims, &a));
    CHECK(value_rank(net, op->inputs[1], y->ndims, &b));
    TRY(any_md(&dst_any, y->ndims, y->dims, y->dtype));
    CHECK(make_attr(net, op, &attr));
    TRY(dnnl_binary_primitive_desc_create(&pd, g_engine, (dnnl_alg_kind_t)op->alg, md_of(net, a), md_of(net, b),
                                          dst_any, attr));
    TRY(dnnl_primitive_attr_destroy(attr));
    CHECK(destination(net, k, op->output, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), -1, &dst));
    kinds[0] = DNNL_ARG_SRC_0, slots[0] = a;
    kinds[1] = DNNL_ARG_SRC_1, slots[1] = b;
    kinds[2] = DNNL_ARG_DST, slots[2] = dst;
    for (i = 0; op->quant && i < 2; ++i) { /* int8: the sources' scales */
        CHECK(value(net, op->inputs[2 + i], &slots[3 + i]));
        kinds[3 + i] = DNNL_ARG_ATTR_SCALES | (i == 0 ? DNNL_ARG_SRC_0 : DNNL_ARG_SRC_1);
    }
    CHECK(add_step(net, pd, op->quant ? 5 : 3, kinds, slots));
    TRY(dnnl_memory_desc_destroy(dst_any));
    return produced(net, op->output, dst);
}

/* A concat primitive over srcs with every input and the output in layout l, inputs reordered
 * into it as needed; *pd is NULL when oneDNN has only its reference concat for that. */
static int32_t concat_in_layout(aotc_dnnl_net *net, const aotc_dnnl_op *op, int l, int32_t *srcs,
                                dnnl_primitive_desc_t *pd) {
    const aotc_dnnl_tensor *y = &net->desc->tensors[op->output];
    dnnl_memory_desc_t mds[AOTC_DNNL_MAX_INPUTS], dst_md;
    dnnl_primitive_attr_t attr;
    int32_t i;
    *pd = NULL;
    for (i = 0; i < op->n_inputs; ++i) {
        const aotc_dnnl_tensor *x = &net->desc->tensors[op->inputs[i]];
        TRY(dnnl_memory_desc_create_with_tag(&mds[i], x->ndims, x->dims, (dnnl_data_type_t)x->dtype,
                                             LAYOUTS[x->ndims - 3][l]));
    }
    TRY(dnnl_memory_desc_create_with_tag(&dst_md, y->ndims, y->dims, (dnnl_data_type_t)y->dtype,
                                         LAYOUTS[y->ndims - 3][l]));
    CHECK(make_attr(net, NULL, &attr));
    if (dnnl_concat_primitive_desc_create(pd, g_engine, dst_md, op->n_inputs, op->axis,
                                          (const_dnnl_memory_desc_t *)mds, attr) != dnnl_success) {
        *pd = NULL;
    } else if (impl_has(*pd, "ref")) {
        TRY(dnnl_primitive_desc_destroy(*pd));
        *pd = NULL;
    }
    TRY(dnnl_primitive_attr_destroy(attr));
    for (i = 0; i < op->n_inputs; ++i) {
        if (*pd != NULL) CHECK(as_layout(net, srcs[i], mds[i], &srcs[i]));
        TRY(dnnl_memory_desc_destroy(mds[i]));
    }
    TRY(dnnl_memory_desc_destroy(dst_md));
    return 0;
}

/* True when every input's channel count (the concat axis) is a multiple of layout l's block. */
static int channels_split(const aotc_dnnl_net *net, const aotc_dnnl_op *op, int l) {
    const int64_t block = l == AOTC_DNNL_BLOCKED_16 ? 16 : 8;
    int32_t i;
    for (i = 0; i < op->n_inputs; ++i)
        if (net->desc->tensors[op->inputs[i]].dims[1] % block != 0) return 0;
    return 1;
}

/* Concat. oneDNN has a fast concat (simple: one copy per input and outer index) only when every
 * input and the output share one layout, and runs its reference concat otherwise, which is what
 * a plain region input next to a convolution's result got (DenseNet); the plain output then
 * kept the normalisations after it in their slow plain kernels. So once any input comes in a
 * layout of the region's own (not plain), all of them are put into one layout first:
 *  - along channels whose counts are multiples of the block, the channel-blocked layout (that
 *    of the first blocked input, else this CPU's): each input is then one contiguous run of the
 *    output per image, and normalisation, pooling and 1x1/depthwise convolutions after it run
 *    their blocked kernels (channels-last costs 3x more per concat, with its runs of a few
 *    channels per pixel, and its normalisation kernel is slow for channel counts that are not
 *    multiples of 16);
 *  - else the layout of the first non-plain input, else channels-last;
 * each time only when oneDNN then has a non-reference concat. An all-plain concat stays plain. */
static int32_t build_concat(aotc_dnnl_net *net, int32_t k, const aotc_dnnl_op *op) {
    const_dnnl_memory_desc_t mds[AOTC_DNNL_MAX_INPUTS];
    int32_t srcs[AOTC_DNNL_MAX_INPUTS], i, dst;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_attr_t attr;
    aotc_dnnl_step *st;
    int l, first = -1, blocked = -1;
    for (i = 0; i < op->n_inputs; ++i) {
        const aotc_dnnl_tensor *x = &net->desc->tensors[op->inputs[i]];
        CHECK(value(net, op->inputs[i], &srcs[i]));
        l = layout_of(md_of(net, srcs[i]), x->ndims, x->dims);
        if (first < 0 && l > AOTC_DNNL_PLAIN) first = l;
        if (blocked < 0 && l >= AOTC_DNNL_BLOCKED_8) blocked = l;
    }
    if (first > AOTC_DNNL_PLAIN) {
        if (op->axis == 1) {
            if (blocked < 0) blocked = native_blocked();
            if (!channels_split(net, op, blocked)) blocked = AOTC_DNNL_BLOCKED_8;
            if (channels_split(net, op, blocked)) CHECK(concat_in_layout(net, op, blocked, srcs, &pd));
        }
        if (pd == NULL && !(op->axis == 1 && first == blocked)) CHECK(concat_in_layout(net, op, first, srcs, &pd));
        if (pd == NULL && first != AOTC_DNNL_CHANNELS_LAST)
            CHECK(concat_in_layout(net, op, AOTC_DNNL_CHANNELS_LAST, srcs, &pd));
    }
    if (pd == NULL) { /* as the inputs are: oneDNN picks the output's layout */
        for (i = 0; i < op->n_inputs; ++i) mds[i] = md_of(net, srcs[i]);
        CHECK(make_attr(net, NULL, &attr));
        TRY(dnnl_concat_primitive_desc_create(&pd, g_engine, NULL, op->n_inputs, op->axis, mds, attr));
        TRY(dnnl_primitive_attr_destroy(attr));
    }
    CHECK(destination(net, k, op->output, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), -1, &dst));
    {
        /* more sources than one step's fixed argument list holds: build the step by hand */
        int32_t kinds[1] = {DNNL_ARG_DST}, slots[1];
        slots[0] = dst;
        if (op->n_inputs + 2 > AOTC_DNNL_MAX_ARGS) return AOTC_DNNL_E_CAPACITY;
        CHECK(add_step(net, pd, 1, kinds, slots));
    }
    st = &net->steps[net->n_steps - 1];
    for (i = 0; i < op->n_inputs; ++i) {
        st->args[st->n_args].arg = DNNL_ARG_MULTIPLE_SRC + i;
        st->args[st->n_args].memory = net->slots[srcs[i]].mem;
        st->n_args++;
        touch(net, srcs[i], net->n_steps - 1);
    }
    return produced(net, op->output, dst);
}

static int32_t build_reshape(aotc_dnnl_net *net, const aotc_dnnl_op *op) {
    const aotc_dnnl_tensor *y = &net->desc->tensors[op->output];
    int32_t src, view;
    CHECK(value(net, op->inputs[0], &src));
    CHECK(plain_view(net, src, y->ndims, y->dims, &view));
    return produced(net, op->output, view);
}

/* ---- the region ------------------------------------------------------------------------ */

/* aotc gives int8 convolutions and matmuls to oneDNN only where they compute exactly: with VNNI.
 * Without it oneDNN's 8-bit products go through VPMADDUBSW, whose 16-bit sums saturate, and s8
 * weights are halved (aot/vendor/dnnl/probe.py int8_exact); aotc, run on such a CPU, keeps them
 * on the host. */
static int32_t check_int8_isa(const aotc_dnnl_net *net) {
    const int isa = (int)dnnl_get_effective_cpu_isa();
    int32_t k;
    if ((isa & dnnl_cpu_isa_avx2_vnni) == dnnl_cpu_isa_avx2_vnni ||
        (isa & dnnl_cpu_isa_avx512_core_vnni) == dnnl_cpu_isa_avx512_core_vnni)
        return 0;
    for (k = 0; k < net->desc->n_ops; ++k) { /* an int8 binary op has no 8-bit products */
        if (net->desc->ops[k].quant && net->desc->ops[k].kind != AOTC_DNNL_BINARY) {
            fprintf(stderr, "aotc dnnl: %s: int8 ops were compiled for a CPU with VNNI, which this one lacks "
                    "(oneDNN's int8 results would be inexact); recompile here (docs/dnnl.md)\n", net->desc->name);
            return AOTC_DNNL_E_ISA;
        }
    }
    return 0;
}

/* The threads oneDNN's primitives run on: the bundle's own, N when it was compiled with
 * --threads N, else 1. */
#if defined(AOTC_THREADS)
#define AOTC_DNNL_THREADS AOTC_THREADS
#else
#define AOTC_DNNL_THREADS 1
#endif

#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
/* oneDNN on OpenMP (the pip wheels: libgomp) takes omp_get_max_threads() threads, which is every
 * core unless the process's OMP_NUM_THREADS says otherwise; its C API has no thread count of its
 * own (dnnl_threadpool_interop_set_max_concurrency is for threadpool builds only). So init and
 * every run set the calling thread's OpenMP thread count to AOTC_DNNL_THREADS and put the
 * caller's back before returning. The trade: two calls through pointers per run (nanoseconds)
 * against setting it once at init, which would leave the caller's own parallel regions on that
 * thread at our count. The count is an ICV of the calling thread's task (per thread in libgomp
 * and libiomp), so the caller's other threads never see it, and two threads running bundles at
 * once each set their own. A bundle called inside the caller's parallel region runs oneDNN on that
 * one thread (oneDNN does not nest).
 * The functions are looked up, not linked (the bundle needs no OpenMP flags), in the OpenMP
 * runtime this oneDNN loaded: through libdnnl's own handle, whose dependencies dlsym searches, so
 * they are found even when the caller dlopened the bundle RTLD_LOCAL (libgomp then is not in the
 * global scope that dlopen(NULL) searches); the global scope is the fallback. */
static struct {
    int looked;
    void (*set)(int);
    int (*get)(void);
} g_omp;

static void *omp_sym(void *lib, const char *name) {
    void *sym = lib != NULL ? dlsym(lib, name) : NULL;
    if (sym == NULL) {
        void *self = dlopen(NULL, RTLD_LAZY);
        if (self != NULL) {
            sym = dlsym(self, name);
            dlclose(self);
        }
    }
    return sym;
}

static void find_omp(void) {
    void *lib = NULL, *set, *get;
#if defined(RTLD_NOLOAD)
    dnnl_status_t (*engine_create)(dnnl_engine_t *, dnnl_engine_kind_t, size_t) = dnnl_engine_create;
    void *in_dnnl;
    Dl_info info;
#endif
    if (g_omp.looked) return;
    g_omp.looked = 1;
#if defined(RTLD_NOLOAD)
    memcpy(&in_dnnl, &engine_create, sizeof in_dnnl); /* a function of libdnnl, to find that library */
    if (dladdr(in_dnnl, &info) != 0 && info.dli_fname != NULL) lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
#endif
    set = omp_sym(lib, "omp_set_num_threads");
    get = omp_sym(lib, "omp_get_max_threads");
    if (set != NULL && get != NULL) {
        memcpy(&g_omp.set, &set, sizeof set);
        memcpy(&g_omp.get, &get, sizeof get);
    }
    if (lib != NULL) dlclose(lib); /* RTLD_NOLOAD took a reference to the loaded library: given back */
}

/* The calling thread's OpenMP thread count becomes the bundle's; returns the caller's (0: none). */
static int omp_enter(void) {
    int caller;
    if (g_omp.set == NULL) return 0;
    caller = g_omp.get();
    if (caller != AOTC_DNNL_THREADS) g_omp.set(AOTC_DNNL_THREADS);
    return caller;
}

static void omp_leave(int caller) {
    if (caller > 0 && caller != AOTC_DNNL_THREADS) g_omp.set(caller);
}
#else
/* TBB and threadpool builds keep their own count (docs/dnnl.md, Threads). */
static void find_omp(void) {}
static int omp_enter(void) { return 0; }
static void omp_leave(int caller) { (void)caller; }
#endif

static int32_t net_init(aotc_dnnl_net *net, const aotc_dnnl_net_desc *desc);
static int32_t net_run(aotc_dnnl_net *net, const DLTensor *const *inputs, DLTensor *const *outputs,
                       void *workspace);

/* Init and run on the bundle's threads (omp_enter), the caller's count restored on every return. */
int32_t aotc_dnnl_net_init(aotc_dnnl_net *net, const aotc_dnnl_net_desc *desc) {
    int32_t rc;
    int caller;
    if (net->ready) return 0;
    find_omp();
    caller = omp_enter();
    rc = net_init(net, desc);
    omp_leave(caller);
    return rc;
}

int32_t aotc_dnnl_net_run(aotc_dnnl_net *net, const DLTensor *const *inputs, DLTensor *const *outputs,
                          void *workspace) {
    int32_t rc;
    int caller;
    if (!net->ready) return AOTC_DNNL_E_NOT_READY;
    caller = omp_enter();
    rc = net_run(net, inputs, outputs, workspace);
    omp_leave(caller);
    return rc;
}

static int32_t net_init(aotc_dnnl_net *net, const aotc_dnnl_net_desc *desc) {
    int32_t k, s;
    net->desc = desc;
    net->n_slots = net->n_steps = 0;
    if (g_engine == NULL) {
        TRY(dnnl_engine_create(&g_engine, dnnl_cpu, 0));
        TRY(dnnl_stream_create(&g_stream, g_engine, dnnl_stream_default_flags));
    }
    for (k = 0; k < desc->n_tensors; ++k) net->tensor_slot[k] = -1;
    CHECK(check_int8_isa(net));
    for (k = 0; k < desc->n_ops; ++k) {
        const aotc_dnnl_op *op = &desc->ops[k];
        net->building = k;
        switch (op->kind) {
        case AOTC_DNNL_CONV: CHECK(build_conv(net, k, op)); break;
        case AOTC_DNNL_MATMUL: CHECK(build_matmul(net, k, op)); break;
        case AOTC_DNNL_BINARY: CHECK(build_binary(net, k, op)); break;
        case AOTC_DNNL_CONCAT: CHECK(build_concat(net, k, op)); break;
        case AOTC_DNNL_RESHAPE: CHECK(build_reshape(net, op)); break;
        default: CHECK(build_simple(net, k, op)); break;
        }
    }
    if (desc->plan != NULL) { /* the compiled plan must hold what this machine needs */
        for (s = 0; s < net->n_slots; ++s) {
            const aotc_dnnl_slot *sl = &net->slots[s];
            size_t need;
            if (sl->where != AOTC_DNNL_AT_WORKSPACE || sl->index != s) continue;
            need = dnnl_memory_desc_get_size(md_of(net, s));
            if (s >= desc->n_plan || desc->plan[s].bytes < need) {
                fprintf(stderr, "aotc dnnl: %s: buffer %d needs %zu bytes, the plan has %llu: this CPU or thread "
                        "count differs from the machine aotc compiled on; recompile here (docs/dnnl.md)\n",
                        desc->name, (int)s, need, s < desc->n_plan ? (unsigned long long)desc->plan[s].bytes : 0ull);
                return AOTC_DNNL_E_WORKSPACE;
            }
        }
    }
    net->ready = 1;
    return 0;
}

static const_dnnl_memory_desc_t mem_md(const_dnnl_memory_t mem) {
    const_dnnl_memory_desc_t md = NULL;
    dnnl_memory_get_memory_desc(mem, &md);
    return md;
}

/* The slot whose memory object a step argument is (-1: none). */
static int32_t slot_of_mem(const aotc_dnnl_net *net, dnnl_memory_t mem) {
    int32_t s;
    for (s = 0; s < net->n_slots; ++s)
        if (net->slots[s].mem == mem) return s;
    return -1;
}

/* Probe mode: "step <n> <primitive kind> <where> <op> <tensor> <layout> <implementation>", where a reorder is "entry"
 * (it reads a region input), "exit" (it writes a region output) or "inside", and every other
 * primitive "-": what `aotc partition --show` reports as the reorders each run pays. */
static void print_step(const aotc_dnnl_net *net, int32_t k) {
    const aotc_dnnl_step *st = &net->steps[k];
    const_dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_kind_t kind = dnnl_undefined_primitive;
    const char *impl = "?", *where = "-";
    int32_t i, t, tensor = -1, layout = -1;
    if (dnnl_primitive_get_primitive_desc(st->prim, &pd) == dnnl_success) {
        dnnl_primitive_desc_query(pd, dnnl_query_primitive_kind, 0, &kind);
        if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || impl == NULL)
            impl = "?";
    }
    if (kind == dnnl_reorder) {
        where = "inside";
        for (i = 0; i < st->n_args; ++i) {
            const int32_t s = slot_of_mem(net, st->args[i].memory);
            if (s < 0) continue;
            if (st->args[i].arg == DNNL_ARG_FROM && net->slots[s].where == AOTC_DNNL_AT_INPUT) where = "entry";
            if (st->args[i].arg == DNNL_ARG_TO && net->slots[s].where == AOTC_DNNL_AT_OUTPUT) where = "exit";
            if (st->args[i].arg == DNNL_ARG_FROM)
                for (t = 0; t < net->desc->n_tensors && tensor < 0; ++t)
                    if (net->tensor_slot[t] == s) tensor = t;
        }
        for (i = 0; i < st->n_args && tensor >= 0; ++i) {
            const aotc_dnnl_tensor *ten = &net->desc->tensors[tensor];
            if (st->args[i].arg == DNNL_ARG_TO) layout = layout_of(mem_md(st->args[i].memory), ten->ndims, ten->dims);
        }
    }
    /* a reorder also names the tensor it reads and the layout (LAYOUTS) it writes, -1 when unknown */
    printf("step %d %s %s %d %d %d %s\n", (int)k, dnnl_prim_kind2str(kind), where, (int)st->op, (int)tensor,
           layout, impl);
}

void aotc_dnnl_net_print_plan(const aotc_dnnl_net *net) {
    int32_t s;
    for (s = 0; s < net->n_slots; ++s) {
        const aotc_dnnl_slot *sl = &net->slots[s];
        if (sl->where == AOTC_DNNL_AT_WORKSPACE && sl->index == s)
            printf("slot %d %zu %d %d\n", (int)s, dnnl_memory_desc_get_size(md_of(net, s)), (int)sl->first,
                   (int)sl->last);
    }
    for (s = 0; s < net->n_steps; ++s) print_step(net, s);
    printf("slots %d steps %d\n", (int)net->n_slots, (int)net->n_steps);
}

static int32_t check_tensor(const DLTensor *t, const aotc_dnnl_tensor *want) {
    /* the DLPack type of each dnnl type a region's inputs and outputs have */
    const uint8_t code = want->dtype == dnnl_f32 ? kDLFloat : want->dtype == dnnl_u8 ? kDLUInt : kDLInt;
    const uint8_t bits = want->dtype == dnnl_f32 || want->dtype == dnnl_s32 ? 32 : 8;
    int32_t d;
    if (t == NULL || t->data == NULL || t->ndim != want->ndims || t->dtype.code != code ||
        t->dtype.bits != bits || t->dtype.lanes != 1 || t->strides != NULL)
        return AOTC_DNNL_E_TENSOR;
    for (d = 0; d < want->ndims; ++d)
        if (t->shape[d] != want->dims[d]) return AOTC_DNNL_E_TENSOR;
    return 0;
}

static int32_t net_run(aotc_dnnl_net *net, const DLTensor *const *inputs, DLTensor *const *outputs,
                       void *workspace) {
    const aotc_dnnl_net_desc *desc = net->desc;
    int32_t k, s;
    for (k = 0; k < desc->n_tensors; ++k) {
        const aotc_dnnl_tensor *t = &desc->tensors[k];
        if (t->kind == AOTC_DNNL_INPUT) CHECK(check_tensor(inputs[t->index], t));
        if (t->kind == AOTC_DNNL_OUTPUT) CHECK(check_tensor(outputs[t->index], t));
    }
    for (s = 0; s < net->n_slots; ++s) {
        const aotc_dnnl_slot *sl = &net->slots[s];
        void *p;
        if (sl->where == AOTC_DNNL_AT_INPUT)
            p = (uint8_t *)inputs[sl->index]->data + inputs[sl->index]->byte_offset;
        else if (sl->where == AOTC_DNNL_AT_OUTPUT)
            p = (uint8_t *)outputs[sl->index]->data + outputs[sl->index]->byte_offset;
        else if (sl->where == AOTC_DNNL_AT_WORKSPACE)
            p = (uint8_t *)workspace + desc->plan[sl->index].offset;
        else
            continue;
        TRY(dnnl_memory_set_data_handle(sl->mem, p));
    }
    for (k = 0; k < net->n_steps; ++k) {
        const aotc_dnnl_step *st = &net->steps[k];
        TRY(dnnl_primitive_execute(st->prim, g_stream, st->n_args, st->args));
        if (st->swish != NULL) { /* the primitive's result, complete, then swish over it */
            void *p = NULL;
            TRY(dnnl_stream_wait(g_stream));
            TRY(dnnl_memory_get_data_handle(st->swish, &p));
            aotc_dnnl_swish((float *)p, st->swish_n, st->swish_alpha);
        }
    }
    TRY(dnnl_stream_wait(g_stream));
    return 0;
}

#if AOTC_SWISH_X86 && !defined(AOTC_DNNL_PLAIN_SWISH)
/* fast_math.h's AVX-512 SiLU (within 5 ulp; 0.31 ns per float against the plain loop's 0.45) */
void aotc_dnnl_swish(float *x, size_t n, float alpha) { aotc_swish_avx512(x, x, n, alpha); }
#else
/* The plain-C twin: a loop gcc and clang vectorise (0.45 ns per float with AVX-512). */
void aotc_dnnl_swish(float *x, size_t n, float alpha) {
    size_t i;
    for (i = 0; i < n; ++i) x[i] = x[i] * aotc_sigmoid_poly(alpha * x[i]);
}
#endif
