# ARGS: compile tests/run/kernels/comm_refusals.py --entry swz -D P=4 --target cuda --dump-after verify_lowered
# ENV: TILESCALE_CUDA_ARCH=sm_90
# A put of a tensor-core operand tile, which layout_inference swizzled:
# a range needs plain row-major addresses; refused by verify_lowered (the
# CUDA printer did it before issue 5 part 0).  The kernel:
# tests/run/kernels/comm_refusals.py (swz).
