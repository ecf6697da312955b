/*
 * tensor.c — host tensors for callers of the library and for the CLI:
 * allocation, row-major element access as double (with float16, bfloat16
 * and float8 rounding), used to fill random inputs and compare outputs.
 */
#include "core.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* IEEE binary16 <-> float, round to nearest even. */
static float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    float f;
    if (exp == 0) f = ldexpf((float)man, -24);
    else if (exp == 31) f = man ? NAN : INFINITY;
    else f = ldexpf((float)(man | 0x400), (int)exp - 25);
    return sign ? -f : f;
}

static uint16_t float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t ax = x & 0x7fffffff;
    if (ax >= 0x7f800000) return (uint16_t)(sign | 0x7c00 | (ax > 0x7f800000 ? 0x200 : 0));
    if (ax >= 0x477ff000) return (uint16_t)(sign | 0x7c00); /* rounds to inf */
    if (ax < 0x38800000) { /* subnormal half */
        float a;
        memcpy(&a, &ax, 4);
        float r = nearbyintf(a * 16777216.0f); /* units of 2^-24, ties to even */
        return (uint16_t)(sign | (uint32_t)r);
    }
    uint32_t mant = ax & 0x7fffff, e = (ax >> 23) - 112;
    uint32_t h = (e << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;
    return (uint16_t)(sign | h);
}

static float bf16_to_float(uint16_t b) {
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static uint16_t float_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* float8: e4m3 (fn: no inf, 0x7f/0xff NaN, max 448) and e5m2 (IEEE-like). */
static float fp8_to_float(uint8_t v, int e4m3) {
    int sign = v >> 7, ebits = e4m3 ? 4 : 5, mbits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
    int exp = (v >> mbits) & ((1 << ebits) - 1), man = v & ((1 << mbits) - 1);
    float f;
    if (e4m3 && exp == 15 && man == 7) return NAN;
    if (!e4m3 && exp == 31) f = man ? NAN : INFINITY;
    else if (exp == 0) f = ldexpf((float)man, 1 - bias - mbits);
    else f = ldexpf((float)(man | (1 << mbits)), exp - bias - mbits);
    return sign ? -f : f;
}

static uint8_t float_to_fp8(float f, int e4m3) {
    if (isnan(f)) return e4m3 ? 0x7f : 0x7e;
    /* nearest representable value, ties to even code; saturating */
    int best = 0;
    float bestd = INFINITY;
    for (int c = 0; c < 256; c++) {
        float g = fp8_to_float((uint8_t)c, e4m3);
        if (isnan(g) || isinf(g)) continue;
        float d = fabsf(g - f);
        if (d < bestd || (d == bestd && !(c & 1))) {
            bestd = d;
            best = c;
        }
    }
    return (uint8_t)best;
}

int64_t ts_tensor_numel(const TsTensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        if (__builtin_mul_overflow(n, t->shape[i], &n)) return -1;
    return n;
}

/* Bytes of a contiguous dt tensor of this shape, or a status: INVALID for
 * a negative extent or bad dtype, NOMEM when the count overflows 64 bits
 * or exceeds what the host can give (calloc would succeed lazily and the
 * OOM killer end the process when the data is touched). */
static TsStatus tensor_bytes(TsDType dt, int ndim, const int64_t *shape, uint64_t *bytes) {
    *bytes = 0;
    if (!ts_dtype_info(dt) || ndim < 0 || ndim > 8 || (ndim > 0 && !shape)) return TS_ERR_INVALID;
    /* ceil(elements x bits / 8): int4 is two elements to a byte */
    int bits = ts_dtype_bits(dt);
    uint64_t n = (uint64_t)(bits >= 8 ? bits / 8 : 1), ov = 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) return TS_ERR_INVALID;
        if (__builtin_mul_overflow(n, (uint64_t)shape[i], &n)) ov = 1;
    }
    if (bits < 8 && !ov) n = n / 8 * (uint64_t)bits + (n % 8 * (uint64_t)bits + 7) / 8;
    *bytes = ov ? UINT64_MAX : n;
    if (ov || n >= (uint64_t)PTRDIFF_MAX || n > ts_host_mem_available()) return TS_ERR_NOMEM;
    return TS_OK;
}

TsStatus ts_tensor_alloc(TsTensor *t, TsDType dt, int ndim, const int64_t *shape) {
    memset(t, 0, sizeof *t);
    uint64_t bytes;
    TsStatus st = tensor_bytes(dt, ndim, shape, &bytes);
    if (st) return st;
    int64_t *sh = calloc((size_t)(ndim ? ndim : 1), sizeof(int64_t));
    if (!sh) return TS_ERR_NOMEM;
    for (int i = 0; i < ndim; i++) sh[i] = shape[i];
    t->data = calloc(bytes ? (size_t)bytes : 1, 1);
    if (!t->data) {
        free(sh);
        return TS_ERR_NOMEM;
    }
    t->dtype = dt;
    t->ndim = ndim;
    t->shape = sh;
    t->strides = NULL;
    return TS_OK;
}

TsStatus ts_tensor_alloc_ctx(TsContext *ctx, TsTensor *t, TsDType dt, int ndim, const int64_t *shape,
                             const char *name) {
    if (!ctx || !t) return TS_ERR_INVALID;
    ctx->diag.msg.n = 0;
    if (ctx->diag.msg.s) ctx->diag.msg.s[0] = 0;
    uint64_t bytes;
    TsStatus st = tensor_bytes(dt, ndim, shape, &bytes);
    if (!st) st = ts_tensor_alloc(t, dt, ndim, shape);
    else memset(t, 0, sizeof *t);
    if (!st) return TS_OK;
    TsBuf sh = {0};
    for (int i = 0; i < ndim && shape; i++) ts_buf_printf(&sh, "%s%lld", i ? ", " : "", (long long)shape[i]);
    const char *nm = name ? name : "tensor";
    if (st == TS_ERR_INVALID)
        ts_diag_add(&ctx->diag, (TsLoc){0}, "error", "cannot allocate '%s': invalid shape [%s] or dtype", nm,
                    ts_buf_str(&sh));
    else if (bytes == UINT64_MAX)
        ts_diag_add(&ctx->diag, (TsLoc){0}, "error",
                    "cannot allocate '%s': %s[%s] has more bytes than fit in 64 bits", nm, ts_dtype_name(dt),
                    ts_buf_str(&sh));
    else
        ts_diag_add(&ctx->diag, (TsLoc){0}, "error",
                    "cannot allocate '%s': %s[%s] needs %llu bytes, but only %llu bytes of memory are available",
                    nm, ts_dtype_name(dt), ts_buf_str(&sh), (unsigned long long)bytes,
                    (unsigned long long)ts_host_mem_available());
    ts_buf_free(&sh);
    ctx->diag.status = st;
    return st;
}

void ts_tensor_free(TsTensor *t) {
    if (!t) return;
    free(t->data);
    free((void *)t->shape);
    free((void *)t->strides);
    memset(t, 0, sizeof *t);
}

/* Element offset of row-major index i, honouring strides. */
static int64_t elem_offset(const TsTensor *t, int64_t i) {
    if (!t->strides) return i;
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        int64_t ext = t->shape[d];
        off += (i % ext) * t->strides[d];
        i /= ext;
    }
    return off;
}

double ts_tensor_get(const TsTensor *t, int64_t i) {
    int64_t o = elem_offset(t, i);
    const void *p = t->data;
    switch (t->dtype) {
    case TS_BOOL: return ((const uint8_t *)p)[o] != 0;
    case TS_INT8: return ((const int8_t *)p)[o];
    case TS_UINT8: return ((const uint8_t *)p)[o];
    case TS_INT16: return ((const int16_t *)p)[o];
    case TS_UINT16: return ((const uint16_t *)p)[o];
    case TS_INT32: return ((const int32_t *)p)[o];
    case TS_UINT32: return ((const uint32_t *)p)[o];
    case TS_INT64: return (double)((const int64_t *)p)[o];
    case TS_UINT64: return (double)((const uint64_t *)p)[o];
    case TS_FLOAT16: return half_to_float(((const uint16_t *)p)[o]);
    case TS_BFLOAT16: return bf16_to_float(((const uint16_t *)p)[o]);
    case TS_FLOAT32: return ((const float *)p)[o];
    case TS_FLOAT64: return ((const double *)p)[o];
    case TS_FLOAT8_E4M3: return fp8_to_float(((const uint8_t *)p)[o], 1);
    case TS_FLOAT8_E5M2: return fp8_to_float(((const uint8_t *)p)[o], 0);
    case TS_INT4: { /* nibble o % 2 of byte o / 2, the low one first, sign-extended */
        int u = (((const uint8_t *)p)[o >> 1] >> (4 * (int)(o & 1))) & 15;
        return (double)((u ^ 8) - 8);
    }
    case TS_FLOAT4_E2M1: /* nibble o % 2 of byte o / 2, the low one first */
        return ts_fp4_e2m1_value((((const uint8_t *)p)[o >> 1] >> (4 * (int)(o & 1))) & 15u);
    default: return NAN;
    }
}

void ts_tensor_set(TsTensor *t, int64_t i, double v) {
    int64_t o = elem_offset(t, i);
    void *p = t->data;
    switch (t->dtype) {
    case TS_BOOL: ((uint8_t *)p)[o] = v != 0; break;
    case TS_INT8: ((int8_t *)p)[o] = (int8_t)v; break;
    case TS_UINT8: ((uint8_t *)p)[o] = (uint8_t)v; break;
    case TS_INT16: ((int16_t *)p)[o] = (int16_t)v; break;
    case TS_UINT16: ((uint16_t *)p)[o] = (uint16_t)v; break;
    case TS_INT32: ((int32_t *)p)[o] = (int32_t)v; break;
    case TS_UINT32: ((uint32_t *)p)[o] = (uint32_t)v; break;
    case TS_INT64: ((int64_t *)p)[o] = (int64_t)v; break;
    case TS_UINT64: ((uint64_t *)p)[o] = (uint64_t)v; break;
    case TS_FLOAT16: ((uint16_t *)p)[o] = float_to_half((float)v); break;
    case TS_BFLOAT16: ((uint16_t *)p)[o] = float_to_bf16((float)v); break;
    case TS_FLOAT32: ((float *)p)[o] = (float)v; break;
    case TS_FLOAT64: ((double *)p)[o] = v; break;
    case TS_FLOAT8_E4M3: ((uint8_t *)p)[o] = float_to_fp8((float)v, 1); break;
    case TS_FLOAT8_E5M2: ((uint8_t *)p)[o] = float_to_fp8((float)v, 0); break;
    case TS_INT4: { /* the low 4 bits of (int)v, in its half of the byte */
        uint8_t *b = (uint8_t *)p + (o >> 1);
        int sh = 4 * (int)(o & 1);
        *b = (uint8_t)((*b & (0xF0 >> sh)) | (((unsigned)(int)v & 15u) << sh));
        break;
    }
    case TS_FLOAT4_E2M1: { /* v rounded to its code, in its half of the byte */
        uint8_t *b = (uint8_t *)p + (o >> 1);
        int sh = 4 * (int)(o & 1);
        *b = (uint8_t)((*b & (0xF0 >> sh)) | (ts_fp4_e2m1_code(v) << sh));
        break;
    }
    default: break;
    }
}
