# Pins the CUDA source of examples/ws_gemm.py's ring of mbarrier-handed tiles (T.ws producer
# role 1 loads, consumer role 0 runs the tensor-core gemm on its own 4 warps): the inits by one
# thread and one block barrier after them, each role's code under its thread range, waits and
# arrives as mbarrier PTX helpers (try_wait on sm_90), the consumer's named barrier (bar.sync 1,
# 128) before each gemm and no block barrier inside the K loop.
#   UPDATE_GOLDEN=1 sh tests/golden/run_golden.sh tests/golden/cuda_ws_gemm.py
# ENV: TILESCALE_CUDA_ARCH=sm_90
# ARGS: compile examples/ws_gemm.py --entry ws_matmul_ring -D M=4096 -D N=4096 -D K=4096 --target cuda --emit cuda
