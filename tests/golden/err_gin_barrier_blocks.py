# ARGS: compile tests/run/kernels/gin_refusals.py --entry kern -D P=4 -D what=barrier_blocks --target cuda --multinode --dump-after lower_comm
# ENV: TILESCALE_CUDA_ARCH=sm_90
# NCCL's GIN lacks block barriers across nodes (T.barrier_blocks): pass lower_comm refuses it when
# compiling for several nodes on CUDA (the kernels and why:
# tests/run/kernels/gin_refusals.py).
