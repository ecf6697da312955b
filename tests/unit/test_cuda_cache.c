/*
 * test_cuda_cache.c — the CUDA target's kernel cache without opening NVRTC
 * on a hit (src/target/cuda/nvrtc.c).  Needs NVRTC, not a GPU (exits 77,
 * reported as skipped, without it).
 *
 * The cache key names NVRTC's version, which a hit reads from a memo
 * (nvrtc-<id>.txt in the cache directory) keyed by the library file's
 * identity instead of opening the 100 MB library.  What must hold:
 *   - a miss compiles and leaves a whole memo naming the library;
 *   - the next build is a hit;
 *   - a damaged memo is ignored and rewritten, the build still a hit;
 *   - a different file at the library's path is not trusted: the memo of
 *     the old file does not apply, so the build asks NVRTC again and
 *     writes a second memo.  (In this process dlopen of that path returns
 *     the library already loaded under the same name, so the build still
 *     succeeds, as it should: that library is what would compile.);
 *   - on a machine with a GPU the build reports the CUDA context and the
 *     module load as separate phases.
 * The library is reached through a symbolic link in a temporary directory
 * ($TILESCALE_NVRTC), so the test can swap it without touching the real one.
 */
#include "test.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "target/cuda/cuda_target.h"
#include "tilescale.h"

static TsContext *ctx;

/* The NVRTC library file, as nvrtc.c would find it; 0 if only the
 * loader's search finds it. */
static int find_nvrtc(char *path, size_t n) {
    struct stat st;
    const char *env = getenv("TILESCALE_NVRTC");
    if (env && *env) {
        snprintf(path, n, "%s", env);
        return stat(path, &st) == 0;
    }
    const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
    for (int i = 0; i < 3; i++) {
        if (!homes[i] || !*homes[i]) continue;
        snprintf(path, n, "%s/lib64/libnvrtc.so", homes[i]);
        if (stat(path, &st) == 0) return 1;
    }
    return 0;
}

/* The memo files' names in dir (count returned, first one's path in out). */
static int memos(const char *dir, char *out, size_t n) {
    DIR *d = opendir(dir);
    int c = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        if (!strncmp(e->d_name, "nvrtc-", 6) && strstr(e->d_name, ".txt") && !strstr(e->d_name, ".tmp")) {
            if (!c) snprintf(out, n, "%s/%s", dir, e->d_name);
            c++;
        }
    if (d) closedir(d);
    return c;
}

/* One CUDA build of the elementwise add example in dir; the status, and
 * the timing text into timing (size n). */
static TsStatus build(const char *dir, char *timing, size_t n) {
    TsCompileOptions o = {0};
    o.target = TS_TARGET_CUDA;
    o.timing = 1;
    o.cache_dir = dir;
    TsDefine defs[2] = {{"M", "64"}, {"N", "96"}};
    TsKernel *k = NULL;
    TsStatus st = ts_compile_file(ctx, "examples/elementwise_add.py", "elementwise_add", defs, 2, &o, &k);
    snprintf(timing, n, "%s", k ? ts_kernel_timing(k) : "");
    ts_kernel_destroy(k);
    return st;
}

static void rm_dir(const char *dir) {
    DIR *d = opendir(dir);
    char p[1200];
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    if (d) closedir(d);
    rmdir(dir);
}

int main(void) {
    TsBuf why = {0};
    if (!ts_nvrtc_available(&why)) {
        printf("SKIP: %s\n", ts_buf_str(&why));
        ts_buf_free(&why);
        return 77;
    }
    ts_buf_free(&why);
    char real[600];
    if (!find_nvrtc(real, sizeof real)) {
        printf("SKIP: NVRTC is found only by the loader's search (no file to key a memo on)\n");
        return 77;
    }
    ts_context_create(&ctx);
    char tmp[] = "/tmp/ts-cuda-cache-XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    char dir[700], link[700], memo[1200], timing[4096];
    snprintf(dir, sizeof dir, "%s/cache", tmp);
    snprintf(link, sizeof link, "%s/libnvrtc.so", tmp);
    CHECK_EQ_INT(0, symlink(real, link));
    setenv("TILESCALE_NVRTC", link, 1);

    /* a miss: compiled, and a whole memo naming the library */
    TsStatus st = build(dir, timing, sizeof timing);
    if (st) fprintf(stderr, "%s", ts_last_error(ctx));
    CHECK_EQ_INT(TS_OK, st);
    CHECK_CONTAINS(timing, "nvrtc ");
    CHECK_EQ_INT(1, memos(dir, memo, sizeof memo));
    size_t len = 0;
    char *text = ts_read_file(memo, &len);
    CHECK(text != NULL);
    if (text) {
        CHECK_CONTAINS(text, link);
        CHECK_CONTAINS(text, "\nversion ");
        CHECK(len > 5 && !strcmp(text + len - 5, "\nend\n"));
    }
    free(text);

    /* a hit */
    CHECK_EQ_INT(TS_OK, build(dir, timing, sizeof timing));
    CHECK_CONTAINS(timing, "cache hit ");

    /* a damaged memo: ignored, rewritten, still a hit */
    FILE *f = fopen(memo, "w");
    if (f) {
        fputs("library x\nversion 9", f);
        fclose(f);
    }
    CHECK_EQ_INT(TS_OK, build(dir, timing, sizeof timing));
    CHECK_CONTAINS(timing, "cache hit ");
    text = ts_read_file(memo, &len);
    CHECK(text && len > 5 && !strcmp(text + len - 5, "\nend\n"));
    free(text);

    /* on a GPU: context and module load reported apart */
    char arch[24];
    if (ts_cuda_device_arch(arch, sizeof arch, NULL)) {
        CHECK_CONTAINS(timing, "cuda context ");
        CHECK_CONTAINS(timing, "module load ");
        CHECK(strstr(timing, "\nload ") == NULL);
    }

    /* another file at the library's path: the old memo does not apply */
    CHECK_EQ_INT(0, unlink(link));
    f = fopen(link, "w");
    if (f) {
        fputs("not a shared library\n", f);
        fclose(f);
    }
    st = build(dir, timing, sizeof timing);
    if (st) fprintf(stderr, "%s", ts_last_error(ctx));
    CHECK_EQ_INT(TS_OK, st);
    CHECK_EQ_INT(2, memos(dir, memo, sizeof memo));

    unsetenv("TILESCALE_NVRTC");
    unlink(link);
    rm_dir(dir);
    rmdir(tmp);
    ts_context_destroy(ctx);
    return test_done();
}
