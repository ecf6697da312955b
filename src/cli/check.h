/*
 * check.h — comparing a kernel's tensors with a reference's (check.c),
 * for `run --check-against` on one rank (main.c) and on several (dist.c).
 */
#ifndef TS_CLI_CHECK_H
#define TS_CLI_CHECK_H

#include <stdint.h>

#include "tilescale.h"

/* The default tolerances of a dtype (atol = rtol), as the report prints them. */
void cli_default_tol(TsDType dt, double *atol, double *rtol);

/* The rule, printed once above the per-tensor lines. */
void cli_print_rule(void);

/* Compare got with want[want_off ..] element by element (row-major, as
 * many elements as got has) and print the tensor's report: its shape,
 * tolerances, max abs and rel errors, ok or MISMATCH, and the worst
 * element (index, got, expected, error and its allowance).  atol/rtol < 0:
 * the dtype's default.  poisoned: got was filled with NaN before the run,
 * so a NaN in it is an element the kernel never wrote and fails even
 * against a NaN.  Returns 1 if every element passes. */
int cli_compare(const char *label, const TsTensor *got, const TsTensor *want, int64_t want_off, int poisoned,
                double atol, double rtol);

#endif
