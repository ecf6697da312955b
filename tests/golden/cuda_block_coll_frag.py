# Pins the CUDA source of a collective between the blocks of a grid on a
# fragment tile (examples/block_coll.py's allreduce, 4 blocks, a 16 x 32
# float fragment, scope=fragment): a cooperative kernel (IrKernel.cooperative)
# that is not may_block, so its stores to global memory are plain (no
# fence, no volatile: the grid barrier ts_grid_sync orders them) and layout
# inference lays the fragment out in registers (vectorized copies).
# After an intended change:
#   UPDATE_GOLDEN=1 sh tests/golden/run_golden.sh tests/golden/cuda_block_coll_frag.py
# ENV: TILESCALE_CUDA_ARCH=sm_90
# ARGS: compile examples/block_coll.py --entry allreduce -D scope=fragment -D R=16 -D C=32 --target cuda --emit cuda
