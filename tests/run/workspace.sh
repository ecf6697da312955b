#!/bin/sh
# T.alloc_global workspaces: a chain of two kernels passing partial sums
# through two of them (float32 and int32), on the C target against a naive
# kernel, on random inputs (sizes with a partial split and a partial block);
# `tilescale list` shows them as hidden parameters; a launch passes no
# argument for them.  (The C API's launch: tests/unit/test_api.c.)
. tests/run/lib.sh
f=tests/run/kernels/workspace.py
check $f --entry split_sum --target c --check-against split_sum_naive --rtol 1e-6 --atol 1e-6
check $f --entry split_sum --target c -D M=37 -D N=250 -D S=7 --check-against split_sum_naive --rtol 1e-6 --atol 1e-6
out=$("$tool" list $f)
echo "$out" | grep -q 'workspace part: T.alloc_global(\[S, M\], "float32")  (hidden: the launch allocates it)' \
  || { echo "FAILED: tilescale list does not show the workspace part"; echo "$out"; exit 1; }
echo "$out" | grep -q 'workspace cnt: T.alloc_global((S, M), "int32")' \
  || { echo "FAILED: tilescale list does not show the workspace cnt"; echo "$out"; exit 1; }
echo "PASS list"
