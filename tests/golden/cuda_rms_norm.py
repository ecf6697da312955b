# Pins the CUDA source generated for one example in a configuration of
# bench/gpu_bench.py, for the H200 (issue 5 F: a change to what the CUDA target prints
# shows here as a diff to read).  After an intended change:
#   UPDATE_GOLDEN=1 sh tests/golden/run_golden.sh tests/golden/cuda_rms_norm.py
# ENV: TILESCALE_CUDA_ARCH=sm_90
# ARGS: compile examples/rms_norm.py --entry rms_norm -D M=8192 -D N=8192 --target cuda --emit cuda
