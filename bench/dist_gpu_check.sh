#!/bin/sh
# GPU check of the distributed layer (issue 6): the `local` backend, N ranks
# on GPU 0 (a stream each), every distributed example against its reference
# (computed on the CPU from all ranks' inputs), N = 2 and 4; then misuse
# (each must be a clear error, none a hang) and the co-residency refusal.
# Prints one line per case and a summary; exit status 1 if anything failed.
#   sh bench/dist_gpu_check.sh [./build/tilescale]
# ONLY=REGEX runs only the cases whose name matches (grep -E).
tool="${1:-./build/tilescale}"
d=examples/distributed
c=$d/collectives.py
b=tests/run/dist_bad.py
pass=0
fail=0
skip() { [ -n "${ONLY:-}" ] && ! echo "$1" | grep -qE "$ONLY"; }
ok() {
  name="$1"; shift
  skip "$name" && return 0
  out=$(timeout 300 "$tool" run "$@" --target cuda --timeout 20 2>&1)
  rc=$?
  if [ $rc -eq 0 ] && echo "$out" | grep -q '^PASS$'; then
    pass=$((pass + 1)); echo "PASS  $name"
  else
    fail=$((fail + 1)); echo "FAIL  $name (rc $rc)"; echo "$out" | grep -v ' ok$' | tail -8 | sed 's/^/      /'
  fi
}
err() {
  name="$1"; want="$2"; shift 2
  skip "$name" && return 0
  out=$(timeout 300 "$tool" run "$@" --target cuda 2>&1)
  rc=$?
  if [ $rc -ne 0 ] && [ $rc -ne 124 ] && echo "$out" | grep -qF "$want"; then
    pass=$((pass + 1)); echo "PASS  $name"
  else
    fail=$((fail + 1)); echo "FAIL  $name (rc $rc, wanted '$want')"; echo "$out" | tail -6 | sed 's/^/      /'
  fi
}
for n in 2 4; do
  ok "put_block x$n" $d/put_block.py --entry kernel_ --ranks $n -D M=65536 -D num_rank=$n -D block_M=4096 -D threads=128 --check-against put_block_ref
  ok "allgather x$n" $d/allgather.py --entry allgather --ranks $n -D PE_num=$n -D M=$((n * 64)) -D N=256 --check-against allgather_ref
  ok "all_to_all x$n" $d/all_to_all.py --entry all_to_all --ranks $n -D P=$n -D chunk=16 -D N=128 --check-against all_to_all_ref
  ok "allreduce (signals) x$n" $d/allreduce.py --entry allreduce --ranks $n -D P=$n -D N=4000 --in round=1 --check-against allreduce_ref
  ok "ag_gemm x$n" $d/ag_gemm.py --entry ag_gemm --ranks $n -D P=$n -D M=64 -D N=128 -D K=64 --in round=1 --check-against ag_gemm_ref
  ok "T.allreduce x$n" $c --entry allreduce --ranks $n -D rows=24 -D cols=40 --check-against allreduce_ref
  ok "T.allgather x$n" $c --entry allgather --ranks $n -D rows=6 -D cols=10 -D P=$n --check-against allgather_ref
  ok "T.reduce_scatter x$n" $c --entry reduce_scatter --ranks $n -D rows=5 -D cols=12 -D P=$n --check-against reduce_scatter_ref
  ok "T.all_to_all x$n" $c --entry all_to_all --ranks $n -D chunk=3 -D cols=7 -D P=$n --check-against all_to_all_ref
  ok "T.Scale shift x$n" $c --entry shift --ranks $n -D rows=32 -D cols=16 --check-against shift_ref
  ok "pre-attention a2a x$n" $d/seq_parallel_a2a.py --entry pre_attn_a2a --ranks $n -D P=$n -D B=2 -D H=8 -D S=64 -D D=64 --check-against pre_attn_a2a_ref
  ok "post-attention a2a x$n" $d/seq_parallel_a2a.py --entry post_attn_a2a --ranks $n -D P=$n -D B=2 -D H=8 -D S=64 -D D=64 --check-against post_attn_a2a_ref
  ok "TP GEMM + allreduce x$n" $d/tp_gemm.py --entry gemm_allreduce --ranks $n -D M=64 -D N=64 -D KP=64 --check-against gemm_allreduce_ref
  ok "views: AG-GEMM by pulling x$n" $d/views.py --entry ag_gemm_views --ranks $n -D M=64 -D N=64 -D K=64 -D P=$n --check-against ag_gemm_views_ref
  ok "views: TP GEMM + allreduce x$n" $d/views.py --entry tp_gemm_views --ranks $n -D M=64 -D N=64 -D KP=64 --check-against tp_gemm_views_ref
  ok "GEMM-RS x$n" $d/tp_gemm.py --entry gemm_rs --ranks $n -D M=64 -D N=64 -D KP=64 -D P=$n --check-against gemm_rs_ref
  ok "MoE dispatch + experts + combine x$n" $d/moe.py --entry moe --ranks $n -D P=$n -D TOK=64 -D H=64 -D E=2 -D K=2 --check-against moe_ref
  ok "per-thread primitives (T.Parallel) x$n" $d/per_thread.py --entry per_thread --ranks $n -D P=$n -D N=3000 --check-against per_thread_ref
  ok "thread-level code (T.get_thread_binding, 2-D block, warp put) x$n" $d/thread_level.py --entry thread_level --ranks $n -D N=4096 --check-against thread_level_ref
  ok "T.atom_add's value in uniform code, to every thread x$n" $d/thread_level.py --entry atom_broadcast --ranks $n --check-against atom_broadcast_ref
  ok "MoE dispatch/combine, DeepEP style (warps per peer) x$n" $d/moe_deepep.py --entry moe_deepep --ranks $n -D P=$n -D TOK=256 -D H=128 -D E=2 -D K=2 --check-against moe_deepep_ref
  ok "T.Scale(\"warp\") copies and fills over the 32 lanes x$n" $d/warp_tiles.py --entry warp_tiles --ranks $n -D rows=2000 -D cols=72 --check-against warp_tiles_ref
  ok "GEMM-RS overlapped (epilogue push + per-tile signals) x$n" $d/tp_gemm.py --entry gemm_rs_overlap --ranks $n -D M=$((128 * n)) -D N=128 -D KP=64 -D P=$n --in round=1 --check-against gemm_rs_overlap_ref
done
ok "Cannon GEMM 2x2 ranks" $d/cannon.py --entry cannon --ranks 4 -D q=2 -D BM=128 -D BN=128 -D BK=128 --check-against cannon_ref
ok "warp primitives, a range per warp (T.get_thread_binding) x2" $d/warp_prims.py --entry warp_prims --ranks 2 -D M=65536 -D block_M=4096 -D threads=128 --check-against warp_prims_ref
ok "SUMMA GEMM 2x2 ranks" $d/summa.py --entry summa --ranks 4 -D q=2 -D BM=128 -D BN=128 -D BK=128 --check-against summa_ref
ok "tile copies x4" $d/tile_copy.py --entry tile_copy --ranks 4 -D M=40 -D N=48 -D BM=16 -D BN=16 --check-against tile_copy_ref
# warp primitives (shuffles, votes, warp reductions; no world): the same serial reference as on the C target
if ! skip "warp primitives"; then
  for ty in 4 1; do
    out=$(timeout 120 "$tool" run tests/run/warp_prims.py --entry warp_prims -D B=2 -D TY=$ty --target cuda --check-against warp_prims_ref 2>&1)
    if [ $? -eq 0 ] && echo "$out" | grep -q '^PASS$'; then
      pass=$((pass + 1)); echo "PASS  warp primitives (T.shfl_*, votes, T.warp_reduce_*), threads (32, $ty)"
    else
      fail=$((fail + 1)); echo "FAIL  warp primitives, threads (32, $ty)"; echo "$out" | grep -v ' ok$' | tail -8 | sed 's/^/      /'
    fi
  done
  out=$(timeout 120 "$tool" run tests/run/warp_prims.py --entry warp_loops --target cuda --check-against warp_loops_ref 2>&1)
  if [ $? -eq 0 ] && echo "$out" | grep -q '^PASS$'; then
    pass=$((pass + 1)); echo "PASS  warp primitives: per-warp channel loop, T.warp_reduce_sum, T.shuffle_elect"
  else
    fail=$((fail + 1)); echo "FAIL  warp primitives: per-warp channel loop"; echo "$out" | grep -v ' ok$' | tail -8 | sed 's/^/      /'
  fi
fi
err "wait nobody answers" "T.wait: timed out after 2000 ms waiting for element 1" $b --entry lonely_wait -D P=2 --ranks 2 --timeout 2
err "barrier_all skipped by a rank" "T.barrier_all: timed out" $b --entry partial_barrier -D P=3 --ranks 3 --timeout 2
err "barrier_blocks skipped by a rank" "T.barrier_blocks: timed out" $b --entry partial_barrier_blocks -D P=4 --ranks 4 --timeout 2
err "peer out of range" "is out of range (3 ranks)" $b --entry bad_peer -D P=3 --ranks 3
err "get past the end" "are outside it" $b --entry get_past_end -D N=64 --ranks 2
err "blocks cannot be co-resident" "must be resident at once on GPU 0" $c --entry allreduce --ranks 8 -D rows=24 -D cols=40 -D blocks=100000
echo "dist_gpu_check: $pass passed, $fail failed"
[ $fail -eq 0 ]
