# Pins the CUDA source generated for one example in a configuration of
# bench/gpu_bench.py, for the H200 (issue 5 F: a change to what the CUDA target prints
# shows here as a diff to read).  After an intended change:
#   UPDATE_GOLDEN=1 sh tests/golden/run_golden.sh tests/golden/cuda_fa_d128.py
# ENV: TILESCALE_CUDA_ARCH=sm_90
# ARGS: compile examples/flash_attention.py --entry flashattn -D batch=4 -D heads=32 -D seq_len=4096 -D dim=128 -D is_causal=False -D block_M=128 -D block_N=128 -D num_stages=2 -D threads=256 --target cuda --emit cuda
