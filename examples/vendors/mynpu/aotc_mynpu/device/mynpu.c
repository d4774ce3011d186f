/* mynpu's device library: straightforward loops, correctness and clarity over speed (mynpu.h). */
#include "mynpu.h"

/* the Python side reserves MYNPU_DEVICE_BYTES for the handle: a different struct size fails to compile */
typedef char mynpu_device_bytes_check[(sizeof(mynpu_device) == MYNPU_DEVICE_BYTES) ? 1 : -1];

int32_t mynpu_open(mynpu_device *dev) {
    if (dev == NULL) return MYNPU_ERR_NOT_OPEN;
    dev->magic = MYNPU_MAGIC;
    dev->layers = 0;
    dev->calls = 0;
    dev->macs = 0;
    return MYNPU_OK;
}

int32_t mynpu_begin(mynpu_device *dev) {
    if (dev == NULL || dev->magic != MYNPU_MAGIC) return MYNPU_ERR_NOT_OPEN;
    dev->layers = 0;
    dev->calls += 1;
    return MYNPU_OK;
}

static int32_t conv_params_ok(const mynpu_conv_params *p) {
    if (p->n < 1 || p->h < 1 || p->w < 1 || p->c < 1 || p->oh < 1 || p->ow < 1 || p->oc < 1) return 0;
    if (!((p->kh == 3 && p->kw == 3) || (p->kh == 1 && p->kw == 1))) return 0;
    if (p->sh < 1 || p->sh > 2 || p->sw < 1 || p->sw > 2) return 0;
    if (p->pad_top < 0 || p->pad_left < 0 || p->pad_top >= p->kh || p->pad_left >= p->kw) return 0;
    if (p->block < 1 || p->block > MYNPU_MAX_BLOCK) return 0;
    return !p->depthwise || p->c == p->oc;
}

/* The accumulators of one output pixel's block of output channels [o0, o0 + B). */
static void conv_block(const mynpu_conv_params *p, const float *x, const float *w, int32_t b, int32_t oy,
                       int32_t ox, int32_t ob, float *acc) {
    const int32_t B = p->block, cin = p->depthwise ? 1 : p->c;
    int32_t ky, kx, ci, j;
    for (ky = 0; ky < p->kh; ++ky) {
        const int32_t iy = oy * p->sh - p->pad_top + ky;
        if (iy < 0 || iy >= p->h) continue;
        for (kx = 0; kx < p->kw; ++kx) {
            const int32_t ix = ox * p->sw - p->pad_left + kx;
            const float *in;
            if (ix < 0 || ix >= p->w) continue;
            in = x + (((size_t)b * (size_t)p->h + (size_t)iy) * (size_t)p->w + (size_t)ix) * (size_t)p->c;
            if (p->depthwise) {  /* channel o reads input channel o */
                const float *wp = w + (((size_t)ob * (size_t)p->kh + (size_t)ky) * (size_t)p->kw + (size_t)kx) *
                                          (size_t)B;
                const int32_t o0 = ob * B;
                for (j = 0; j < B && o0 + j < p->oc; ++j) acc[j] += in[o0 + j] * wp[j];
                continue;
            }
            for (ci = 0; ci < cin; ++ci) {
                const float xv = in[ci];
                const float *wp = w + ((((size_t)ob * (size_t)cin + (size_t)ci) * (size_t)p->kh + (size_t)ky) *
                                           (size_t)p->kw + (size_t)kx) * (size_t)B;
                for (j = 0; j < B; ++j) acc[j] += xv * wp[j];
            }
        }
    }
}

int32_t mynpu_conv2d(mynpu_device *dev, const mynpu_conv_params *p, const float *x, const float *w,
                     const float *bias, const float *residual, float *y) {
    float acc[MYNPU_MAX_BLOCK];
    int32_t b, oy, ox, ob, j;
    const int32_t B = p->block, blocks = (p->oc + p->block - 1) / p->block;
    if (dev == NULL || dev->magic != MYNPU_MAGIC) return MYNPU_ERR_NOT_OPEN;
    if (!conv_params_ok(p) || x == NULL || w == NULL || y == NULL) return MYNPU_ERR_PARAMS;
    for (b = 0; b < p->n; ++b)
        for (oy = 0; oy < p->oh; ++oy)
            for (ox = 0; ox < p->ow; ++ox) {
                const size_t at = (((size_t)b * (size_t)p->oh + (size_t)oy) * (size_t)p->ow + (size_t)ox) *
                                  (size_t)p->oc;
                for (ob = 0; ob < blocks; ++ob) {
                    const int32_t o0 = ob * B;
                    for (j = 0; j < B; ++j) acc[j] = (bias != NULL && o0 + j < p->oc) ? bias[o0 + j] : 0.0f;
                    conv_block(p, x, w, b, oy, ox, ob, acc);
                    for (j = 0; j < B && o0 + j < p->oc; ++j) {  /* the epilogue: residual, then relu */
                        float v = acc[j];
                        if (residual != NULL) v += residual[at + (size_t)(o0 + j)];
                        if (p->relu && v < 0.0f) v = 0.0f;
                        y[at + (size_t)(o0 + j)] = v;
                    }
                }
            }
    dev->layers += 1;
    dev->macs += (uint64_t)p->n * (uint64_t)p->oh * (uint64_t)p->ow * (uint64_t)p->oc * (uint64_t)p->kh *
                 (uint64_t)p->kw * (uint64_t)(p->depthwise ? 1 : p->c);
    return MYNPU_OK;
}

void mynpu_relu(size_t n, const float *x, float *y) {
    size_t i;
    for (i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void mynpu_add(size_t n, const float *a, const float *b, float *y) {
    size_t i;
    for (i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

/* v rounded to the nearest integer, ties to even; |v| <= 512 here, so the casts are defined */
static float round_half_even(float v) {
    float r = (float)(int32_t)v;  /* toward zero */
    const float d = v - r;
    if (d > 0.5f || (d == 0.5f && ((int32_t)r & 1))) r += 1.0f;
    else if (d < -0.5f || (d == -0.5f && ((int32_t)r & 1))) r -= 1.0f;
    return r;
}

void mynpu_requant(size_t n, float scale, int32_t zero_point, const float *x, float *y) {
    size_t i;
    for (i = 0; i < n; ++i) {
        float q = x[i] / scale;
        int32_t v;
        if (!(q > -512.0f)) q = -512.0f;  /* far out of int8 range either way (NaN too): saturates below */
        if (q > 512.0f) q = 512.0f;
        v = (int32_t)round_half_even(q) + zero_point;
        if (v < -128) v = -128;
        if (v > 127) v = 127;
        y[i] = (float)(v - zero_point) * scale;
    }
}

int32_t mynpu_permute(int32_t rank, const int32_t *dims, const int32_t *perm, const float *x, float *y) {
    size_t in_stride[MYNPU_MAX_RANK], stride[MYNPU_MAX_RANK], total = 1, i, src = 0;
    int32_t out_dims[MYNPU_MAX_RANK], idx[MYNPU_MAX_RANK], k;
    if (rank < 1 || rank > MYNPU_MAX_RANK) return MYNPU_ERR_PARAMS;
    for (k = rank - 1; k >= 0; --k) {
        if (dims[k] < 1 || perm[k] < 0 || perm[k] >= rank) return MYNPU_ERR_PARAMS;
        in_stride[k] = total;
        total *= (size_t)dims[k];
    }
    for (k = 0; k < rank; ++k) {
        out_dims[k] = dims[perm[k]];
        stride[k] = in_stride[perm[k]];  /* a step along y's axis k, in x */
        idx[k] = 0;
    }
    for (i = 0; i < total; ++i) {  /* y in order; src follows in x */
        y[i] = x[src];
        for (k = rank - 1; k >= 0; --k) {
            src += stride[k];
            if (++idx[k] < out_dims[k]) break;
            src -= stride[k] * (size_t)out_dims[k];
            idx[k] = 0;
        }
    }
    return MYNPU_OK;
}
