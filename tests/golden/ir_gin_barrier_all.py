# ARGS: compile tests/run/kernels/gin_refusals.py --entry kern -D P=4 -D what=barrier_all --target cuda --multinode --dump-after lower_comm
# ENV: TILESCALE_CUDA_ARCH=sm_90
# T.barrier_all compiled for several nodes on CUDA is not refused: pass
# lower_comm branches `if ranks_per_node >= num_ranks:` (one node at run
# time: the load/store barrier) `else:` the transport's (xport: GIN
# signals between the ranks, target/cuda/comm_cuda.c).  The kernel file:
# tests/run/kernels/gin_refusals.py.
