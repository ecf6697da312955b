/*
 * npy.c — the NumPy .npy format, read and written by hand.
 *
 * The format (numpy/lib/format.py documents it):
 *
 *   "\x93NUMPY" major minor       6 + 2 bytes
 *   HEADER_LEN                    uint16 LE (v1.0) or uint32 LE (v2.0, v3.0)
 *   HEADER                        a Python dict literal, ASCII (UTF-8 in v3):
 *                                 {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
 *                                 padded with spaces and a final '\n' so the
 *                                 data starts at a multiple of 64 bytes
 *   data                          the elements, C order when fortran_order
 *                                 is False
 *
 * Files come from anywhere, so the reader treats every byte as hostile:
 * lengths are checked before use, the dict is parsed by a small
 * recursive-descent parser that knows exactly the three keys numpy writes,
 * the element count is computed with overflow checks and compared with
 * the bytes actually present.  Every failure is TS_ERR_IO with a message
 * `<file>: <what is wrong>`.
 *
 * The dtype choice for bfloat16 (no NumPy dtype exists): we write raw bits
 * with descr '<u2', which numpy, torch and ml_dtypes all load and can
 * `.view()` as bfloat16, rather than upcasting to float32 (which would
 * silently change the dtype and size) or refusing.  On reading, '<V2' is
 * taken as bfloat16 because that is how ml_dtypes' bfloat16 saves.  float8
 * is written as '|u1' for the same reason.
 *
 * Data is read and written in host byte order, which must be little-endian
 * (checked).
 */
#include "runtime/npy.h"

#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

TS_PRINTF(3, 4) static TsStatus io_fail(TsDiag *d, const char *path, const char *fmt, ...) {
    va_list ap;
    TsBuf m = {0};
    va_start(ap, fmt);
    ts_buf_vprintf(&m, fmt, ap);
    va_end(ap);
    ts_diag_add(d, (TsLoc){0}, "error", "%s: %s", path, ts_buf_str(&m));
    ts_buf_free(&m);
    d->status = TS_ERR_IO;
    return TS_ERR_IO;
}

static int host_little_endian(void) {
    const uint16_t one = 1;
    unsigned char c;
    memcpy(&c, &one, 1);
    return c == 1;
}

/* ---- dtype descriptors ------------------------------------------------------ */

static const struct {
    const char *descr; /* without the byte-order character */
    TsDType dt;
} descrs[] = {
    {"f2", TS_FLOAT16}, {"f4", TS_FLOAT32}, {"f8", TS_FLOAT64}, {"i1", TS_INT8},
    {"i2", TS_INT16},   {"i4", TS_INT32},   {"i8", TS_INT64},   {"u1", TS_UINT8},
    {"u2", TS_UINT16},  {"u4", TS_UINT32},  {"u8", TS_UINT64},  {"b1", TS_BOOL},
    {"V2", TS_BFLOAT16},
};

/* What we write for dt (byte order included). */
static const char *descr_of(TsDType dt) {
    switch (dt) {
    case TS_BOOL: return "|b1";
    case TS_INT8: return "|i1";
    case TS_UINT8: case TS_FLOAT8_E4M3: case TS_FLOAT8_E5M2: return "|u1";
    case TS_INT16: return "<i2";
    case TS_UINT16: case TS_BFLOAT16: return "<u2";
    case TS_INT32: return "<i4";
    case TS_UINT32: return "<u4";
    case TS_INT64: return "<i8";
    case TS_UINT64: return "<u8";
    case TS_FLOAT16: return "<f2";
    case TS_FLOAT32: return "<f4";
    case TS_FLOAT64: return "<f8";
    default: return NULL;
    }
}

/* ---- header parsing ------------------------------------------------------------ */

typedef struct Hdr {
    const char *s, *end; /* the header text */
    const char *p;       /* cursor */
    TsDiag *d;
    const char *path;
    TsStatus st;         /* first failure */
    char descr[32];
    int have_descr, have_fortran, have_shape;
    int fortran;
    int ndim;
    int64_t shape[TS_NPY_MAX_DIMS];
} Hdr;

TS_PRINTF(2, 3) static int hfail(Hdr *h, const char *fmt, ...) {
    if (h->st) return 0;
    va_list ap;
    TsBuf m = {0};
    va_start(ap, fmt);
    ts_buf_vprintf(&m, fmt, ap);
    va_end(ap);
    h->st = io_fail(h->d, h->path, "malformed header: %s (at header offset %ld)", ts_buf_str(&m),
                    (long)(h->p - h->s));
    ts_buf_free(&m);
    return 0;
}

static void skip_ws(Hdr *h) {
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r')) h->p++;
}

static int eat(Hdr *h, char c) {
    skip_ws(h);
    if (h->p < h->end && *h->p == c) {
        h->p++;
        return 1;
    }
    return 0;
}

/* string: '...' | "..."  (no escapes) */
static int parse_string(Hdr *h, char *out, size_t cap) {
    skip_ws(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"')) return hfail(h, "expected a quoted string");
    char q = *h->p++;
    size_t n = 0;
    while (h->p < h->end && *h->p != q) {
        if (*h->p == '\\') return hfail(h, "escapes in strings are not supported");
        if (n + 1 >= cap) return hfail(h, "string too long");
        out[n++] = *h->p++;
    }
    if (h->p >= h->end) return hfail(h, "unterminated string");
    h->p++;
    out[n] = 0;
    return 1;
}

/* shape: '(' [int {',' int} [',']] ')' */
static int parse_shape(Hdr *h) {
    if (!eat(h, '(')) return hfail(h, "expected '(' for the shape");
    h->ndim = 0;
    if (eat(h, ')')) return 1;
    for (;;) {
        skip_ws(h);
        if (h->p >= h->end || *h->p < '0' || *h->p > '9') return hfail(h, "expected a dimension");
        int64_t v = 0;
        while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
            if (v > (INT64_MAX - 9) / 10) return hfail(h, "dimension too large");
            v = v * 10 + (*h->p++ - '0');
        }
        if (h->p < h->end && *h->p == 'L') h->p++; /* Python 2 long */
        if (h->ndim >= TS_NPY_MAX_DIMS) return hfail(h, "more than %d dimensions", TS_NPY_MAX_DIMS);
        h->shape[h->ndim++] = v;
        if (eat(h, ')')) return 1;
        if (!eat(h, ',')) return hfail(h, "expected ',' or ')' in the shape");
        if (eat(h, ')')) return 1;
    }
}

static int parse_bool(Hdr *h, int *out) {
    skip_ws(h);
    size_t left = (size_t)(h->end - h->p);
    if (left >= 4 && !memcmp(h->p, "True", 4)) {
        h->p += 4;
        *out = 1;
        return 1;
    }
    if (left >= 5 && !memcmp(h->p, "False", 5)) {
        h->p += 5;
        *out = 0;
        return 1;
    }
    return hfail(h, "expected True or False");
}

/* dict: '{' {key ':' value ','} '}' with exactly descr, fortran_order, shape */
static int parse_dict(Hdr *h) {
    if (!eat(h, '{')) return hfail(h, "expected '{'");
    for (;;) {
        if (eat(h, '}')) break;
        char key[32];
        if (!parse_string(h, key, sizeof key)) return 0;
        if (!eat(h, ':')) return hfail(h, "expected ':' after '%s'", key);
        if (!strcmp(key, "descr")) {
            skip_ws(h);
            if (h->p < h->end && *h->p == '[')
                return hfail(h, "structured dtypes are not supported");
            if (!parse_string(h, h->descr, sizeof h->descr)) return 0;
            h->have_descr = 1;
        } else if (!strcmp(key, "fortran_order")) {
            if (!parse_bool(h, &h->fortran)) return 0;
            h->have_fortran = 1;
        } else if (!strcmp(key, "shape")) {
            if (!parse_shape(h)) return 0;
            h->have_shape = 1;
        } else {
            return hfail(h, "unexpected key '%s'", key);
        }
        if (eat(h, '}')) break;
        if (!eat(h, ',')) return hfail(h, "expected ',' or '}'");
    }
    skip_ws(h);
    if (h->p != h->end) return hfail(h, "text after the dictionary");
    if (!h->have_descr || !h->have_fortran || !h->have_shape)
        return hfail(h, "missing '%s'", !h->have_descr ? "descr" : !h->have_fortran ? "fortran_order" : "shape");
    return 1;
}

static TsStatus descr_dtype(TsDiag *d, const char *path, const char *descr, TsDType *dt) {
    char bo = descr[0];
    if (bo != '<' && bo != '>' && bo != '|' && bo != '=')
        return io_fail(d, path, "unsupported dtype '%s'", descr);
    for (int i = 0; i < TS_COUNTOF(descrs); i++) {
        if (strcmp(descr + 1, descrs[i].descr) != 0) continue;
        if (bo == '>' && descrs[i].descr[1] != '1')
            return io_fail(d, path, "big-endian dtype '%s' is not supported", descr);
        *dt = descrs[i].dt;
        return TS_OK;
    }
    return io_fail(d, path, "unsupported dtype '%s'", descr);
}

/* ---- reading ---------------------------------------------------------------------- */

TsStatus ts_npy_read(TsDiag *d, const char *path, TsDType *dt, int *ndim, int64_t shape[TS_NPY_MAX_DIMS],
                     void **data) {
    *data = NULL;
    if (!host_little_endian()) return io_fail(d, path, ".npy files need a little-endian host");
    /* regular files only (a device or FIFO would never end); O_NONBLOCK
     * so that open() of a FIFO does not wait for a writer */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return io_fail(d, path, "cannot open: %s", strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return io_fail(d, path, "cannot open: %s", strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return io_fail(d, path, "cannot open: %s", S_ISDIR(sb.st_mode) ? strerror(EISDIR) : "not a regular file");
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        int e = errno;
        close(fd);
        return io_fail(d, path, "cannot open: %s", strerror(e));
    }
    uint64_t fsize = (uint64_t)sb.st_size;
    unsigned char pre[12];
    char *hdr = NULL;
    void *buf = NULL;
    TsStatus st = TS_OK;
    size_t got = fread(pre, 1, 8, f);
    if (got < 8 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        st = io_fail(d, path, "not a NumPy .npy file (bad magic)");
        goto done;
    }
    int major = pre[6], minor = pre[7];
    size_t lenbytes = major == 1 ? 2 : 4, hlen;
    if (major < 1 || major > 3 || minor != 0) {
        st = io_fail(d, path, "unsupported .npy format version %d.%d", major, minor);
        goto done;
    }
    if (fread(pre + 8, 1, lenbytes, f) != lenbytes) {
        st = io_fail(d, path, "truncated header");
        goto done;
    }
    hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    if (lenbytes == 4) hlen |= (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    if (hlen > ((size_t)1 << 24)) {
        st = io_fail(d, path, "header length %zu is implausible", hlen);
        goto done;
    }
    hdr = malloc(hlen + 1);
    if (!hdr) {
        st = io_fail(d, path, "out of memory");
        goto done;
    }
    if (fread(hdr, 1, hlen, f) != hlen) {
        st = io_fail(d, path, "truncated header (expected %zu bytes)", hlen);
        goto done;
    }
    hdr[hlen] = 0;
    Hdr h;
    memset(&h, 0, sizeof h);
    h.s = h.p = hdr;
    h.end = hdr + hlen;
    h.d = d;
    h.path = path;
    if (memchr(hdr, 0, hlen)) {
        st = io_fail(d, path, "malformed header: NUL byte");
        goto done;
    }
    if (!parse_dict(&h)) {
        st = h.st ? h.st : io_fail(d, path, "malformed header");
        goto done;
    }
    if (h.fortran) {
        st = io_fail(d, path, "Fortran-order arrays are not supported (save np.ascontiguousarray(a))");
        goto done;
    }
    if ((st = descr_dtype(d, path, h.descr, dt))) goto done;
    size_t item = (size_t)(ts_dtype_bits(*dt) / 8);
    int64_t n = 1;
    for (int i = 0; i < h.ndim; i++) {
        if (h.shape[i] != 0 && n > (INT64_MAX / 16) / h.shape[i]) {
            st = io_fail(d, path, "shape is too large");
            goto done;
        }
        n *= h.shape[i];
    }
    size_t bytes = (size_t)n * item;
    /* the header's claim against the file's size, before any allocation */
    uint64_t data_at = 8 + lenbytes + hlen;
    if (fsize < data_at || fsize - data_at != (uint64_t)bytes) {
        if (fsize < data_at || fsize - data_at < (uint64_t)bytes)
            st = io_fail(d, path, "data is truncated: the header's shape needs %zu bytes, the file has %llu",
                         bytes, (unsigned long long)(fsize < data_at ? 0 : fsize - data_at));
        else
            st = io_fail(d, path, "unexpected bytes after the %zu bytes of data", bytes);
        goto done;
    }
    if ((uint64_t)bytes > ts_host_mem_available()) {
        st = io_fail(d, path, "%zu bytes of data, but only %llu bytes of memory are available", bytes,
                     (unsigned long long)ts_host_mem_available());
        d->status = st = TS_ERR_NOMEM;
        goto done;
    }
    buf = malloc(bytes ? bytes : 1);
    if (!buf) {
        st = io_fail(d, path, "out of memory for %zu bytes of data", bytes);
        goto done;
    }
    got = fread(buf, 1, bytes, f);
    if (got != bytes) {
        if (ferror(f)) st = io_fail(d, path, "read error: %s", strerror(errno));
        else st = io_fail(d, path, "data is truncated: expected %zu bytes, found %zu", bytes, got);
        goto done;
    }
    if (fgetc(f) != EOF) {
        st = io_fail(d, path, "unexpected bytes after the %zu bytes of data", bytes);
        goto done;
    }
    *ndim = h.ndim;
    for (int i = 0; i < h.ndim; i++) shape[i] = h.shape[i];
    *data = buf;
    buf = NULL;
done:
    free(buf);
    free(hdr);
    fclose(f);
    return st;
}

TsStatus ts_npy_read_tensor(TsDiag *d, const char *path, TsTensor *out) {
    TsDType dt;
    int ndim;
    int64_t shape[TS_NPY_MAX_DIMS];
    void *data;
    memset(out, 0, sizeof *out);
    TsStatus st = ts_npy_read(d, path, &dt, &ndim, shape, &data);
    if (st) return st;
    int64_t *sh = malloc(sizeof(int64_t) * (size_t)(ndim ? ndim : 1));
    if (!sh) {
        free(data);
        return io_fail(d, path, "out of memory");
    }
    memcpy(sh, shape, sizeof(int64_t) * (size_t)ndim);
    out->data = data;
    out->dtype = dt;
    out->ndim = ndim;
    out->shape = sh;
    out->strides = NULL;
    return TS_OK;
}

/* ---- writing ------------------------------------------------------------------------ */

/* Copy the elements of a strided array, row-major, into f. */
static int write_strided(FILE *f, const unsigned char *base, size_t item, int ndim, const int64_t *shape,
                         const int64_t *strides) {
    int64_t idx[TS_NPY_MAX_DIMS] = {0};
    for (int i = 0; i < ndim; i++)
        if (shape[i] == 0) return 0;
    for (;;) {
        int64_t off = 0;
        for (int i = 0; i < ndim; i++) off += idx[i] * strides[i];
        if (fwrite(base + off * (int64_t)item, 1, item, f) != item) return -1;
        int i = ndim - 1;
        while (i >= 0 && ++idx[i] == shape[i]) idx[i--] = 0;
        if (i < 0) return 0;
    }
}

/* Where writing `path` really goes, as NumPy's open(path, "wb") would:
 * through symbolic links (also dangling ones: the target is created) to
 * the final name, so that our rename replaces the target and keeps the
 * link.  Refuses an existing target that is not a regular file (a device
 * such as /dev/full, a FIFO, a directory): renaming over it would replace
 * the node itself.  *mode: the existing file's permissions, else 0644. */
static TsStatus resolve_output(TsDiag *d, const char *path, TsBuf *target, mode_t *mode) {
    *mode = 0644;
    target->n = 0;
    ts_buf_puts(target, path);
    for (int hops = 0;; hops++) {
        struct stat sb;
        if (lstat(target->s, &sb) != 0) {
            if (errno == ENOENT) return TS_OK; /* a new file */
            return io_fail(d, path, "cannot write: %s", strerror(errno));
        }
        if (S_ISLNK(sb.st_mode)) {
            if (hops >= 40) return io_fail(d, path, "cannot write: %s", strerror(ELOOP));
            TsBuf link = {0};
            size_t cap = 256;
            ssize_t n;
            for (;;) { /* readlink does not say how long the text is: grow until it fits */
                link.n = 0;
                while (link.n < cap) ts_buf_puts(&link, " ");
                n = readlink(target->s, link.s, cap);
                if (n < 0 || (size_t)n < cap) break;
                cap *= 2;
            }
            if (n < 0) {
                int e = errno;
                ts_buf_free(&link);
                return io_fail(d, path, "cannot write: %s", strerror(e));
            }
            link.s[n] = 0;
            link.n = (size_t)n;
            if (link.s[0] != '/') { /* relative to the link's directory */
                const char *slash = strrchr(target->s, '/');
                if (slash) {
                    TsBuf nt = {0};
                    ts_buf_putn(&nt, target->s, (size_t)(slash - target->s) + 1);
                    ts_buf_puts(&nt, link.s);
                    ts_buf_free(&link);
                    link = nt;
                }
            }
            ts_buf_free(target);
            *target = link;
            continue;
        }
        if (!S_ISREG(sb.st_mode))
            return io_fail(d, path, "cannot write: %s is not a regular file%s", target->s,
                           S_ISDIR(sb.st_mode) ? " (a directory)" : " (refusing to replace it)");
        *mode = sb.st_mode & 0777;
        return TS_OK;
    }
}

TsStatus ts_npy_write(TsDiag *d, const char *path, TsDType dt, int ndim, const int64_t *shape,
                      const int64_t *strides, const void *data) {
    const char *descr = descr_of(dt);
    if (!descr) return io_fail(d, path, "cannot write dtype %s", ts_dtype_name(dt));
    if (!host_little_endian()) return io_fail(d, path, ".npy files need a little-endian host");
    if (ndim < 0 || ndim > TS_NPY_MAX_DIMS)
        return io_fail(d, path, "cannot write %d dimensions (at most %d)", ndim, TS_NPY_MAX_DIMS);
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) return io_fail(d, path, "negative extent %lld", (long long)shape[i]);
        n *= shape[i];
    }
    if (n > 0 && !data) return io_fail(d, path, "no data to write");

    TsBuf h = {0};
    ts_buf_printf(&h, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < ndim; i++) ts_buf_printf(&h, "%lld%s", (long long)shape[i], ndim == 1 ? "," : i + 1 < ndim ? ", " : "");
    ts_buf_puts(&h, "), }");
    int v2 = h.n + 1 + 10 > 65535;
    size_t pre = v2 ? 12 : 10;
    while ((pre + h.n + 1) % 64) ts_buf_puts(&h, " ");
    ts_buf_puts(&h, "\n");

    TsBuf target = {0}, tmp = {0};
    mode_t mode = 0644;
    TsStatus rs = resolve_output(d, path, &target, &mode);
    if (rs) {
        ts_buf_free(&h);
        ts_buf_free(&target);
        return rs;
    }
    ts_buf_printf(&tmp, "%s.tmp-XXXXXX", target.s);
    int fd = mkstemp(tmp.s);
    if (fd < 0) {
        TsStatus st = io_fail(d, path, "cannot create: %s", strerror(errno));
        ts_buf_free(&h);
        ts_buf_free(&tmp);
        ts_buf_free(&target);
        return st;
    }
    fchmod(fd, mode);
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        close(fd);
        unlink(tmp.s);
        TsStatus st = io_fail(d, path, "cannot write: %s", strerror(errno));
        ts_buf_free(&h);
        ts_buf_free(&tmp);
        ts_buf_free(&target);
        return st;
    }
    unsigned char magic[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)(v2 ? 2 : 1), 0};
    magic[8] = (unsigned char)(h.n & 0xff);
    magic[9] = (unsigned char)((h.n >> 8) & 0xff);
    magic[10] = (unsigned char)((h.n >> 16) & 0xff);
    magic[11] = (unsigned char)((h.n >> 24) & 0xff);
    size_t item = (size_t)(ts_dtype_bits(dt) / 8);
    int bad = fwrite(magic, 1, pre, f) != pre || fwrite(h.s, 1, h.n, f) != h.n;
    if (!bad && n > 0) {
        if (strides) bad = write_strided(f, data, item, ndim, shape, strides) != 0;
        else bad = fwrite(data, item, (size_t)n, f) != (size_t)n;
    }
    int err = errno;
    if (!bad && fflush(f) != 0) { /* ENOSPC, EIO, EFBIG surface here at the latest */
        bad = 1;
        err = errno;
    }
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    if (!bad && rename(tmp.s, target.s) != 0) {
        bad = 1;
        err = errno;
    }
    TsStatus st = TS_OK;
    if (bad) {
        unlink(tmp.s);
        st = io_fail(d, path, "cannot write: %s", strerror(err));
    }
    ts_buf_free(&h);
    ts_buf_free(&tmp);
    ts_buf_free(&target);
    return st;
}

TsStatus ts_npy_check_writable(TsContext *ctx, const char *path) {
    if (!ctx || !path) return TS_ERR_INVALID;
    ctx->diag.msg.n = 0;
    if (ctx->diag.msg.s) ctx->diag.msg.s[0] = 0;
    ctx->diag.status = TS_OK;
    if (!*path) return io_fail(&ctx->diag, path, "cannot write: the output file name is empty");
    TsBuf target = {0};
    mode_t mode;
    TsStatus st = resolve_output(&ctx->diag, path, &target, &mode);
    if (!st) {
        /* the temporary file is created beside the target, then renamed over it */
        TsBuf dir = {0};
        const char *slash = strrchr(target.s, '/');
        if (!slash) ts_buf_puts(&dir, ".");
        else if (slash == target.s) ts_buf_puts(&dir, "/");
        else ts_buf_putn(&dir, target.s, (size_t)(slash - target.s));
        struct stat sb;
        if (stat(dir.s, &sb) != 0) st = io_fail(&ctx->diag, path, "cannot write: %s: %s", dir.s, strerror(errno));
        else if (!S_ISDIR(sb.st_mode)) st = io_fail(&ctx->diag, path, "cannot write: %s is not a directory", dir.s);
        else if (access(dir.s, W_OK | X_OK) != 0)
            st = io_fail(&ctx->diag, path, "cannot write: directory %s: %s", dir.s, strerror(errno));
        else if (access(target.s, F_OK) == 0 && access(target.s, W_OK) != 0)
            st = io_fail(&ctx->diag, path, "cannot write: %s", strerror(errno));
        ts_buf_free(&dir);
    }
    ts_buf_free(&target);
    return st;
}

TsStatus ts_npy_write_tensor(TsDiag *d, const char *path, const TsTensor *t) {
    return ts_npy_write(d, path, t->dtype, t->ndim, t->shape, t->strides, t->data);
}
