# Pins the CUDA source of the warp primitives (tests/run/warp_prims.py,
# issue 6): T.shfl_* as __shfl_*_sync with TileLang's width and mask,
# votes as __ballot_sync, T.warp_reduce_* as a butterfly of __shfl_xor_sync
# (offsets 16 .. 1, own op other: the order pass warp_c reproduces on the
# C target), T.get_lane_idx as the flat thread index % 32.  After an
# intended change:
#   UPDATE_GOLDEN=1 sh tests/golden/run_golden.sh tests/golden/cuda_warp_prims.py
# ENV: TILESCALE_CUDA_ARCH=sm_90
# ARGS: compile tests/run/warp_prims.py --entry warp_prims -D B=2 -D TY=4 --target cuda --emit cuda
