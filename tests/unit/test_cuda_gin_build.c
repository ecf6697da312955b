/*
 * test_cuda_gin_build.c — the run-time build of CUDA kernels that use
 * NCCL's device API (a kernel compiled for several nodes: GIN calls),
 * which NVRTC cannot compile, so the library runs nvcc
 * (src/target/cuda/nvcc.c) through the same disk cache.  Needs nvcc and
 * NCCL's nccl_device.h, not a GPU (exits 77, reported as skipped, where
 * either is missing).
 *
 *   - examples/distributed/put_block.py compiled --multinode for CUDA
 *     through ts_compile_file (the library's own path, no skip_build):
 *     built by nvcc ("nvcc" in the timing), a cubin (ELF) and its source
 *     in the cache, the source naming nvcc and the NCCL version in its
 *     key comment, no temporaries left; the second compile is a cache
 *     hit; the device-code API gives its PTX through nvcc too;
 *   - the one-node build of the same kernel still goes to NVRTC (where
 *     NVRTC is present);
 *   - an nvcc or NCCL include directory that is not there, or NCCL
 *     headers older than GIN (2.28.3's), is an error naming what was
 *     tried; nvcc's own errors come back with its log.
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

/* put_block for 2 ranks (multinode or not) in cache directory dir with
 * nvcc / include overrides (NULL: the defaults); the status, the kernel
 * (caller destroys; NULL on failure) and the timing text. */
static TsStatus build(const char *dir, int multinode, const char *nvcc, const char *inc, TsKernel **out) {
    TsCompileOptions o = {0};
    o.target = TS_TARGET_CUDA;
    o.timing = 1;
    o.cache_dir = dir;
    o.multinode = multinode;
    o.nvcc = nvcc;
    o.nccl_include = inc;
    o.tiered = TS_TIERED_OFF;
    TsDefine defs[4] = {{"M", "4096"}, {"num_rank", "2"}, {"block_M", "512"}, {"threads", "128"}};
    *out = NULL;
    return ts_compile_file(ctx, "examples/distributed/put_block.py", "kernel_", defs, 4, &o, out);
}

/* Count the files in dir whose name contains `part`; the first one's
 * path into first (size n). */
static int files_with(const char *dir, const char *part, char *first, size_t n) {
    DIR *d = opendir(dir);
    int c = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        if (strstr(e->d_name, part)) {
            if (!c && first) snprintf(first, n, "%s/%s", dir, e->d_name);
            c++;
        }
    if (d) closedir(d);
    return c;
}

/* Remove dir and the files in it. */
static void remove_dir(const char *dir) {
    DIR *d = opendir(dir);
    char p[4400];
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    if (d) closedir(d);
    rmdir(dir);
}

static char *slurp(const char *path, size_t *len) { return ts_read_file(path, len); }

int main(void) {
    TsDiag d0;
    memset(&d0, 0, sizeof d0);
    TsNvcc nv;
    if (ts_nvcc_find(&d0, NULL, &nv) != 0) {
        printf("SKIP: %s\n", ts_buf_str(&d0.msg));
        ts_buf_free(&d0.msg);
        return 77;
    }
    if (ts_context_create(&ctx) != TS_OK) return 1;
    char tmpl[] = "/tmp/ts-gin-build-XXXXXX";
    const char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return test_done();

    /* the build through the library: nvcc, cached */
    TsKernel *k = NULL;
    TsStatus st = build(dir, 1, NULL, NULL, &k);
    CHECK_EQ_INT(TS_OK, st);
    if (st) fprintf(stderr, "%s\n", ts_last_error(ctx));
    CHECK_CONTAINS(k ? ts_kernel_source(k) : "", "#include <nccl_device.h>");
    CHECK_CONTAINS(k ? ts_kernel_timing(k) : "", "\nnvcc ");
    char cubin[4096] = "", cu[4096] = "";
    CHECK_EQ_INT(1, files_with(dir, ".cubin", cubin, sizeof cubin));
    CHECK_EQ_INT(2, files_with(dir, "tsk-", NULL, 0)); /* the .cu and the .cubin */
    CHECK_EQ_INT(0, files_with(dir, ".tmp-", NULL, 0));
    size_t len = 0;
    char *img = slurp(cubin, &len);
    CHECK(img && len > 1000 && !memcmp(img, "\x7f" "ELF", 4));
    free(img);
    snprintf(cu, sizeof cu, "%.*s.cu", (int)(strlen(cubin) - strlen(".cubin")), cubin);
    char *text = slurp(cu, &len);
    CHECK_CONTAINS(text, "/* nvcc ");
    CHECK_CONTAINS(text, ", NCCL 2");
    CHECK_CONTAINS(text, "-arch=sm_");
    free(text);
    /* its PTX through the device-code API (nvcc again, nothing kept) */
    void *ptx = NULL;
    size_t psz = 0;
    CHECK_EQ_INT(TS_OK, k ? ts_kernel_device_code(k, "ptx", &ptx, &psz) : TS_ERR_INVALID);
    CHECK_CONTAINS(ptx ? (const char *)ptx : "", ".entry tsk_kernel");
    free(ptx);
    CHECK_EQ_INT(0, files_with(dir, ".tmp-", NULL, 0));
    ts_kernel_destroy(k);

    /* the second build is a hit */
    st = build(dir, 1, NULL, NULL, &k);
    CHECK_EQ_INT(TS_OK, st);
    CHECK_CONTAINS(k ? ts_kernel_timing(k) : "", "cache hit");
    ts_kernel_destroy(k);

    /* one node: NVRTC, no nccl_device.h */
    TsBuf why = {0};
    if (ts_nvrtc_available(&why)) {
        st = build(dir, 0, NULL, NULL, &k);
        CHECK_EQ_INT(TS_OK, st);
        CHECK(k && !strstr(ts_kernel_source(k), "nccl_device.h"));
        CHECK_CONTAINS(k ? ts_kernel_timing(k) : "", "\nnvrtc ");
        ts_kernel_destroy(k);
    }
    ts_buf_free(&why);

    /* what is missing is named */
    st = build(dir, 1, "/nonexistent/bin/nvcc", NULL, &k);
    CHECK_EQ_INT(TS_ERR_BUILD, st);
    CHECK_CONTAINS(ts_last_error(ctx), "no nvcc was found to build it (tried /nonexistent/bin/nvcc)");
    st = build(dir, 1, NULL, "/nonexistent/include", &k);
    CHECK_EQ_INT(TS_ERR_BUILD, st);
    CHECK_CONTAINS(ts_last_error(ctx), "no nccl_device.h with it was found (NCCL 2.28.7 or later, where GIN starts; "
                                       "looked in /nonexistent/include)");
    /* headers of an NCCL 2.28 before GIN (2.28.3 has nccl_device.h but no ncclGin) are passed over, named */
    char old[4300], f[4400];
    snprintf(old, sizeof old, "%s/old-nccl", dir);
    CHECK(mkdir(old, 0755) == 0);
    snprintf(f, sizeof f, "%s/nccl_device.h", old);
    FILE *fp = fopen(f, "w");
    if (fp) fclose(fp);
    snprintf(f, sizeof f, "%s/nccl.h", old);
    fp = fopen(f, "w");
    if (fp) {
        fputs("#define NCCL_VERSION_CODE 22803\n", fp);
        fclose(fp);
    }
    st = build(dir, 1, NULL, old, &k);
    CHECK_EQ_INT(TS_ERR_BUILD, st);
    CHECK_CONTAINS(ts_last_error(ctx), "old-nccl (NCCL 2.28.3: no GIN device API)");
    remove_dir(old);

    /* nvcc's errors come back with its log; its temporaries are removed */
    TsDiag d1;
    memset(&d1, 0, sizeof d1);
    char base[4200];
    snprintf(base, sizeof base, "%s/tsk-00000000000000000000000000000000", dir);
    size_t sz = 0;
    unsigned char *bad = ts_nvcc_compile(&d1, &nv, "__global__ void k() { undeclared_thing(); }\n", "sm_90", 0, base, &sz);
    CHECK(bad == NULL);
    CHECK_EQ_INT(TS_ERR_BUILD, d1.status);
    CHECK_CONTAINS(ts_buf_str(&d1.msg), "nvcc could not compile the generated CUDA code for sm_90");
    CHECK_CONTAINS(ts_buf_str(&d1.msg), "undeclared_thing");
    CHECK_EQ_INT(0, files_with(dir, ".tmp-", NULL, 0));
    ts_buf_free(&d1.msg);

    ts_nvcc_free(&nv);
    ts_context_destroy(ctx);
    remove_dir(dir);
    return test_done();
}
