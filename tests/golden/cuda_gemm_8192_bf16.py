# Pins the CUDA source generated for one example in a configuration of
# bench/gpu_bench.py, for the H200 (issue 5 F: a change to what the CUDA target prints
# shows here as a diff to read).  After an intended change:
#   UPDATE_GOLDEN=1 sh tests/golden/run_golden.sh tests/golden/cuda_gemm_8192_bf16.py
# ENV: TILESCALE_CUDA_ARCH=sm_90
# ARGS: compile examples/gemm.py --entry matmul -D M=8192 -D N=8192 -D K=8192 -D block_M=128 -D block_N=256 -D block_K=128 -D dtype=bfloat16 -D num_stages=2 -D threads=256 --target cuda --emit cuda
