# ARGS: compile tests/run/kernels/gin_refusals.py --entry kern -D P=4 -D what=sig_store --target cuda --multinode --dump-after lower_comm
# ENV: TILESCALE_CUDA_ARCH=sm_90
# A plain store to a signal buffer would leave its GIN signal's growth in place: refused,
# naming the reset (T.signal_op SET on this rank's own word).
# The kernels: tests/run/kernels/gin_refusals.py.
