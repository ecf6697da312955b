/*
 * test_reliability.c — unit tests of issue 9's library-level guarantees:
 * the compiler's argv is split from CC/TILESCALE_CFLAGS like a shell
 * would split words (without running one); tensor sizes that overflow or
 * exceed the memory are refused with both sizes in the message; the host
 * memory estimate is sane; ts_read_file refuses non-regular files.
 */
#include <errno.h>
#include <stdlib.h>

#include "target/c/c_target.h"
#include "test.h"

/* The words, joined by '|', into a TsBuf. */
static int join_word(void *ctx, const char *w, size_t n) {
    TsBuf *b = ctx;
    if (b->n) ts_buf_puts(b, "|");
    ts_buf_putn(b, w, n);
    return 0;
}

static const char *split(TsBuf *b, const char *s, int *rc) {
    b->n = 0;
    ts_buf_puts(b, "");
    *rc = ts_c_split_words(s, join_word, b);
    return ts_buf_str(b);
}

static void test_split_words(void) {
    TsBuf b = {0};
    int rc;
    CHECK_EQ_STR("cc", split(&b, "cc", &rc));
    CHECK_EQ_INT(0, rc);
    CHECK_EQ_STR("ccache|gcc", split(&b, "  ccache \t gcc  ", &rc));
    CHECK_EQ_STR("", split(&b, "", &rc));
    CHECK_EQ_INT(0, rc);
    CHECK_EQ_STR("-DX=a b|-O1", split(&b, "-DX='a b' -O1", &rc));
    CHECK_EQ_STR("-DX=\"q\"|y", split(&b, "-DX=\"\\\"q\\\"\" y", &rc));
    CHECK_EQ_STR("a b|;touch|x", split(&b, "a\\ b ;touch x", &rc));
    CHECK_EQ_STR("$(rm|-rf)", split(&b, "$(rm -rf)", &rc)); /* no expansion: literal words */
    split(&b, "-DX='a b", &rc);
    CHECK_EQ_INT(-1, rc);
    split(&b, "\"open", &rc);
    CHECK_EQ_INT(-1, rc);
    ts_buf_free(&b);
}

static void test_tensor_sizes(void) {
    TsContext *ctx;
    CHECK_EQ_INT(TS_OK, ts_context_create(&ctx));
    TsTensor t;
    int64_t huge[2] = {(int64_t)1 << 62, 4};
    CHECK_EQ_INT(TS_ERR_NOMEM, ts_tensor_alloc(&t, TS_FLOAT32, 2, huge));
    CHECK(t.data == NULL);
    CHECK_EQ_INT(TS_ERR_NOMEM, ts_tensor_alloc_ctx(ctx, &t, TS_FLOAT32, 2, huge, "A"));
    CHECK_CONTAINS(ts_last_error(ctx), "cannot allocate 'A': float32[4611686018427387904, 4] has more bytes than fit");
    /* larger than any machine's memory, but no overflow: both sizes named */
    int64_t big[2] = {(int64_t)1 << 40, 1 << 20};
    CHECK_EQ_INT(TS_ERR_NOMEM, ts_tensor_alloc_ctx(ctx, &t, TS_FLOAT64, 2, big, "B"));
    CHECK_CONTAINS(ts_last_error(ctx), "needs 9223372036854775808 bytes, but only");
    CHECK_CONTAINS(ts_last_error(ctx), "bytes of memory are available");
    int64_t neg[1] = {-3};
    CHECK_EQ_INT(TS_ERR_INVALID, ts_tensor_alloc_ctx(ctx, &t, TS_FLOAT32, 1, neg, "C"));
    CHECK_CONTAINS(ts_last_error(ctx), "invalid shape [-3]");
    int64_t ok[2] = {3, 5};
    CHECK_EQ_INT(TS_OK, ts_tensor_alloc_ctx(ctx, &t, TS_FLOAT32, 2, ok, "D"));
    CHECK_EQ_INT(15, ts_tensor_numel(&t));
    ts_tensor_free(&t);
    /* numel of a caller-made tensor whose count overflows: -1, not a wrapped count */
    int64_t sh[3] = {(int64_t)1 << 40, (int64_t)1 << 40, 2};
    TsTensor v = {0};
    v.ndim = 3;
    v.shape = sh;
    CHECK_EQ_INT(-1, ts_tensor_numel(&v));
    ts_context_destroy(ctx);
    uint64_t avail = ts_host_mem_available();
    CHECK(avail > ((uint64_t)1 << 20)); /* this test runs in more than a megabyte */
}

static void test_read_file(void) {
    size_t n;
    errno = 0;
    CHECK(ts_read_file("/dev/zero", &n) == NULL);
    CHECK_EQ_INT(TS_ENOTREG, errno);
    CHECK_EQ_STR("not a regular file", ts_file_error(errno));
    CHECK(ts_read_file("/", &n) == NULL);
    CHECK_EQ_INT(EISDIR, errno);
    CHECK(ts_read_file("/no/such/file", &n) == NULL);
    CHECK_EQ_INT(ENOENT, errno);
    char *s = ts_read_file("tests/unit/test_reliability.c", &n);
    CHECK(s != NULL && n > 100 && strlen(s) == n);
    free(s);
}

int main(void) {
    test_split_words();
    test_tensor_sizes();
    test_read_file();
    return test_done();
}
