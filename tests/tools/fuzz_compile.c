/*
 * fuzz_compile.c — a tool, not a test: mutate kernel files (byte flips,
 * deletions, duplications, token splices) and push each mutant through the
 * whole compiler up to code generation (parse, elaborate, passes, C codegen;
 * no C compiler run).  Build it with -fsanitize=address,undefined; any crash
 * or sanitizer report is a bug.  Every result must be TS_OK or a user-error
 * status with a non-empty diagnostic; TS_ERR_INTERNAL is reported.
 *
 *   fuzz_compile SEED ITERATIONS FILE:ENTRY:NAME=VAL,NAME=VAL ...
 *
 * SEED 0 picks a fresh seed.  ctest runs a short campaign of it
 * (tests/CMakeLists.txt: unit.fuzz_compile), under ASan in CI.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "tilescale.h"

static uint64_t rng;
static uint64_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static const char *tokens[] = {"T.copy(", "T.gemm(", ")", "(", "[", "]", ":", ",", "\n    ", "for ",
                               " in T.Parallel(", "if ", "else:", "0", "-1", "1e9", "None", "True",
                               "T.Kernel(", "T.alloc_fragment((", "\"float16\"", "**", "//", "lambda", "@T.macro\n",
                               "while ", "break", "return ", "T.reduce_sum(", "dim=", "A[", "*", "'"};

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: fuzz_compile SEED ITERATIONS FILE:ENTRY:DEFS...\n");
        return 2;
    }
    rng = strtoull(argv[1], NULL, 0);
    if (!rng) rng = (uint64_t)time(NULL); /* 0: a fresh seed, printed for reproduction */
    printf("seed %llu\n", (unsigned long long)rng);
    rng |= 1;
    long iters = atol(argv[2]);
    TsContext *ctx;
    ts_context_create(&ctx);
    long internal = 0, ok = 0, errs = 0;
    for (long it = 0; it < iters; it++) {
        const char *spec = argv[3 + it % (argc - 3)];
        char path[512], entry[128], defstr[512] = "";
        if (sscanf(spec, "%511[^:]:%127[^:]:%511s", path, entry, defstr) < 2) return 2;
        TsDefine defs[16];
        int nd = 0;
        char *save, *tok;
        char dcopy[512];
        strcpy(dcopy, defstr);
        for (tok = strtok_r(dcopy, ",", &save); tok && nd < 16; tok = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(tok, '=');
            if (!eq) continue;
            *eq = 0;
            defs[nd].name = tok;
            defs[nd++].value = eq + 1;
        }
        size_t len;
        char *text = ts_read_file(path, &len);
        if (!text) return 2;
        char *buf = malloc(len * 2 + 256);
        memcpy(buf, text, len + 1);
        int muts = 1 + (int)(next() % 4);
        for (int m = 0; m < muts; m++) {
            size_t n = strlen(buf);
            if (!n) break;
            size_t pos = next() % n;
            switch (next() % 4) {
            case 0: buf[pos] = (char)(32 + next() % 95); break;
            case 1: memmove(buf + pos, buf + pos + 1, n - pos); break;
            case 2: {
                size_t l = 1 + next() % 16;
                if (pos + l > n) l = n - pos;
                if (n + l < len * 2 + 200) {
                    memmove(buf + pos + l, buf + pos, n - pos + 1);
                }
                break;
            }
            default: {
                const char *t = tokens[next() % (sizeof tokens / sizeof *tokens)];
                size_t l = strlen(t);
                if (n + l < len * 2 + 200) {
                    memmove(buf + pos + l, buf + pos, n - pos + 1);
                    memcpy(buf + pos, t, l);
                }
            }
            }
        }
        TsCompileOptions o = {0};
        o.skip_build = 1;
        TsKernel *k = NULL;
        TsStatus st = ts_compile_source(ctx, path, buf, entry, defs, nd, &o, &k);
        if (st == TS_OK) ok++;
        else {
            errs++;
            if (!*ts_last_error(ctx)) printf("empty diagnostic for status %d\n", st);
        }
        if (st == TS_ERR_INTERNAL) {
            internal++;
            if (internal <= 5) printf("--- internal error on mutant %ld:\n%s\n--- source:\n%s\n", it, ts_last_error(ctx), buf);
        }
        ts_kernel_destroy(k);
        free(buf);
        free(text);
    }
    printf("%ld mutants: %ld compiled, %ld rejected, %ld internal errors\n", iters, ok, errs, internal);
    ts_context_destroy(ctx);
    return internal ? 1 : 0;
}
