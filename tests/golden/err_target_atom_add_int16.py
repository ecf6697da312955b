# ARGS: compile tests/run/kernels/comm_refusals.py --entry kern -D P=2 -D what=atom_add_int16 --target cuda --emit cuda
# ENV: TILESCALE_CUDA_ARCH=sm_90
# T.atom_add on an int16 word on CUDA (whose atomics are on int32/64,
# uint32/64, float32/64): refused by pass verify_lowered
# (src/pass/verify_target.c) at the call, before any CUDA is printed
# (session 11; comm_cuda.c refused it while printing).  The kernel:
# tests/run/kernels/comm_refusals.py.
