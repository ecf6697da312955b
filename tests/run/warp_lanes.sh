#!/bin/sh
# T.Scale("warp") copies and fills over the flattened tile on the C target,
# against one-thread references on random data: tiles whose element count
# is a multiple of 32 (8 x 12), is not (8 x 33: 8 full rounds and 8 lanes
# of a last one; 8 x 5: one round of 32 and 8; 4 x 7: 28 elements, a
# partial round alone), rows past the tensor's end, and the same in a
# serial loop with a branch that differs between the warps.  The thread
# interpreter runs them too (tests/unit/test_warp_lanes.c), NVRTC compiles
# them (test_comm_nvrtc: examples/distributed/warp_tiles.py).
. tests/run/lib.sh
f=tests/run/warp_lanes.py
for c in 12 33 5; do
  check $f --entry lanes -D rows=70 -D cols=$c --check-against lanes_ref
done
check $f --entry lanes -D rows=30 -D cols=7 -D TM=4 --check-against lanes_ref
for c in 25 7 24; do
  check $f --entry lanes_loops -D rows=90 -D cols=$c --check-against lanes_loops_ref
done
# 8 x 5: one full round of lanes (a loop of one iteration: no back edge for
# insert_sync) then a partial one; every lane reads back only what it wrote,
# so the CUDA code has no block barrier at all
n=$("$tool" compile $f --entry lanes -D rows=70 -D cols=5 --target cuda --emit cuda | grep -c "__syncthreads")
[ "$n" = 0 ] || { echo "FAILED: lanes 8 x 5: $n block barriers in the CUDA code, want none"; exit 1; }
# 8 x 33: eight full rounds then lanes 0-7; no block barrier between a
# copy's rounds and its partial one either (session 9: insert_sync's loop
# exit no longer pairs a round with the previous warp's elements)
n=$("$tool" compile $f --entry lanes -D rows=70 -D cols=33 --target cuda --emit cuda | grep -c "__syncthreads")
[ "$n" = 0 ] || { echo "FAILED: lanes 8 x 33: $n block barriers in the CUDA code, want none"; exit 1; }
# a second copy reading the next warp's slice: one barrier, after the first
# copy's partial round (tests/unit/test_warp_rounds.c runs it without)
r=tests/run/kernels/warp_rounds.py
check $r --entry rotate --check-against rotate_ref
check $r --entry rotate -D rows=96 -D cols=13 --check-against rotate_ref
n=$("$tool" compile $r --entry rotate --target cuda --emit cuda | grep -c "__syncthreads")
[ "$n" = 1 ] || { echo "FAILED: rotate: $n block barriers in the CUDA code, want 1"; exit 1; }
echo "warp_lanes: ok"
