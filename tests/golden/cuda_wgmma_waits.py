# Pins the CUDA printed for pass wgmma_waits' lists (golden ir_wgmma_waits,
# the same kernel): after each ts_wgmma_wait<N>() the register fences
# (ts_wgmma_regs) of exactly the accumulators the IR's wait completes.
# After an intended change:
#   UPDATE_GOLDEN=1 sh tests/golden/run_golden.sh tests/golden/cuda_wgmma_waits.py
# ENV: TILESCALE_CUDA_ARCH=sm_90a TILESCALE_CUDA_WGMMA=1
# ARGS: compile tests/run/kernels/wgmma_gemm.py --entry gemm_async_pipe -D M=128 -D N=128 -D K=256 --target cuda --emit cuda
