# ARGS: compile tests/run/kernels/gin_signals.py --entry reset -D P=4 --target cuda --multinode --dump-after lower_comm
# ENV: TILESCALE_CUDA_ARCH=sm_90
# A set of this rank's own word of a signal buffer (T.signal_op SET with peer
# T.get_rank(), a T.st without a peer) is its reset: where the world spans
# nodes (gin.reset_signal) the GIN signal's shadow takes its growth, then the
# heap word the value; the waits after it read heap word + signal - shadow.
