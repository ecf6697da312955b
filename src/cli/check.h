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

/* The default ulp rule of a dtype: 4 for float16, else -1 (allclose). */
int64_t cli_default_ulp(TsDType dt);

/* The rule, printed once above the per-tensor lines; the ulp rule's line
 * (ulp: --ulp's value, or -1 for float16's default) where a tensor uses it. */
void cli_print_rule(void);
void cli_print_ulp_rule(int64_t ulp);

/* Compare got with want[want_off ..] element by element (row-major, as
 * many elements as got has) and print the tensor's report: its shape,
 * tolerances, max abs and rel errors, ok or MISMATCH, and the worst
 * element (index, got, expected, error and its allowance).  atol/rtol < 0:
 * the dtype's default.  poisoned: got was filled with NaN before the run,
 * so a NaN in it is an element the kernel never wrote and fails even
 * against a NaN.  Returns 1 if every element passes. */
int cli_compare(const char *label, const TsTensor *got, const TsTensor *want, int64_t want_off, int poisoned,
                double atol, double rtol);
/* The same with the ulp rule: ulp >= 0 (--ulp), an element passes when got
 * and ref are at most ulp units in the last place of got's dtype apart, or
 * within atol (atol < 0: 1e-3 for float16, else the dtype's default); ulp
 * < 0 and rtol < 0: float16 tensors by the ulp rule with 4 ulps, the
 * others by allclose with the defaults; ulp < 0, rtol >= 0: allclose. */
int cli_compare_ulp(const char *label, const TsTensor *got, const TsTensor *want, int64_t want_off, int poisoned,
                    double atol, double rtol, int64_t ulp);

#endif
