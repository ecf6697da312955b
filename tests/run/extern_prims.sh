#!/bin/sh
# The constructs TileLang's external-source kernels need besides T.call_extern
# (tests/run/kernels/extern_prims.py), on the C target against plain loops:
# T.dp4a (int8 dot products into int32, random bytes: every sign), a per-thread
# loop splitting a flat shared index into rows (insert_sync's flat offsets) and
# T.get_block_binding with T.shift_left / T.shift_right; then each compiles for
# CUDA.  (T.call_extern itself: the goldens *extern*, test_cuda_nvrtc.)
. tests/run/lib.sh
f=tests/run/kernels/extern_prims.py
check $f --entry dp4a_dot --target c --check-against dp4a_naive
check $f --entry dp4a_dot --target c -D M=3 -D N=96 -D K=128 --check-against dp4a_naive
check $f --entry flat_split --target c --check-against flat_split_naive
check $f --entry flat_split --target c -D N=64 -D K=256 -D threads=64 --check-against flat_split_naive
check $f --entry block_bind --target c --check-against block_bind_naive
for e in dp4a_dot flat_split block_bind; do
  "$tool" compile $f --entry $e --target cuda --emit cuda >/dev/null || { echo "FAILED: CUDA source of $e"; exit 1; }
done
echo "extern_prims: ok"
