/*
 * parse_corpus.c — a developer tool, not a test: parse many .py files with
 * ts_parse_module and report every top-level statement that did not parse.
 * Used to check the front end against real TileLang example files, which
 * are not part of this repository.
 *
 *   gcc -std=c11 -O1 -I include -I src tests/tools/parse_corpus.c \
 *       src/front/lex.c src/front/parse.c src/front/ast.c src/base/base.c \
 *       -o /tmp/parse_corpus
 *   find /tmp/tl/examples -name '*.py' | xargs /tmp/parse_corpus
 *
 * Flags: -dump prints each tree, -q prints only the totals.
 */
#define _POSIX_C_SOURCE 200809L
#include "front/ast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    int dump = 0, quiet = 0;
    long files = 0, stmts = 0, unparsed = 0, defs = 0, bad_defs = 0, bad_files = 0;
    double ms = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-dump")) { dump = 1; continue; }
        if (!strcmp(argv[i], "-q")) { quiet = 1; continue; }
        size_t len;
        char *text = ts_read_file(argv[i], &len);
        if (!text) { perror(argv[i]); continue; }
        TsSource src = {argv[i], text, len};
        TsArena a;
        ts_arena_init(&a);
        double t0 = ts_now_ms();
        AstModule *m = ts_parse_module(&a, &src);
        ms += ts_now_ms() - t0;
        files++;
        int file_bad = 0;
        for (int k = 0; k < m->body.n; k++) {
            AstStmt *s = m->body.v[k];
            stmts++;
            if (s->kind == AST_DEF) defs++;
            if (s->kind != AST_UNPARSED) continue;
            unparsed++;
            file_bad = 1;
            int is_def = s->name && (!strncmp(ts_source_line(&a, s->loc), "def ", 4) ||
                                     !strncmp(ts_source_line(&a, s->loc), "@", 1));
            if (is_def) { bad_defs++; defs++; }
            if (!quiet) {
                const char *nl = strchr(s->error, '\n');
                printf("UNPARSED %s%s: %.*s\n", is_def ? "def " : "", s->name ? s->name : "-",
                       (int)(nl ? nl - s->error : (long)strlen(s->error)), s->error);
            }
        }
        bad_files += file_bad;
        if (dump) {
            TsBuf b = {0};
            ast_dump_module(&b, m);
            printf("=== %s\n%s", argv[i], ts_buf_str(&b));
            ts_buf_free(&b);
        }
        ts_arena_free(&a);
        free(text);
    }
    printf("files %ld (with failures %ld), top-level statements %ld, unparsed %ld, "
           "defs %ld, unparsed defs %ld, parse time %.1f ms\n",
           files, bad_files, stmts, unparsed, defs, bad_defs, ms);
    return 0;
}
