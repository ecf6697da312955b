# ARGS: compile tests/run/kernels/target_refusals.py --entry grid_load --target c --emit c
# A grid extent that reads a buffer on the C target (whose module computes
# the grid on the host before any block runs): refused by pass
# verify_lowered (src/pass/verify_target.c) at the load (session 11; the C
# printer refused it while printing).  The kernel:
# tests/run/kernels/target_refusals.py.
