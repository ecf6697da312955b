# ARGS: compile tests/run/kernels/gin_refusals.py --entry kern -D P=4 -D what=signal_add --target cuda --multinode --dump-after lower_comm
# ENV: TILESCALE_CUDA_ARCH=sm_90
# NCCL's GIN lacks adding signals to heap words (T.signal_op): pass lower_comm refuses it when
# compiling for several nodes on CUDA (the kernels and why:
# tests/run/kernels/gin_refusals.py).
