# ARGS: compile tests/run/kernels/gin_refusals.py --entry kern -D P=4 -D what=wait --target cuda --multinode --dump-after lower_comm
# ENV: TILESCALE_CUDA_ARCH=sm_90
# NCCL's GIN lacks waits on another node's memory: pass lower_comm refuses it when
# compiling for several nodes on CUDA (the kernels and why:
# tests/run/kernels/gin_refusals.py).
