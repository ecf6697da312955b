/*
 * dist.h — the distributed form of `tilescale run` (dist.c): main.c hands
 * over any `run` whose arguments contain `--ranks`, and any `run` in a
 * process a launcher started (TILESCALE_WORLD_SIZE is set); and `tilescale
 * launch` (launch.c).
 */
#ifndef TS_CLI_DIST_H
#define TS_CLI_DIST_H

#include "cli/opts.h"

/* The whole command, its options parsed (o->cmd == CLI_DIST); returns the
 * exit status. */
int ts_cli_run_dist(CliOpts *o);
/* `tilescale launch -n N [--] PROG ARGS...` (launch.c): N processes of one
 * world; returns the exit status. */
int ts_cli_launch(int argc, char **argv);

#endif
