# ARGS: compile tests/run/kernels/comm_refusals.py --entry kern -D P=4 -D what=put_sizes --target cuda --dump-after lower_tile_ops
# ENV: TILESCALE_CUDA_ARCH=sm_90
# The same refusal as err_put_sizes on the CUDA target: one message for
# both (op/comm.c; the CUDA printer's said less).
