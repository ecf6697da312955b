# ARGS: compile tests/run/kernels/gin_refusals.py --entry kern -D P=4 -D what=atom_add_float --target cuda --multinode --dump-after lower_comm
# ENV: TILESCALE_CUDA_ARCH=sm_90
# GIN's signals add 64-bit integers: T.atom_add of a float to another node is refused.
# The kernels: tests/run/kernels/gin_refusals.py.
