# ARGS: compile tests/run/kernels/comm_refusals.py --entry kern -D P=4 -D what=put_sizes --target c --dump-after lower_tile_ops
# A put moves bytes: float32 into float16 is refused by the op's lowering
# (op/comm.c, at lower_tile_ops, every target; the printers checked it
# each on their own before issue 5 part 0).  The kernel:
# tests/run/kernels/comm_refusals.py.
