#!/bin/sh
# Buffer views (T.reshape, T.view(buf, shape=), T.Tensor(shape, dtype,
# buf.data)) on the C target against naive kernels that index the viewed
# storage by hand, on random inputs; sizes with partial tiles and a split
# dimension of another width.  The CUDA passes run the same kernels in
# tests/unit/test_interp_examples.c.
. tests/run/lib.sh
f=tests/run/kernels/views.py
check $f --entry reshape_reduce --target c --check-against reshape_reduce_naive
check $f --entry reshape_reduce --target c -D M=70 -D H=8 -D Q=2 -D block_N=32 --check-against reshape_reduce_naive
check $f --entry flat_copy --target c --check-against flat_copy_naive
check $f --entry flat_copy --target c -D B=5 -D R=7 -D C=32 --check-against flat_copy_naive
check $f --entry view_rows --target c --check-against view_rows_naive
check $f --entry view_rows --target c -D N=512 -D W=32 --check-against view_rows_naive
check $f --entry pipelined_view --target c --check-against pipelined_view_naive --rtol 1e-5 --atol 1e-5
check $f --entry pipelined_view --target c -D M=32 -D N=200 -D block_N=32 --check-against pipelined_view_naive --rtol 1e-5 --atol 1e-5
