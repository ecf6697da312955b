/*
 * test_entries_api.c — the public API behind `tilescale list`, `cache` and
 * `--version`: ts_list_entries (kinds, parameters, defaults and
 * annotations as written, inner-factory parameters, broken defs, a file
 * that cannot be read), ts_version against the header, ts_cache_info on a
 * directory built by hand (kernels grouped by key, foreign files counted
 * and never removed, a malformed TILESCALE_CACHE_MAX an error), and
 * ts_abi_sizeof knowing the new structs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "tilescale.h"

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static const TsEntryParam *param(const TsEntryInfo *e, const char *name) {
    for (int i = 0; i < e->nparams; i++)
        if (!strcmp(e->params[i].name, name)) return &e->params[i];
    return NULL;
}

int main(void) {
    CHECK_EQ_STR(TILESCALE_VERSION, ts_version());
    CHECK_EQ_INT(TILESCALE_VERSION_NUMBER, ts_version_number());
    CHECK(ts_abi_sizeof("TsEntryInfo") == sizeof(TsEntryInfo));
    CHECK(ts_abi_sizeof("TsEntryParam") == sizeof(TsEntryParam));
    CHECK(ts_abi_sizeof("TsCacheInfo") == sizeof(TsCacheInfo));

    char dir[] = "/tmp/ts_entries_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[512], cdir[64];
    snprintf(path, sizeof path, "%s/k.py", dir);
    write_file(path,
               "import tilelang.language as T\n"
               "def f(M, block = 3 * (1 + 2), s='x,)', t: int = 4):\n"
               "    def g(b=7):\n"
               "        @T.prim_func\n"
               "        def main(A: T.Tensor((M,), 'float32')):\n"
               "            with T.Kernel(1) as bx:\n"
               "                A[0] = 1.0\n"
               "        return main\n"
               "    return g\n"
               "@T.prim_func\n"
               "def p(A: T.Tensor((4,), 'float32'), n: T.int32):\n"
               "    with T.Kernel(1) as bx:\n"
               "        A[0] = n\n"
               "def helper():\n"
               "    return 1\n"
               "def bad(:\n"
               "    pass\n");
    TsContext *ctx;
    CHECK(ts_context_create(&ctx) == TS_OK);
    const TsEntryInfo *e;
    int n = -1;
    CHECK(ts_list_entries(ctx, path, &e, &n) == TS_OK);
    CHECK_EQ_INT(3, n);
    if (n == 3) {
        CHECK_EQ_STR("f", e[0].name);
        CHECK_EQ_INT(TS_ENTRY_FACTORY, e[0].kind);
        CHECK_EQ_INT(2, e[0].line);
        CHECK_EQ_INT(5, e[0].nparams);
        const TsEntryParam *q = param(&e[0], "M");
        CHECK(q && !q->default_text && q->kind == TS_PARAM_DEFINE && !q->inner);
        q = param(&e[0], "block");
        CHECK(q && q->default_text && !strcmp(q->default_text, "3 * (1 + 2)"));
        q = param(&e[0], "s");
        CHECK(q && q->default_text && !strcmp(q->default_text, "'x,)'"));
        q = param(&e[0], "t");
        CHECK(q && q->annotation && !strcmp(q->annotation, "int") && q->default_text && !strcmp(q->default_text, "4"));
        q = param(&e[0], "b");
        CHECK(q && q->inner && q->default_text && !strcmp(q->default_text, "7"));
        CHECK_EQ_STR("p", e[1].name);
        CHECK_EQ_INT(TS_ENTRY_PRIM_FUNC, e[1].kind);
        q = param(&e[1], "A");
        CHECK(q && q->kind == TS_PARAM_TENSOR && q->annotation && !strcmp(q->annotation, "T.Tensor((4,), 'float32')"));
        q = param(&e[1], "n");
        CHECK(q && q->kind == TS_PARAM_SCALAR);
        CHECK_EQ_STR("bad", e[2].name);
        CHECK_EQ_INT(TS_ENTRY_BROKEN, e[2].kind);
        CHECK(e[2].error && strstr(e[2].error, "error"));
    }
    /* the listed factory compiles with an inner parameter as -D */
    TsDefine defs[] = {{"M", "8"}, {"b", "5"}};
    TsCompileOptions co = {0};
    co.skip_build = 1;
    TsKernel *k = NULL;
    CHECK(ts_compile_file(ctx, path, "f", defs, 2, &co, &k) == TS_OK);
    ts_kernel_destroy(k);
    snprintf(path, sizeof path, "%s/none.py", dir);
    CHECK(ts_list_entries(ctx, path, &e, &n) == TS_ERR_IO);
    CHECK_CONTAINS(ts_last_error(ctx), "No such file");

    /* the cache: two kernels (three files), a memo, foreign files */
    snprintf(cdir, sizeof cdir, "%s/cache", dir);
    CHECK(mkdir(cdir, 0755) == 0);
    const char *ours[] = {"tsk-0123456789abcdef0123456789abcdef.c", "tsk-0123456789abcdef0123456789abcdef.so",
                          "tsk-fedcba9876543210fedcba9876543210.cu", "nvrtc-0123456789abcdef.txt"};
    const char *foreign[] = {"notes.txt", "tsk-0123.c", "tsk-0123456789abcdef0123456789abcdef.exe",
                             "tsk-0123456789ABCDEF0123456789ABCDEF.c"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", cdir, ours[i]);
        write_file(path, "12345678");
        snprintf(path, sizeof path, "%s/%s", cdir, foreign[i]);
        write_file(path, "x");
    }
    unsetenv("TILESCALE_CACHE_MAX");
    TsCacheInfo ci;
    CHECK(ts_cache_info(ctx, cdir, &ci) == TS_OK);
    CHECK_EQ_INT(2, (int)ci.kernels);
    CHECK_EQ_INT(4, (int)ci.files);
    CHECK_EQ_INT(32, (int)ci.bytes);
    CHECK_EQ_INT(4, (int)ci.foreign);
    CHECK(ci.limit == 1ll << 30);
    CHECK_EQ_STR(cdir, ci.dir);
    setenv("TILESCALE_CACHE_MAX", "5X", 1);
    CHECK(ts_cache_info(ctx, cdir, &ci) == TS_ERR_INVALID);
    CHECK_CONTAINS(ts_last_error(ctx), "TILESCALE_CACHE_MAX='5X' is not a size");
    setenv("TILESCALE_CACHE_MAX", "2M", 1);
    CHECK(ts_cache_info(ctx, cdir, &ci) == TS_OK && ci.limit == 2 << 20);
    CHECK(ts_cache_clean(ctx, cdir, 0, &ci) == TS_OK);
    CHECK_EQ_INT(2, (int)ci.removed);
    CHECK_EQ_INT(0, (int)ci.kernels);
    CHECK_EQ_INT(0, (int)ci.files);
    CHECK_EQ_INT(4, (int)ci.foreign);
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", cdir, foreign[i]);
        CHECK(access(path, F_OK) == 0);
        unlink(path);
        snprintf(path, sizeof path, "%s/%s", cdir, ours[i]);
        CHECK(access(path, F_OK) != 0);
    }
    snprintf(path, sizeof path, "%s/tilescale-cache.lock", cdir);
    unlink(path);
    rmdir(cdir);
    snprintf(path, sizeof path, "%s/k.py", dir);
    unlink(path);
    rmdir(dir);
    ts_context_destroy(ctx);
    return test_done();
}
