/*
 * corpus_compile.c — a tool, not a test: try to compile every lazy-style
 * kernel factory (a top-level def that contains an @T.prim_func) of a set
 * of TileLang files, guessing plausible -D values for parameters without
 * defaults, and stopping after code generation (no C compiler run).
 * Prints one line per factory: OK, or the first line of the error.
 *
 *   corpus_compile FILE.py...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/ast.h"
#include "tilescale.h"

static int has_prim_func(const AstBlock *b) {
    for (int i = 0; i < b->n; i++) {
        const AstStmt *s = b->v[i];
        if (s->kind == AST_DEF) {
            for (int d = 0; d < s->ndecorators; d++) {
                const AstExpr *e = s->decorators[d];
                if (e->kind == AST_CALL) e = e->a;
                if (e->kind == AST_ATTR && !strcmp(e->name, "prim_func")) return 1;
            }
            if (has_prim_func(&s->body)) return 1;
        }
        if (s->kind == AST_WITH && s->ntargets >= 1 && s->items[0] && s->items[0]->kind == AST_CALL &&
            s->items[0]->a->kind == AST_ATTR && !strcmp(s->items[0]->a->name, "Kernel"))
            return 1;
        if ((s->kind == AST_IF || s->kind == AST_FOR || s->kind == AST_WITH) &&
            (has_prim_func(&s->body) || has_prim_func(&s->orelse)))
            return 1;
    }
    return 0;
}

/* A plausible value for a parameter, by name. */
static const char *guess(const char *n) {
    if (strstr(n, "dtype")) return strstr(n, "accum") ? "float32" : "float16";
    if (!strncmp(n, "is_", 3) || !strncmp(n, "use_", 4) || !strncmp(n, "enable", 6) || strstr(n, "causal"))
        return "False";
    if (!strcmp(n, "threads") || !strcmp(n, "num_threads")) return "128";
    if (strstr(n, "stage")) return "2";
    if (strstr(n, "split") || strstr(n, "group") || strstr(n, "num_")) return "2";
    if (!strcmp(n, "scale") || strstr(n, "eps") || strstr(n, "sm_scale")) return "0.5";
    if (!strcmp(n, "batch") || !strcmp(n, "B") || !strcmp(n, "b")) return "2";
    if (strstr(n, "kv_head") || strstr(n, "h_kv") || strstr(n, "head_kv")) return "1";
    if (strstr(n, "head") || !strcmp(n, "H") || !strcmp(n, "h")) return "4";
    if (strstr(n, "chunk")) return "64";
    if (strstr(n, "block") || !strncmp(n, "blk", 3) || !strncmp(n, "Block", 5) || strstr(n, "tile")) return "64";
    return "128";
}

int main(int argc, char **argv) {
    int ok = 0, total = 0;
    TsContext *ctx;
    ts_context_create(&ctx);
    for (int f = 1; f < argc; f++) {
        size_t len;
        char *text = ts_read_file(argv[f], &len);
        if (!text) continue;
        TsArena a;
        ts_arena_init(&a);
        TsSource src = {argv[f], text, len};
        AstModule *m = ts_parse_module(&a, &src);
        for (int i = 0; i < m->body.n; i++) {
            const AstStmt *s = m->body.v[i];
            if (s->kind == AST_UNPARSED && s->name) {
                printf("%s %s: PARSE %s", argv[f], s->name, s->error ? s->error : "\n");
                continue;
            }
            if (s->kind != AST_DEF || !has_prim_func(&s->body)) continue;
            TsDefine defs[32];
            int nd = 0;
            for (int p = 0; p < s->nparams && nd < 32; p++)
                if (!s->params[p].dflt && !s->params[p].star) {
                    defs[nd].name = s->params[p].name;
                    defs[nd++].value = guess(s->params[p].name);
                }
            TsCompileOptions o = {0};
            o.skip_build = 1;
            TsKernel *k;
            total++;
            if (ts_compile_source(ctx, argv[f], text, s->name, defs, nd, &o, &k) == TS_OK) {
                ok++;
                printf("%s %s: OK\n", argv[f], s->name);
                ts_kernel_destroy(k);
            } else {
                const char *e = ts_last_error(ctx);
                const char *nl = strchr(e, '\n');
                printf("%s %s: FAIL %.*s\n", argv[f], s->name, nl ? (int)(nl - e) : (int)strlen(e), e);
            }
        }
        ts_arena_free(&a);
        free(text);
    }
    printf("%d of %d factories compiled\n", ok, total);
    ts_context_destroy(ctx);
    return 0;
}
