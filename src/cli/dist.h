/*
 * dist.h — the distributed form of `tilescale run` (dist.c): main.c hands
 * over any `run` whose arguments contain `--ranks`.
 */
#ifndef TS_CLI_DIST_H
#define TS_CLI_DIST_H

/* The whole command; returns the exit status. */
int ts_cli_run_dist(int argc, char **argv);

#endif
