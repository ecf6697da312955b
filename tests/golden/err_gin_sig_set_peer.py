# ARGS: compile tests/run/kernels/gin_refusals.py --entry kern -D P=4 -D what=sig_set_peer --target cuda --multinode --dump-after lower_comm
# ENV: TILESCALE_CUDA_ARCH=sm_90
# sig is a signal buffer (other nodes add to it through GIN signals): a SET of a
# peer's word could not reset that peer's signal shadow, so only a rank's own word is set.
# The kernels: tests/run/kernels/gin_refusals.py.
