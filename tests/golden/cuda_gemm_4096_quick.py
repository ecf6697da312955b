# Pins the CUDA source of the quick tier of a tiered build (pass tier_plan: the
# gemms' k16 steps in a rolled loop, NVRTC's fast-compile level on its own line;
# no gemm split across the pipeline's barrier) for a bench configuration whose
# full build is large (issue 5: NVRTC cold <= 0.3 s).  After an intended change:
#   UPDATE_GOLDEN=1 sh tests/golden/run_golden.sh tests/golden/cuda_gemm_4096_quick.py
# ENV: TILESCALE_CUDA_ARCH=sm_90 TILESCALE_TIERED=quick
# ARGS: compile examples/gemm.py --entry matmul -D M=4096 -D N=4096 -D K=4096 -D block_M=128 -D block_N=256 -D block_K=128 -D num_stages=2 -D threads=256 --target cuda --emit cuda
