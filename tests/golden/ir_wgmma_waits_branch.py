# Pins pass wgmma_waits across a run-time branch (tests/run/kernels/wgmma_gemm.py,
# gemm_async_branch: the K tiles alternate between accumulators C0 and C1):
# both arms join, so the wait(0) at the top of the loop and the one after it
# list both accumulators, and the wait(1) after the branch (one group at most
# pending) lists none.  After an intended change:
#   UPDATE_GOLDEN=1 sh tests/golden/run_golden.sh tests/golden/ir_wgmma_waits_branch.py
# ENV: TILESCALE_CUDA_ARCH=sm_90a TILESCALE_CUDA_WGMMA=1
# ARGS: compile tests/run/kernels/wgmma_gemm.py --entry gemm_async_branch -D M=128 -D N=128 -D K=256 --target cuda --dump-after wgmma_waits
