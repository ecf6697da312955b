#!/bin/sh
# GPU check of issue 6's collectives between the units of one block
# (session 6, helper coll): T.allreduce / T.allgather / T.reduce_scatter /
# T.all_to_all inside T.Scale("warp") and T.Scale("warpgroup")
# (examples/scale_coll.py), run with --target cuda against the naive
# *_ref entries (computed on the GPU by one thread: an independent
# reference), every collective x scale, the reductions with sum, max and
# min, float32 and float16, shared and fragment tiles; TileScale's README
# case (warpgroups splitting K, T.allreduce of their accumulators, mma.sync).
# Then compute-sanitizer racecheck and synccheck on a warp and a warpgroup
# form: the units exchange through a shared scratch between two
# `bar.sync 1, threads` reached from different roles' code (a missing or
# misplaced barrier is a shared-memory hazard there).  The collectives are
# one IR op expanded by the pass lower_coll since session 7 (same code).
# Last, T.Scale("warp") copies with a partial last round of lanes
# (tests/run/warp_lanes.py).
# Prints one line per case and a summary; exit status 1 if anything failed;
# without a GPU it says so and exits 77.
#   sh bench/coll_gpu_check.sh [./build/tilescale]
# ONLY=REGEX runs only the cases whose name matches (grep -E).
tool="${1:-./build/tilescale}"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "coll_gpu_check: no GPU here (nvidia-smi): skipped"
  exit 77
fi
e=examples/scale_coll.py
pass=0
fail=0
skip() { [ -n "${ONLY:-}" ] && ! echo "$1" | grep -qE "$ONLY"; }
ok() {
  name="$1"; shift
  skip "$name" && return 0
  out=$(timeout 300 "$tool" run $e "$@" --target cuda 2>&1)
  rc=$?
  if [ $rc -eq 0 ] && echo "$out" | grep -q '^PASS$'; then
    pass=$((pass + 1)); echo "PASS  $name"
  else
    fail=$((fail + 1)); echo "FAIL  $name (rc $rc)"; echo "$out" | grep -v ' ok$' | tail -8 | sed 's/^/      /'
  fi
}
san() {
  t="$1"; name="$2"; shift 2
  skip "$name" && return 0
  if ! command -v compute-sanitizer >/dev/null 2>&1; then echo "SKIP  $t $name (no compute-sanitizer)"; return 0; fi
  out=$(timeout 600 compute-sanitizer --tool "$t" --error-exitcode 9 "$tool" run $e "$@" --target cuda --seed 3 2>&1)
  rc=$?
  if [ $rc -eq 0 ] && echo "$out" | grep -q 'ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards'; then
    pass=$((pass + 1)); echo "PASS  $t $name"
  else
    fail=$((fail + 1)); echo "FAIL  $t $name (rc $rc)"; echo "$out" | grep -E 'SUMMARY|Error|hazard' | head -8 | sed 's/^/      /'
  fi
}
for lv in "warp -D threads=128" "warp -D threads=256" "warpgroup -D threads=256" "warpgroup -D threads=512"; do
  for op in sum max min; do
    ok "allreduce $lv $op" --entry allreduce -D level=$lv -D op=$op --check-against allreduce_ref
    ok "reduce_scatter $lv $op" --entry reduce_scatter -D level=$lv -D op=$op --check-against reduce_scatter_ref
  done
  ok "allgather $lv" --entry allgather -D level=$lv --check-against allgather_ref
  ok "all_to_all $lv" --entry all_to_all -D level=$lv --check-against all_to_all_ref
done
ok "allreduce wg fragment" --entry allreduce -D level=warpgroup -D scope=fragment -D R=16 -D C=32 --check-against allreduce_ref
ok "allreduce warp fragment" --entry allreduce -D level=warp -D scope=fragment -D R=4 -D C=8 --check-against allreduce_ref
ok "allreduce warp float16" --entry allreduce -D level=warp -D dtype=float16 -D R=3 -D C=40 --check-against allreduce_ref
ok "reduce_scatter wg float16 max" --entry reduce_scatter -D level=warpgroup -D dtype=float16 -D op=max --check-against reduce_scatter_ref
ok "all_to_all warp chunk 3" --entry all_to_all -D level=warp -D threads=256 -D chunk=3 -D C=5 --check-against all_to_all_ref
ok "wg_gemm_allreduce (README)" --entry wg_gemm_allreduce --check-against wg_gemm_allreduce_ref
ok "wg_gemm_allreduce 128" --entry wg_gemm_allreduce -D M=128 -D N=64 -D K=128 --check-against wg_gemm_allreduce_ref
san racecheck "allreduce warp" --entry allreduce -D level=warp -D threads=256
san racecheck "allreduce wg fragment" --entry allreduce -D level=warpgroup -D scope=fragment
san racecheck "all_to_all wg" --entry all_to_all -D level=warpgroup -D threads=512
san racecheck "wg_gemm_allreduce" --entry wg_gemm_allreduce
san synccheck "reduce_scatter warp" --entry reduce_scatter -D level=warp
# T.Scale("warp") copies dealt to the lanes over the flattened tile with a
# partial last round (session 7, helper collpass: tiles of 8 x 33, 8 x 5,
# 4 x 7 elements; a loop and a warp-dependent branch), against one-thread
# references, and racecheck / synccheck on them
e=tests/run/warp_lanes.py
for c in 12 33 5; do
  ok "warp lanes 8x$c" --entry lanes -D rows=700 -D cols=$c --check-against lanes_ref
done
ok "warp lanes 4x7" --entry lanes -D rows=300 -D cols=7 -D TM=4 --check-against lanes_ref
for c in 25 7; do
  ok "warp lanes loops 4x$c" --entry lanes_loops -D rows=900 -D cols=$c --check-against lanes_loops_ref
done
san racecheck "warp lanes 8x33" --entry lanes -D rows=70 -D cols=33
san racecheck "warp lanes loops 4x25" --entry lanes_loops -D rows=90 -D cols=25
san synccheck "warp lanes 8x5" --entry lanes -D rows=70 -D cols=5
san synccheck "warp lanes loops 4x7" --entry lanes_loops -D rows=90 -D cols=7
echo "coll_gpu_check: $pass passed, $fail failed"
[ $fail -eq 0 ]
