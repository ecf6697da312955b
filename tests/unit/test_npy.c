/*
 * test_npy.c — .npy reading and writing: round trips of every dtype on
 * random data (contiguous and strided), a file laid out byte for byte the
 * way numpy's writer lays it out (format.py: sorted keys, 21-digit growth
 * padding, 64-byte alignment), version 2.0, and hostile files — every
 * truncation of a valid file, targeted malformations and random byte
 * mutations — which must all come back as TS_ERR_IO naming the file,
 * never as a crash.
 */
#include "runtime/npy.h"
#include "test.h"

#include <stdlib.h>
#include <unistd.h>

static char dir[256];

static void reset(TsDiag *d) {
    d->msg.n = 0;
    if (d->msg.s) d->msg.s[0] = 0;
    d->status = TS_OK;
}

static void write_bytes(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (n) fwrite(p, 1, n, f);
    fclose(f);
}

static unsigned rnd(unsigned *s) {
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

static void test_roundtrip(void) {
    TsDiag d = {0};
    TsDType dts[] = {TS_FLOAT16, TS_FLOAT32, TS_FLOAT64, TS_INT8, TS_INT16, TS_INT32, TS_INT64,
                     TS_UINT8, TS_UINT16, TS_UINT32, TS_UINT64, TS_BOOL};
    int64_t shapes[3][3] = {{0}, {17}, {3, 4, 5}};
    int ndims[3] = {0, 1, 3};
    unsigned seed = 1;
    char path[300];
    snprintf(path, sizeof path, "%s/rt.npy", dir);
    for (int t = 0; t < TS_COUNTOF(dts); t++) {
        for (int s = 0; s < 3; s++) {
            size_t item = (size_t)ts_dtype_bits(dts[t]) / 8, n = 1;
            for (int i = 0; i < ndims[s]; i++) n *= (size_t)shapes[s][i];
            unsigned char *data = malloc(n * item);
            for (size_t i = 0; i < n * item; i++) data[i] = (unsigned char)rnd(&seed);
            if (dts[t] == TS_BOOL)
                for (size_t i = 0; i < n; i++) data[i] &= 1;
            reset(&d);
            CHECK_EQ_INT(TS_OK, ts_npy_write(&d, path, dts[t], ndims[s], shapes[s], NULL, data));
            TsDType dt;
            int nd = -1;
            int64_t sh[8];
            void *back = NULL;
            CHECK_EQ_INT(TS_OK, ts_npy_read(&d, path, &dt, &nd, sh, &back));
            CHECK_EQ_INT(dts[t], dt);
            CHECK_EQ_INT(ndims[s], nd);
            for (int i = 0; i < nd && i < ndims[s]; i++) CHECK_EQ_INT(shapes[s][i], sh[i]);
            CHECK(back && memcmp(back, data, n * item) == 0);
            /* data starts at a multiple of 64 bytes */
            size_t len;
            char *file = ts_read_file(path, &len);
            CHECK_EQ_INT(0, (len - n * item) % 64);
            free(file);
            free(back);
            free(data);
        }
    }

    /* A strided (transposed) view is written in logical row-major order. */
    float m[4][6];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 6; j++) m[i][j] = (float)(rnd(&seed) % 1000) / 7.0f;
    int64_t tshape[2] = {6, 4}, tstrides[2] = {1, 6};
    CHECK_EQ_INT(TS_OK, ts_npy_write(&d, path, TS_FLOAT32, 2, tshape, tstrides, m));
    TsTensor t;
    CHECK_EQ_INT(TS_OK, ts_npy_read_tensor(&d, path, &t));
    CHECK_EQ_INT(2, t.ndim);
    CHECK_EQ_INT(6, t.shape[0]);
    int bad = 0;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 4; j++) bad += ((float *)t.data)[i * 4 + j] != m[j][i];
    CHECK_EQ_INT(0, bad);
    free(t.data);
    free((void *)t.shape);

    /* bfloat16 is written as raw bits with descr '<u2'. */
    uint16_t bf[3] = {0x3f80, 0xc000, 0x7fc0};
    int64_t s3[1] = {3};
    CHECK_EQ_INT(TS_OK, ts_npy_write(&d, path, TS_BFLOAT16, 1, s3, NULL, bf));
    size_t flen = 0;
    char *file = ts_read_file(path, &flen);
    CHECK(file && flen > 10 && strstr(file + 10, "'descr': '<u2'"));
    free(file);
    ts_buf_free(&d.msg);
}

/* Header bytes for a (2, 3) float32 array, per numpy's format.py writer. */
static size_t numpy_file(unsigned char *buf, int version, const char *descr, const char *fortran) {
    char dict[256];
    snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': (2, 3), }", descr, fortran);
    size_t dl = strlen(dict);
    memset(dict + dl, ' ', 20); /* GROWTH_AXIS_MAX_DIGITS - len('2') */
    dl += 20;
    size_t pre = version == 1 ? 10 : 12, hlen = dl + 1;
    size_t pad = 64 - (pre + hlen) % 64;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)version;
    buf[7] = 0;
    size_t total = hlen + pad;
    buf[8] = (unsigned char)(total & 0xff);
    buf[9] = (unsigned char)(total >> 8);
    if (version != 1) buf[10] = buf[11] = 0;
    memcpy(buf + pre, dict, dl);
    memset(buf + pre + dl, ' ', pad);
    buf[pre + dl + pad] = '\n';
    size_t n = pre + dl + pad + 1;
    float v[6] = {0, 1.5f, -2, 3.25f, 1e-3f, 6};
    memcpy(buf + n, v, sizeof v);
    return n + sizeof v;
}

static void test_numpy_layout(void) {
    TsDiag d = {0};
    unsigned char buf[512];
    char path[300];
    snprintf(path, sizeof path, "%s/np.npy", dir);
    for (int ver = 1; ver <= 2; ver++) {
        size_t n = numpy_file(buf, ver, "<f4", "False");
        CHECK_EQ_INT(ver == 1 ? 128 + 24 : 128 + 24, n);
        write_bytes(path, buf, n);
        TsDType dt;
        int nd;
        int64_t sh[8];
        void *data = NULL;
        reset(&d);
        CHECK_EQ_INT(TS_OK, ts_npy_read(&d, path, &dt, &nd, sh, &data));
        CHECK_EQ_INT(TS_FLOAT32, dt);
        CHECK_EQ_INT(2, nd);
        CHECK_EQ_INT(2, sh[0]);
        CHECK_EQ_INT(3, sh[1]);
        CHECK(data && ((float *)data)[3] == 3.25f && ((float *)data)[4] == 1e-3f);
        free(data);
    }
    /* ml_dtypes' bfloat16 saves as '<V2' */
    size_t n = numpy_file(buf, 1, "<V2", "False");
    write_bytes(path, buf, n - 12);
    TsDType dt;
    int nd;
    int64_t sh[8];
    void *data = NULL;
    CHECK_EQ_INT(TS_OK, ts_npy_read(&d, path, &dt, &nd, sh, &data));
    CHECK_EQ_INT(TS_BFLOAT16, dt);
    free(data);

    /* Refusals with the reason spelled out. */
    struct { const char *descr, *fortran, *want; } cases[] = {
        {"<f4", "True", "Fortran-order arrays are not supported"},
        {">f4", "False", "big-endian dtype '>f4'"},
        {"<c8", "False", "unsupported dtype '<c8'"},
        {"<f4", "Maybe", "expected True or False"},
    };
    for (int c = 0; c < TS_COUNTOF(cases); c++) {
        n = numpy_file(buf, 1, cases[c].descr, cases[c].fortran);
        write_bytes(path, buf, n);
        reset(&d);
        data = NULL;
        CHECK_EQ_INT(TS_ERR_IO, ts_npy_read(&d, path, &dt, &nd, sh, &data));
        CHECK_CONTAINS(d.msg.s, cases[c].want);
        CHECK_CONTAINS(d.msg.s, "np.npy");
        CHECK(data == NULL);
    }
    ts_buf_free(&d.msg);
}

/* Write a v1.0 file with the given dict text and data size. */
static void with_dict(const char *path, const char *dict, size_t data_bytes) {
    unsigned char buf[1024] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    size_t dl = strlen(dict);
    buf[8] = (unsigned char)(dl & 0xff);
    buf[9] = (unsigned char)(dl >> 8);
    memcpy(buf + 10, dict, dl);
    memset(buf + 10 + dl, 0x5a, data_bytes);
    write_bytes(path, buf, 10 + dl + data_bytes);
}

static void test_hostile(void) {
    TsDiag d = {0};
    char path[300];
    snprintf(path, sizeof path, "%s/bad.npy", dir);
    TsDType dt;
    int nd;
    int64_t sh[8];
    void *data;

    struct { const char *dict; size_t bytes; const char *want; } cases[] = {
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 8, NULL},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 7, "data is truncated"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 9, "unexpected bytes after"},
        {"{'descr': '<f4', 'fortran_order': False}\n", 0, "missing 'shape'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}\n", 8, "unexpected key 'x'"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8, "structured dtypes"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", 4, "more than 8"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }", 0, "too large"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } junk", 8, "text after the dictionary"},
        {"{'descr': '<f4 'fortran_order': False, 'shape': (2,), }", 8, "expected ',' or '}'"},
        {"{'descr' '<f4', 'fortran_order': False, 'shape': (2,), }", 8, "expected ':' after 'descr'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }", 8, "expected a dimension"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2", 8, "malformed header"},
        {"", 0, "expected '{'"},
    };
    for (int c = 0; c < TS_COUNTOF(cases); c++) {
        with_dict(path, cases[c].dict, cases[c].bytes);
        reset(&d);
        data = NULL;
        TsStatus st = ts_npy_read(&d, path, &dt, &nd, sh, &data);
        if (!cases[c].want) {
            CHECK_EQ_INT(TS_OK, st);
        } else {
            CHECK_EQ_INT(TS_ERR_IO, st);
            CHECK_CONTAINS(d.msg.s, cases[c].want);
            CHECK_CONTAINS(d.msg.s, "bad.npy: ");
        }
        free(data);
    }

    /* Not .npy at all, wrong versions, a missing file. */
    write_bytes(path, "PK\x03\x04 a zip file", 16);
    reset(&d);
    CHECK_EQ_INT(TS_ERR_IO, ts_npy_read(&d, path, &dt, &nd, sh, &data));
    CHECK_CONTAINS(d.msg.s, "bad magic");
    write_bytes(path, "\x93NUMPY\x09\x00\x10\x00", 10);
    reset(&d);
    CHECK_EQ_INT(TS_ERR_IO, ts_npy_read(&d, path, &dt, &nd, sh, &data));
    CHECK_CONTAINS(d.msg.s, "unsupported .npy format version 9.0");
    reset(&d);
    CHECK_EQ_INT(TS_ERR_IO, ts_npy_read(&d, "/nonexistent/x.npy", &dt, &nd, sh, &data));
    CHECK_CONTAINS(d.msg.s, "/nonexistent/x.npy: cannot open");

    /* Every truncation of a valid file fails cleanly. */
    unsigned char buf[512];
    size_t n = numpy_file(buf, 1, "<f4", "False");
    int fails = 0;
    for (size_t cut = 0; cut < n; cut++) {
        write_bytes(path, buf, cut);
        reset(&d);
        data = NULL;
        if (ts_npy_read(&d, path, &dt, &nd, sh, &data) == TS_ERR_IO && data == NULL &&
            strstr(ts_buf_str(&d.msg), "bad.npy: "))
            fails++;
        free(data);
    }
    CHECK_EQ_INT((long long)n, fails);

    /* Random mutations of header bytes: OK or TS_ERR_IO, never a crash, and
     * when OK the data matches the shape. */
    unsigned seed = 5;
    int ok = 0, io = 0, other = 0;
    for (int it = 0; it < 3000; it++) {
        unsigned char m[512];
        memcpy(m, buf, n);
        int flips = 1 + (int)(rnd(&seed) % 4);
        for (int f = 0; f < flips; f++) {
            size_t at = rnd(&seed) % 128;
            m[at] = (rnd(&seed) & 1) ? (unsigned char)rnd(&seed) : (unsigned char)"(),: '{}0123456789<fiu"[rnd(&seed) % 22];
        }
        write_bytes(path, m, n - (rnd(&seed) % 3 == 0 ? rnd(&seed) % 24 : 0));
        reset(&d);
        data = NULL;
        TsStatus st = ts_npy_read(&d, path, &dt, &nd, sh, &data);
        if (st == TS_OK) {
            ok++;
            int64_t cnt = 1;
            for (int i = 0; i < nd; i++) cnt *= sh[i];
            if (cnt * (ts_dtype_bits(dt) / 8) > 24) other++;
        } else if (st == TS_ERR_IO) {
            io++;
        } else {
            other++;
        }
        free(data);
    }
    CHECK(ok > 0 && io > 0);
    CHECK_EQ_INT(0, other);
    ts_buf_free(&d.msg);
}

int main(void) {
    snprintf(dir, sizeof dir, "%s/ts-test-npy-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    char cmd[400];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    if (system(cmd) != 0) return 1;
    test_roundtrip();
    test_numpy_layout();
    test_hostile();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_done();
}
