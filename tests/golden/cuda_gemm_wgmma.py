# Pins the CUDA source generated for the GEMM example at its bench configuration on
# the wgmma path (doc/HOPPER.md: sm_90a, TILESCALE_CUDA_WGMMA=1): the column-blocked
# 128B-swizzled tiles, the descriptors, fence / mma_async / commit / wait.  After an
# intended change:
#   UPDATE_GOLDEN=1 sh tests/golden/run_golden.sh tests/golden/cuda_gemm_wgmma.py
# ENV: TILESCALE_CUDA_ARCH=sm_90a TILESCALE_CUDA_WGMMA=1
# ARGS: compile examples/gemm.py --entry matmul -D M=8192 -D N=8192 -D K=8192 -D block_M=128 -D block_N=256 -D block_K=128 -D num_stages=2 -D threads=256 --target cuda --emit cuda
