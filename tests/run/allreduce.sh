#!/bin/sh
# T.tvm_thread_allreduce under T.attr(T.comm_reducer(...)) (TileLang's GEMV
# examples) on the C target against a naive kernel, on random inputs: a sum
# and a max combine, a partial last block of rows, reduced thread counts 8
# and 32.  (On a GPU: bench/gpu_covlang.sh; the CUDA IR: golden ir_allreduce_cuda.)
. tests/run/lib.sh
f=tests/run/kernels/allreduce.py
check $f --entry gemv_allreduce --target c --check-against gemv_allreduce_naive --rtol 1e-5 --atol 1e-5
check $f --entry gemv_allreduce --target c -D N=37 -D K=300 -D BLOCK_N=2 -D R=32 --check-against gemv_allreduce_naive --rtol 1e-5 --atol 1e-5
