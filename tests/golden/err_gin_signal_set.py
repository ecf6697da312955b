# ARGS: compile tests/run/kernels/gin_refusals.py --entry kern -D P=4 -D what=signal_set --target cuda --multinode --dump-after lower_comm
# ENV: TILESCALE_CUDA_ARCH=sm_90
# NCCL's GIN cannot set a signal in order after the data (no SignalSet up to NCCL 2.31;
# a putValue after the data may land first): T.signal_op SET to a rank of another node is refused,
# naming what to use (an adding signal, or T.barrier_all after the data).
# The kernels: tests/run/kernels/gin_refusals.py.
