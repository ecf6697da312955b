# ARGS: compile tests/run/kernels/gin_refusals.py --entry kern -D P=4 -D what=st_release --target cuda --multinode --dump-after lower_comm
# ENV: TILESCALE_CUDA_ARCH=sm_90
# A release store (a flag) to a rank of another node: GIN's putValue is in no
# promised order with the puts before it, so it is refused (plain T.st of data is not).
# The kernels: tests/run/kernels/gin_refusals.py.
