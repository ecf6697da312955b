# Pins the CUDA printed from pass poll_marks' marks (golden ir_poll_marks):
# a volatile load of the flag in the loop, __threadfence() and a volatile
# store for each release store, __threadfence() before each release barrier.
# After an intended change:
#   UPDATE_GOLDEN=1 sh tests/golden/run_golden.sh tests/golden/cuda_poll_marks.py
# ENV: TILESCALE_CUDA_ARCH=sm_80
# ARGS: compile tests/golden/ir_wait_flag.py --entry chain -D n=4 --target cuda --emit cuda
