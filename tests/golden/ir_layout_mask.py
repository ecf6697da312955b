# layout_inference decides FlashAttention's masks per tile (split_select):
# the causal mask nest becomes a block-uniform branch — every element kept
# (bx * 64 - k * 32 >= 31: a plain fill), every element cut (< -63), or
# the diagonal tiles that keep the per-element select (the padding mask of
# a partial last tile is split the same way: test_interp_examples runs both).
# ENV: TILESCALE_CUDA_ARCH=sm_90
# ARGS: compile examples/flash_attention.py --entry flashattn -D batch=1 -D heads=1 -D seq_len=80 -D dim=32 -D is_causal=True -D block_M=64 -D block_N=32 --target cuda --dump-after layout_inference
