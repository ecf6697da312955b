# ARGS: compile tests/run/kernels/shift_store.py --entry split_store -D M=32 -D N=64 -D K=32 --target cuda --dump-after layout_inference
# ENV: TILESCALE_CUDA_ARCH=sm_90
# A nest reading the accumulator at its variables plus a serial loop's offset
# (acc[i + s * 16, j] under `if i < 16`, TileLang's sparse MLA backward): layout
# inference rewrites it over acc's own indices (r = i + s * 16, the body under
# 0 <= r - s * 16 < 32 and the original guard), so acc's registers drive it:
# no acc_relayout copy of the whole accumulator in shared memory.
