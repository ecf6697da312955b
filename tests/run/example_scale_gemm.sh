#!/bin/sh
# A warp's and a warpgroup's own T.gemm under T.Scale (examples/scale_gemm.py:
# each unit a role of its threads, T.view of the block tiles) against naive
# entries, on the C target; the CUDA source of both builds in test_comm_nvrtc.
. tests/run/lib.sh
check examples/scale_gemm.py --entry warp_gemm --check-against warp_gemm_ref
check examples/scale_gemm.py --entry warp_gemm -D M=128 -D N=32 -D K=48 --check-against warp_gemm_ref
check examples/scale_gemm.py --entry wg_gemm --check-against wg_gemm_ref
check examples/scale_gemm.py --entry wg_gemm -D M=32 -D N=48 -D K=128 --check-against wg_gemm_ref
