# ARGS: compile tests/run/kernels/gin_signals.py --entry ring -D N=1024 -D BM=256 --target cuda --multinode --dump-after lower_comm
# ENV: TILESCALE_CUDA_ARCH=sm_90
# Adding signals across nodes on CUDA (issue 6 part A): pass lower_comm maps
# the kernel's signal buffer (sig) onto NCCL GIN signals (gin_signal_buffers),
# gives each transport op its GIN form (gin.put / gin.put_values with the
# adding signal on it, gin.signal_add for T.signal_op add and T.atom_add) and
# makes the waits on this rank's words read the GIN signal too where the
# world spans nodes at run time (`if ranks_per_node >= num_ranks`).
