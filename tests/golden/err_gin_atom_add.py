# ARGS: compile tests/run/kernels/gin_refusals.py --entry kern -D P=4 -D what=atom_add --target cuda --multinode --dump-after lower_comm
# ENV: TILESCALE_CUDA_ARCH=sm_90
# NCCL's GIN lacks atomic adds to heap words: pass lower_comm refuses it when
# compiling for several nodes on CUDA (the kernels and why:
# tests/run/kernels/gin_refusals.py).
