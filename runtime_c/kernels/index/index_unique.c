/* ONNX Unique (aotc_index.h). Portable C99, no allocation: each slice is matched against the distinct
 * ones found so far (first occurrences, in the scratch), then, when sorted, the distinct ones are
 * ordered by insertion (they are few: a slice count of the axis) and the inverse renumbered. */
#include "aotc_index.h"

#include <string.h>

static double unique_float(int32_t kind, int32_t size, const uint8_t *e) {
    if (kind == AOTC_UNIQUE_BF16) {
        uint16_t h;
        uint32_t bits;
        float f;
        memcpy(&h, e, 2);
        bits = (uint32_t)h << 16;
        memcpy(&f, &bits, 4);
        return f;
    }
    if (size == 4) {
        float f;
        memcpy(&f, e, 4);
        return f;
    } else {
        double d;
        memcpy(&d, e, 8);
        return d;
    }
}

int aotc_unique_compare(int32_t kind, int32_t elem_size, const uint8_t *a, const uint8_t *b) {
    if (kind == AOTC_UNIQUE_FLOAT || kind == AOTC_UNIQUE_BF16) {
        const double u = unique_float(kind, elem_size, a), v = unique_float(kind, elem_size, b);
        if (u != u || v != v) return (u != u) - (v != v); /* NaN: equal to NaN, above any number */
        return (u > v) - (u < v);
    }
    if (kind == AOTC_UNIQUE_INT) {
        int64_t u = 0, v = 0;
        if (elem_size == 1) u = (int8_t)a[0], v = (int8_t)b[0];
        else if (elem_size == 2) { int16_t s, t; memcpy(&s, a, 2), memcpy(&t, b, 2), u = s, v = t; }
        else if (elem_size == 4) { int32_t s, t; memcpy(&s, a, 4), memcpy(&t, b, 4), u = s, v = t; }
        else memcpy(&u, a, 8), memcpy(&v, b, 8);
        return (u > v) - (u < v);
    } else {
        uint64_t u = 0, v = 0;
        if (elem_size == 1) u = a[0], v = b[0];
        else if (elem_size == 2) { uint16_t s, t; memcpy(&s, a, 2), memcpy(&t, b, 2), u = s, v = t; }
        else if (elem_size == 4) { uint32_t s, t; memcpy(&s, a, 4), memcpy(&t, b, 4), u = s, v = t; }
        else memcpy(&u, a, 8), memcpy(&v, b, 8);
        return (u > v) - (u < v);
    }
}

/* slices i and j of x, element by element (outer, then inner) */
static int unique_slices(const aotc_unique_params *p, const uint8_t *x, int64_t i, int64_t j) {
    const int64_t size = p->elem_size, row = (int64_t)p->axis_dim * p->inner * size;
    int64_t o, k;
    for (o = 0; o < p->outer; ++o) {
        const uint8_t *a = x + o * row + i * p->inner * size, *b = x + o * row + j * p->inner * size;
        for (k = 0; k < p->inner; ++k) {
            const int c = aotc_unique_compare(p->kind, p->elem_size, a + k * size, b + k * size);
            if (c != 0) return c;
        }
    }
    return 0;
}

int32_t aotc_unique(const aotc_unique_params *p, const void *x, void *y, int64_t *indices, int64_t *inverse,
                    int64_t *counts, int64_t *scratch) {
    const uint8_t *xs = (const uint8_t *)x;
    const int64_t n = p->axis_dim, size = p->elem_size, slice = (int64_t)p->inner * size;
    int64_t *first = scratch, *count = scratch + n, *inv = scratch + 2 * n, *rank = scratch + 3 * n;
    int64_t u = 0, i, j, o;
    for (i = 0; i < n; ++i) {
        for (j = 0; j < u && unique_slices(p, xs, first[j], i) != 0; ++j) {
        }
        if (j == u) first[u] = i, count[u++] = 0;
        ++count[j];
        inv[i] = j;
    }
    if (p->bounded ? u > p->kept : u != p->kept) return AOTC_ERR_SHAPE;
    /* rank[k]: the distinct slice at place k of the output */
    for (i = 0; i < u; ++i) {
        for (j = i; j > 0 && p->sorted && unique_slices(p, xs, first[rank[j - 1]], first[i]) > 0; --j) {
            rank[j] = rank[j - 1];
        }
        rank[j] = i;
    }
    for (i = 0; i < u; ++i) {
        const int64_t d = rank[i];
        for (o = 0; o < p->outer; ++o) {
            memcpy((uint8_t *)y + (o * p->kept + i) * slice, xs + (o * n + first[d]) * slice, (size_t)slice);
        }
        if (indices) indices[i] = first[d];
        if (counts) counts[i] = count[d];
        count[d] = i; /* from here: the place of distinct slice d */
    }
    if (inverse) {
        for (i = 0; i < n; ++i) inverse[i] = count[inv[i]];
    }
    return p->bounded ? (int32_t)u : 0;
}
