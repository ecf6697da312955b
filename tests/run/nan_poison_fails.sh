#!/bin/sh
# Issue 9 H: outputs are poisoned with NaN before a run; a NaN still there
# afterwards must fail the check even where the reference entry left NaN in
# the same elements (an element neither kernel wrote).  Control runs: the
# same comparison with every row written must pass, and a reference with
# unwritten rows must fail, so this test fails if the check stops
# comparing at all.
. tests/run/lib.sh
f=tests/run/kernels/unwritten.py
must_fail() {
  out=$("$tool" run "$@" 2>&1)
  rc=$?
  echo "$out"
  if [ $rc -eq 0 ] || echo "$out" | grep -q '^PASS$' || ! echo "$out" | grep -q 'MISMATCH'; then
    echo "FAILED: accepted (NaN left in a poisoned output): tilescale run $*"
    exit 1
  fi
}
must_fail $f --entry full_copy -D M=5 -D N=7 --check-against short_copy_ref --seed 1
must_fail $f --entry short_copy -D M=5 -D N=7 --check-against short_copy_ref --seed 1
check $f --entry full_copy -D M=5 -D N=7 --check-against full_copy --seed 1
