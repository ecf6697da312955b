#!/bin/sh
# GPU check of issue 6's warp-scale forms and memory model (session 6,
# helper warpc), on the `local` backend: N ranks on GPU 0 (a stream each),
# N = 2 and 4, each kernel against its reference computed on the CPU from
# all ranks' inputs (the same references the C target passes in CI,
# tests/run/dist_examples.sh):
#   - mem_model.py: every semantics and scope of T.st / T.ld / T.atom_add
#     (weak, volatile, relaxed.S, release.S / acquire.S; 1-, 2-, 8-byte
#     elements), a release flag and an acquire wait per thread;
#   - warp_tiles.py: T.Scale("warp") copies and fills dealt to the 32 lanes
#     (flattened tiles: cols=12, 72; with a partial last round: cols=33), the
#     remote copy made by the lanes together (T.put_warp's meaning);
#   - warp_loops: the same inside serial loops and warp-uniform branches;
#   - wg_tiles: T.Scale("warpgroup") as roles of 128 threads, T.view of block
#     tiles, a remote copy spread over the warpgroup's threads; put_in_roles;
#   - examples/scale_gemm.py: a warp's and a warpgroup's own T.gemm;
#   - the examples whose CUDA code the memory-model change touched (waits,
#     signals, fences: allreduce with signals, per_thread, moe_deepep,
#     thread_level, GEMM-RS overlapped).
# Then compute-sanitizer racecheck (shared-memory hazards between the lanes
# and warps: the __syncwarp-only orderings insert_sync now accepts) and
# memcheck on one rank of the warp kernels, and synccheck on warp_loops.
# Prints one line per case and a summary; exit status 1 if anything failed;
# without a GPU it says so and exits 77.
#   sh bench/warpc_gpu_check.sh [./build/tilescale]
# ONLY=REGEX runs only the cases whose name matches (grep -E).
tool="${1:-./build/tilescale}"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "warpc_gpu_check: no GPU here (nvidia-smi): skipped"
  exit 77
fi
d=examples/distributed
w=$d/warp_tiles.py
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
# compute-sanitizer on a one-rank run (no world: the local rank only; the
# warp kernels' remote copies then go to rank 0 itself)
san() {
  t="$1"; name="$2"; shift 2
  skip "$name" && return 0
  if ! command -v compute-sanitizer >/dev/null 2>&1; then echo "SKIP  $t $name (no compute-sanitizer)"; return 0; fi
  out=$(timeout 600 compute-sanitizer --tool "$t" --error-exitcode 9 "$tool" run "$@" --target cuda --seed 3 2>&1)
  rc=$?
  if [ $rc -eq 0 ] && echo "$out" | grep -q 'ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards'; then
    pass=$((pass + 1)); echo "PASS  $t $name"
  else
    fail=$((fail + 1)); echo "FAIL  $t $name (rc $rc)"; echo "$out" | grep -E 'SUMMARY|Error|hazard' | head -8 | sed 's/^/      /'
  fi
}
for n in 2 4; do
  ok "memory model: every T.st/T.ld/T.atom_add semantics and scope x$n" $d/mem_model.py --entry mem_model --ranks $n -D P=$n -D N=3000 --check-against mem_model_ref
  ok "T.Scale(warp) copies, flattened 8x12 tiles x$n" $w --entry warp_tiles --ranks $n -D rows=2000 -D cols=12 --check-against warp_tiles_ref
  ok "T.Scale(warp) copies, flattened 8x72 tiles x$n" $w --entry warp_tiles --ranks $n -D rows=2000 -D cols=72 --check-against warp_tiles_ref
  ok "T.Scale(warp) copies, partial last round (cols 33) x$n" $w --entry warp_tiles --ranks $n -D rows=2000 -D cols=33 --check-against warp_tiles_ref
  ok "T.Scale(warp) copies in loops and branches x$n" $w --entry warp_loops --ranks $n -D rows=2000 -D cols=24 --check-against warp_loops_ref
  ok "T.Scale(warp) copies in loops and branches, cols 40 x$n" $w --entry warp_loops --ranks $n -D rows=1000 -D cols=40 --check-against warp_loops_ref
  ok "put/get inside T.ws roles (spread over the role's threads) x$n" $d/put_block.py --entry put_in_roles --ranks $n -D N=100000 --check-against put_in_roles_ref
  ok "T.Scale(warpgroup): roles, T.view of block tiles, remote copy x$n" $w --entry wg_tiles --ranks $n -D rows=2048 -D cols=48 --check-against wg_tiles_ref
  ok "allreduce with signals (release/acquire) x$n" $d/allreduce.py --entry allreduce --ranks $n -D P=$n -D N=4000 --in round=1 --check-against allreduce_ref
  ok "per-thread primitives x$n" $d/per_thread.py --entry per_thread --ranks $n -D P=$n -D N=3000 --check-against per_thread_ref
  ok "thread-level code, warp put, signal add x$n" $d/thread_level.py --entry thread_level --ranks $n -D N=4096 --check-against thread_level_ref
  ok "MoE DeepEP style (fences, flags) x$n" $d/moe_deepep.py --entry moe_deepep --ranks $n -D P=$n -D TOK=256 -D H=128 -D E=2 -D K=2 --check-against moe_deepep_ref
  ok "GEMM-RS overlapped (per-tile signals) x$n" $d/tp_gemm.py --entry gemm_rs_overlap --ranks $n -D M=$((128 * n)) -D N=128 -D KP=64 -D P=$n --in round=1 --check-against gemm_rs_overlap_ref
done
san racecheck "warp_tiles cols 12" $w --entry warp_tiles -D rows=200 -D cols=12
san racecheck "warp_tiles cols 33" $w --entry warp_tiles -D rows=200 -D cols=33
san racecheck "warp_loops cols 24" $w --entry warp_loops -D rows=200 -D cols=24
san memcheck "warp_loops cols 24" $w --entry warp_loops -D rows=200 -D cols=24
san synccheck "warp_loops cols 24" $w --entry warp_loops -D rows=200 -D cols=24
# a warp's and a warpgroup's own T.gemm (no world): mma.sync on each unit's fragment
for e in warp_gemm wg_gemm; do
  if ! skip "$e"; then
    out=$(timeout 120 "$tool" run examples/scale_gemm.py --entry $e --target cuda --check-against ${e}_ref 2>&1)
    if [ $? -eq 0 ] && echo "$out" | grep -q '^PASS$'; then pass=$((pass + 1)); echo "PASS  $e (examples/scale_gemm.py)"
    else fail=$((fail + 1)); echo "FAIL  $e"; echo "$out" | grep -v ' ok$' | tail -8 | sed 's/^/      /'; fi
  fi
done
san racecheck "warp_gemm" examples/scale_gemm.py --entry warp_gemm
san racecheck "wg_gemm" examples/scale_gemm.py --entry wg_gemm
san racecheck "wg_tiles" $w --entry wg_tiles -D rows=256 -D cols=48
san racecheck "mem_model" $d/mem_model.py --entry mem_model -D P=1 -D N=300
echo "warpc_gpu_check: $pass passed, $fail failed"
[ $fail -eq 0 ]
