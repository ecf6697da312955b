/*
 * cli.h — what the files of the command line tool share (main.c parses
 * and runs; emit.c prints device code).
 */
#ifndef TS_CLI_H
#define TS_CLI_H

#include "tilescale.h"

/* Prints each kernel of the chain k as PTX (emit "ptx") or SASS ("sass")
 * on stdout; errors go to stderr.  Returns the exit status (0 or 1). */
int cli_emit_device(TsContext *ctx, const TsKernel *k, const char *emit);

#endif
