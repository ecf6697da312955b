# ARGS: compile tests/run/kernels/gemm_rs_fullcol.py --entry decode_fullcol -D B=2 -D H=32 -D S=64 -D D=64 -D direct=1 --target cuda --dump-after layout_inference
# ENV: TILESCALE_CUDA_ARCH=sm_90
# A register A operand under FullCol warps (TileLang's persistent MLA decode):
# the second gemm's p (16 x 32, float16) on a 1 x 4 warp grid takes the layout
# MMA_A: the accumulator layout of 16 x 32 on one warp column, replicated over
# the 4 warp columns (thread = (i0 // 16 * 4 + r) * 32 + lane, replicate=4),
# so every warp holds all of p; the scores s keep MMA_C over the 1 x 4 grid,
# and T.copy(s, p) (direct=1) goes through a shared re-layout (p_relayout).
# tests/unit/test_interp_examples.c runs the kernel thread by thread.
