/*
 * cli.h — what the files of the command line tool share (main.c parses
 * and runs, and compiles for all of them; emit.c prints device code).
 */
#ifndef TS_CLI_H
#define TS_CLI_H

#include "tilescale.h"

/* ts_compile_file, then the compile's warnings (ts_last_warnings) on
 * stderr, before any error the caller prints. */
TsStatus cli_compile_file(TsContext *ctx, const char *path, const char *entry, const TsDefine *defs, int ndefs,
                          const TsCompileOptions *opt, TsKernel **out);

/* Prints each kernel of the chain k as PTX (emit "ptx") or SASS ("sass")
 * on stdout; errors go to stderr.  Returns the exit status (0 or 1). */
int cli_emit_device(TsContext *ctx, const TsKernel *k, const char *emit);

#endif
