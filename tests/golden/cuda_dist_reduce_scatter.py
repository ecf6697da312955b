# Pins the CUDA source of T.reduce_scatter (examples/distributed/collectives.py,
# issue 6): each tile of whole rows is pulled from every rank as one range of
# 16-byte vectors by the whole block.  After an intended change:
#   UPDATE_GOLDEN=1 sh tests/golden/run_golden.sh tests/golden/cuda_dist_reduce_scatter.py
# ENV: TILESCALE_CUDA_ARCH=sm_90
# ARGS: compile examples/distributed/collectives.py --entry reduce_scatter -D rows=64 -D cols=64 -D P=2 --target cuda --emit cuda
