#!/bin/sh
# Reducers (T.alloc_reducer, T.reducer_init/update, T.finalize_reducer) on
# the C target against naive kernels, on random inputs, with partial tiles;
# the CUDA passes run the same kernels in tests/unit/test_interp_examples.c.
. tests/run/lib.sh
f=tests/run/kernels/reducers.py
check $f --entry gemv_reducer --target c --check-against gemv_reducer_naive
check $f --entry gemv_reducer --target c -D M=50 -D N=130 --check-against gemv_reducer_naive
check $f --entry col_max --target c --check-against col_max_naive
check $f --entry col_max --target c -D M=33 -D N=16 --check-against col_max_naive
