# Pass ws_role_regs on examples/ws_gemm.py's ring GEMM compiled for sm_90a: the K loop's producer
# and mma role blocks become one region per role, each with its own copy of the loop (the second
# copy with a variable of its own), the producer's first; the producer gives registers back
# (set_max_nreg(48, 0): setmaxnreg.dec) and the mma role takes them (set_max_nreg(208, 1):
# 128 + (128 - 48) registers, its 128-word accumulator and fragments fit), and the kernel is
# compiled for two blocks per SM (min_blocks 2: __launch_bounds__(256, 2), 128 registers a thread
# at launch).  Every thread runs the statements it ran before, in the same order.
#   UPDATE_GOLDEN=1 sh tests/golden/run_golden.sh tests/golden/ir_ws_role_regs.py
# ENV: TILESCALE_CUDA_ARCH=sm_90a
# ARGS: compile examples/ws_gemm.py --entry ws_matmul_ring -D M=256 -D N=256 -D K=512 --target cuda --dump-after ws_role_regs
