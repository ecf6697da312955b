#!/bin/sh
# T.rng_init / T.rng_rand / T.rng_rand_float on the C target against
# Philox4x32-10 in Python (tests/run/rng_ref.py); skipped without NumPy.
. tests/run/lib.sh
py="${TS_PYTHON:-python3}"
if ! "$py" -c 'import numpy' 2>/dev/null; then
  echo "skipped: tests/run/rng_ref.py needs NumPy"
  exit 77
fi
"$py" tests/run/rng_ref.py "$tool" || exit 1
