# ARGS: compile tests/run/kernels/gin_refusals.py --entry kern -D P=4 -D what=put_signal_set --target cuda --multinode --dump-after lower_comm
# ENV: TILESCALE_CUDA_ARCH=sm_90
# A put's SET signal to a rank of another node: refused as T.signal_op SET is
# (it was a putValue after the data, which NCCL does not promise to land after it).
# The kernels: tests/run/kernels/gin_refusals.py.
