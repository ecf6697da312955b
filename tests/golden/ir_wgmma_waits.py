# Pins pass wgmma_waits on a kernel with two asynchronous accumulators
# (tests/run/kernels/wgmma_gemm.py, gemm_async_pipe): each T.wait_wgmma
# lists the accumulators it completes, `completes=[...]`: the first
# wait(1) in the loop C1 (the previous iteration's group; C0's stays
# pending), the second C0, the wait(0) after the loop C1.  The CUDA text
# is golden cuda_wgmma_waits.  After an intended change:
#   UPDATE_GOLDEN=1 sh tests/golden/run_golden.sh tests/golden/ir_wgmma_waits.py
# ENV: TILESCALE_CUDA_ARCH=sm_90a TILESCALE_CUDA_WGMMA=1
# ARGS: compile tests/run/kernels/wgmma_gemm.py --entry gemm_async_pipe -D M=128 -D N=128 -D K=256 --target cuda --dump-after wgmma_waits
