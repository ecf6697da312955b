# ARGS: compile tests/run/kernels/target_refusals.py --entry local_big --target cuda --emit cuda
# ENV: TILESCALE_CUDA_ARCH=sm_90
# A per-thread buffer of over 2^20 elements on CUDA: refused by pass
# verify_lowered (src/pass/verify_target.c) at its allocation, before any
# CUDA is printed (session 11; the CUDA printer refused it while printing).
# The kernel: tests/run/kernels/target_refusals.py.
