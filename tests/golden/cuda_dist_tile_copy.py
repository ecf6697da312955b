# Pins the CUDA source of remote tile copies (examples/distributed/tile_copy.py,
# issue 6): whole tiles move as ranges of 16-byte vectors by every thread of the
# block (one range per row of a tile narrower than its tensor), tiles hanging
# over the tensor's end element by element.  After an intended change:
#   UPDATE_GOLDEN=1 sh tests/golden/run_golden.sh tests/golden/cuda_dist_tile_copy.py
# ENV: TILESCALE_CUDA_ARCH=sm_90
# ARGS: compile examples/distributed/tile_copy.py --entry tile_copy -D M=40 -D N=48 -D BM=16 -D BN=16 --target cuda --emit cuda
