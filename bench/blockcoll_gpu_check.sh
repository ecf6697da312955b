#!/bin/sh
# GPU check of issue 6 part C's collectives between the BLOCKS of a kernel
# and of T.sync_grid() as a grid barrier (session 8, helper blockcoll):
# cooperative kernels (IrKernel.cooperative) launched with
# cuLaunchCooperativeKernel after the residency check, a generation barrier
# on the launch's own grid workspace (session 9: the kernel's last
# parameter, cuMemAllocAsync'ed and zeroed on the launch's stream;
# acq_rel/acquire/release at gpu scope).  Session 9 also: cooperative
# kernels are no longer may_block (plain stores, layout inference).
#  - T.allreduce / T.reduce_scatter / T.allgather / T.all_to_all inside
#    T.Scale("block") (examples/block_coll.py) against the naive *_ref
#    entries (one GPU thread), on 2 .. 132 blocks, sum/max/min,
#    float32/float16, shared/fragment tiles;
#  - T.sync_grid() in a loop: the persistent stencil (block_coll.py) and
#    tests/run/kernels/sync_grid.py's mirror (shared state crossing the
#    barrier) and shift (a value read before it, two barriers per round);
#  - several local ranks sharing the GPU, each launching one cooperative
#    module at once on its own stream (tests/run/kernels/coop_ranks.py
#    `fold`: a block-scale allreduce in a loop; refused before session 9,
#    when the workspace was one per module), against `fold_ref`;
#  - a grid too large to be resident must fail at once with the message
#    ("... blocks must be resident at once ... at most ..."), not hang;
#  - compute-sanitizer memcheck, racecheck and synccheck on some of them;
#  - the barrier's cost: TILESCALE_CUDA_BENCH on the stencil (sweeps x 1
#    grid barrier) at 132 blocks, printed, not judged.
# Prints one line per case and a summary; exit status 1 if anything failed;
# without a GPU it says so and exits 77.
#   sh bench/blockcoll_gpu_check.sh [./build/tilescale]
# ONLY=REGEX runs only the cases whose name matches (grep -E).
tool="${1:-./build/tilescale}"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "blockcoll_gpu_check: no GPU here (nvidia-smi): skipped"
  exit 77
fi
e=examples/block_coll.py
s=tests/run/kernels/sync_grid.py
pass=0
fail=0
skip() { [ -n "${ONLY:-}" ] && ! echo "$1" | grep -qE "$ONLY"; }
ok() {
  name="$1"; f="$2"; shift 2
  skip "$name" && return 0
  out=$(timeout 300 "$tool" run $f "$@" --target cuda 2>&1)
  rc=$?
  if [ $rc -eq 0 ] && echo "$out" | grep -q '^PASS$'; then
    pass=$((pass + 1)); echo "PASS  $name"
  else
    fail=$((fail + 1)); echo "FAIL  $name (rc $rc)"; echo "$out" | grep -v ' ok$' | tail -8 | sed 's/^/      /'
  fi
}
san() {
  t="$1"; name="$2"; f="$3"; shift 3
  skip "$name" && return 0
  if ! command -v compute-sanitizer >/dev/null 2>&1; then echo "SKIP  $t $name (no compute-sanitizer)"; return 0; fi
  out=$(timeout 600 compute-sanitizer --tool "$t" --error-exitcode 9 "$tool" run $f "$@" --target cuda --seed 3 2>&1)
  rc=$?
  if [ $rc -eq 0 ] && echo "$out" | grep -q 'ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards'; then
    pass=$((pass + 1)); echo "PASS  $t $name"
  else
    fail=$((fail + 1)); echo "FAIL  $t $name (rc $rc)"; echo "$out" | grep -E 'SUMMARY|Error|hazard|error' | head -8 | sed 's/^/      /'
  fi
}
for nb in 2 5 8 33 132; do
  for op in sum max min; do
    ok "allreduce nb=$nb $op" $e --entry allreduce -D nb=$nb -D op=$op --check-against allreduce_ref
  done
  ok "reduce_scatter nb=$nb max" $e --entry reduce_scatter -D nb=$nb -D op=max -D R=1 --check-against reduce_scatter_ref
  ok "allgather nb=$nb" $e --entry allgather -D nb=$nb -D R=1 --check-against allgather_ref
  ok "all_to_all nb=$nb" $e --entry all_to_all -D nb=$nb -D chunk=1 --check-against all_to_all_ref
done
ok "allreduce fragment" $e --entry allreduce -D nb=4 -D scope=fragment -D R=16 -D C=32 --check-against allreduce_ref
ok "allreduce float16" $e --entry allreduce -D nb=3 -D dtype=float16 -D R=3 -D C=40 --check-against allreduce_ref
ok "reduce_scatter float16 sum" $e --entry reduce_scatter -D nb=4 -D dtype=float16 --check-against reduce_scatter_ref
ok "allreduce 256 threads nb=64" $e --entry allreduce -D nb=64 -D threads=256 -D R=16 -D C=64 --check-against allreduce_ref
ok "stencil" $e --entry stencil --check-against stencil_ref
ok "stencil nb=132 steps=50" $e --entry stencil -D nb=132 -D per=256 -D steps=50 -D threads=128 --check-against stencil_ref
ok "sync_grid mirror" $s --entry mirror --check-against mirror_naive
ok "sync_grid mirror nb=100" $s --entry mirror -D nblocks=100 -D per=32 --check-against mirror_naive
ok "sync_grid shift" $s --entry shift -D nblocks=132 -D rounds=20 --check-against shift_naive
k=tests/run/kernels/coop_ranks.py
ok "coop fold (one rank)" $k --entry fold --ranks 1 -D nb=64 -D steps=100 --check-against fold_ref
ok "coop fold 2 ranks sharing the GPU" $k --entry fold --ranks 2 -D nb=64 -D steps=300 --check-against fold_ref
ok "coop fold 4 ranks sharing the GPU" $k --entry fold --ranks 4 -D nb=32 -D steps=300 -D R=8 -D C=32 --check-against fold_ref
# a grid that cannot be resident: a clear error at once, never a hang
if ! skip "residency refusal"; then
  out=$(timeout 120 "$tool" run $e --entry stencil -D nb=100000 -D per=2 -D steps=1 -D threads=1024 --target cuda 2>&1)
  rc=$?
  if [ $rc -ne 0 ] && [ $rc -ne 124 ] && echo "$out" | grep -q "blocks must be resident at once"; then
    pass=$((pass + 1)); echo "PASS  residency refusal: $(echo "$out" | grep -o 'a grid of .* at most [0-9]*' | head -1 | cut -c1-160)"
  else
    fail=$((fail + 1)); echo "FAIL  residency refusal (rc $rc)"; echo "$out" | tail -5 | sed 's/^/      /'
  fi
fi
san memcheck "allreduce nb=8" $e --entry allreduce -D nb=8
san racecheck "allreduce nb=8" $e --entry allreduce -D nb=8
san synccheck "allreduce nb=8" $e --entry allreduce -D nb=8
san racecheck "all_to_all fragment-free nb=4" $e --entry all_to_all -D nb=4
san synccheck "reduce_scatter nb=5" $e --entry reduce_scatter -D nb=5
san synccheck "stencil" $e --entry stencil
san racecheck "mirror" $s --entry mirror
san memcheck "shift" $s --entry shift
san memcheck "coop fold" tests/run/kernels/coop_ranks.py --entry fold -D nb=8
if ! skip "bench"; then
  out=$(TILESCALE_CUDA_BENCH=50 timeout 300 "$tool" run $e --entry stencil -D nb=132 -D per=256 -D steps=100 -D threads=128 --target cuda 2>&1)
  echo "TIME  stencil 132 blocks x 100 sweeps (100 grid barriers): $(echo "$out" | grep -o 'cuda bench [0-9.]*' | head -2 | tr '\n' ' ')ms"
fi
echo "blockcoll_gpu_check: $pass passed, $fail failed"
[ $fail -eq 0 ]
