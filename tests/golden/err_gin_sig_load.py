# ARGS: compile tests/run/kernels/gin_refusals.py --entry kern -D P=4 -D what=sig_load --target cuda --multinode --dump-after lower_comm
# ENV: TILESCALE_CUDA_ARCH=sm_90
# A plain load of a signal buffer sees only its heap half: refused, naming the waits.
# The kernels: tests/run/kernels/gin_refusals.py.
