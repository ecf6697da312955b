#!/bin/sh
# Warp primitives on the C target (pass warp_c: the warp's lanes run in
# lock-step, each shuffle's, vote's and warp reduction's operands exchanged
# where the statement runs), against a serial reference written from
# CUDA's rules, on random data: one warp per block and four warps in a
# 2-D block (lanes of the flat thread index), several blocks; DeepEP's
# per-warp channel loop with a warp reduction and an elected lane.
. tests/run/lib.sh
f=tests/run/warp_prims.py
check $f --entry warp_prims -D B=2 -D TY=4 --check-against warp_prims_ref
check $f --entry warp_prims -D B=3 -D TY=1 --check-against warp_prims_ref
# a loop whose bounds are each warp's own around T.warp_reduce_sum, T.shuffle_elect
check $f --entry warp_loops --check-against warp_loops_ref
check $f --entry warp_loops -D NCH=9 -D W=2 -D L=33 --check-against warp_loops_ref
# misuse on the C target: clear errors, not wrong values
out=$("$tool" compile $f --entry warp_bad -D case=0 --target c 2>&1)
echo "$out" | grep -q "need whole warps of 32 threads; the block has 48" || { echo "FAILED: $out"; exit 1; }
# a shuffle in a while loop whose condition differs between threads: the
# block's threads run as coroutines there (target/c/threads_c.c)
out=$("$tool" compile $f --entry warp_bad -D case=1 --target c --emit c 2>&1)
echo "$out" | grep -q "ts_a->threads(ts_a, ts_b, 64, tsk_thread)" || { echo "FAILED: $out"; exit 1; }
echo "warp_prims: ok"
