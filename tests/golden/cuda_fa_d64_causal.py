# Pins the CUDA source generated for one example in a configuration of
# bench/gpu_bench.py, for the H200 (issue 5 F: a change to what the CUDA target prints
# shows here as a diff to read).  After an intended change:
#   UPDATE_GOLDEN=1 sh tests/golden/run_golden.sh tests/golden/cuda_fa_d64_causal.py
# ENV: TILESCALE_CUDA_ARCH=sm_90
# ARGS: compile examples/flash_attention.py --entry flashattn -D batch=1 -D heads=8 -D seq_len=2048 -D dim=64 -D is_causal=True -D block_M=64 -D block_N=64 -D num_stages=1 -D threads=128 --target cuda --emit cuda
