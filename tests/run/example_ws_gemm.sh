#!/bin/sh
# Warp-specialized GEMM (examples/ws_gemm.py: T.ws roles handing tiles over through mbarriers)
# on the C target against its naive entry and against NumPy: one tile pair, rings of 2 and 3
# slots, partial tiles in M, N and K, a small tile.
. tests/run/lib.sh
check examples/ws_gemm.py --entry ws_matmul -D M=256 -D N=256 -D K=512 --target c --check-against matmul_naive
check examples/ws_gemm.py --entry ws_matmul -D M=200 -D N=136 -D K=100 --target c --check-against matmul_naive
check examples/ws_gemm.py --entry ws_matmul_ring -D M=256 -D N=192 -D K=320 --target c --check-against matmul_naive
check examples/ws_gemm.py --entry ws_matmul_ring -D M=96 -D N=80 -D K=200 -D block_M=32 -D block_N=32 -D block_K=16 -D stages=3 --target c --check-against matmul_naive
np_check gemm examples/ws_gemm.py ws_matmul M=200 N=136 K=100
np_check gemm examples/ws_gemm.py ws_matmul_ring M=96 N=80 K=200 block_M=32 block_N=32 block_K=16 stages=3
np_end
