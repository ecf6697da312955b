# Pins the CUDA source of a collective between the blocks of a grid
# (examples/block_coll.py's allreduce, 4 blocks, T.Scale("block"), issue 6
# part C): a cooperative kernel with the launch's grid workspace (the
# last parameter ts_grid_ws: the barrier's count and generation, then the staging of
# [4, 8, 16] floats), the generation barrier ts_grid_sync (bar.sync; thread
# 0: ld.relaxed of the generation, fence, atom.acq_rel.gpu add; the last
# arriver resets the count and st.release.gpu's the next generation, the
# others spin on ld.acquire.gpu; fence; bar.sync), the block's tile copied
# into its slot, a grid barrier, the fold of the 4 slots, a grid barrier.
# After an intended change:
#   UPDATE_GOLDEN=1 sh tests/golden/run_golden.sh tests/golden/cuda_block_coll.py
# ENV: TILESCALE_CUDA_ARCH=sm_90
# ARGS: compile examples/block_coll.py --entry allreduce --target cuda --emit cuda
