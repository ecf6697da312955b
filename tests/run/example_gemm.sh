#!/bin/sh
# GEMM example against its naive entry: the README's main job, a shape with
# partial tiles in M, N and K, and bfloat16; then the same against NumPy
# (float64, within the float32-accumulation error bound plus one ulp).
. tests/run/lib.sh
check examples/gemm.py --entry matmul -D M=256 -D N=192 -D K=160 -D block_M=64 -D block_N=64 -D block_K=32 --target c --check-against matmul_naive
check examples/gemm.py --entry matmul -D M=100 -D N=72 -D K=52 -D block_M=32 -D block_N=32 -D block_K=16 --check-against matmul_naive
check examples/gemm.py --entry matmul -D M=64 -D N=64 -D K=64 -D block_M=32 -D block_N=32 -D block_K=32 -D dtype=bfloat16 --check-against matmul_naive
# eager style, shapes from -D
check examples/gemm.py --entry matmul_eager -D M=96 -D N=80 -D K=72 -D block_M=32 -D block_N=32 -D block_K=16 --check-against matmul_naive
# two kernels in one prim_func (split-K: partial products, then their sum)
check examples/splitk_gemm.py --entry splitk_gemm -D M=96 -D N=80 -D K=256 -D splits=4 --check-against splitk_gemm_naive
check examples/splitk_gemm.py --entry splitk_gemm -D M=50 -D N=70 -D K=128 -D splits=2 --check-against splitk_gemm_naive
np_check gemm examples/gemm.py matmul M=256 N=192 K=160 block_M=64 block_N=64 block_K=32
np_check gemm examples/gemm.py matmul M=100 N=72 K=52 block_M=32 block_N=32 block_K=16
np_check gemm examples/gemm.py matmul M=64 N=64 K=64 block_M=32 block_N=32 block_K=32 dtype=bfloat16
np_check gemm examples/gemm.py matmul_eager M=96 N=80 K=72 block_M=32 block_N=32 block_K=16
np_check splitk examples/splitk_gemm.py splitk_gemm M=96 N=80 K=256 splits=4
np_check splitk examples/splitk_gemm.py splitk_gemm M=50 N=70 K=128 splits=2
# control: accumulating in float16 is outside the float32 bound
np_must_fail gemm examples/gemm.py matmul M=100 N=72 K=52 block_M=32 block_N=32 block_K=16 accum_dtype=float16
np_end
