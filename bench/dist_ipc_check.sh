#!/bin/sh
# GPU check of the `ipc` backend (issue 6 A): one process per rank started
# by `tilescale launch -n N`, each rank's heap a device allocation of its
# own process, the peers' heaps opened through CUDA IPC handles.  On a
# one-GPU machine all N processes share GPU 0 (their kernels time-slice
# unless MPS runs); on a node with several GPUs the launcher gives rank r
# GPU r mod count.  Every example against its reference (each rank checks
# its own slice), N = 2 and 4; then a failure in one process that must end
# another process's wait at once (the abort word on rank 0's heap), a wait
# nobody answers, and the cross-process put bandwidth and signal round
# trip beside the local backend's (same kernels, same run).
# Prints one line per case and a summary; exit status 1 if anything failed.
#   sh bench/dist_ipc_check.sh [./build/tilescale]
tool="${1:-./build/tilescale}"
d=examples/distributed
c=$d/collectives.py
b=tests/run/dist_bad.py
pass=0
fail=0
ok() {
  name="$1"; n="$2"; shift 2
  out=$(timeout 300 "$tool" launch -n $n -- tilescale run "$@" --target cuda --timeout 30 2>&1)
  rc=$?
  got=$(echo "$out" | grep -c '^PASS$')
  if [ $rc -eq 0 ] && [ "$got" = "$n" ]; then
    pass=$((pass + 1)); echo "PASS  $name"
  else
    fail=$((fail + 1)); echo "FAIL  $name (rc $rc, $got of $n ranks passed)"; echo "$out" | grep -v ' ok$' | tail -10 | sed 's/^/      /'
  fi
}
err() {
  name="$1"; want="$2"; max="$3"; n="$4"; shift 4
  t0=$(date +%s)
  out=$(timeout 300 "$tool" launch -n $n -- tilescale run "$@" --target cuda 2>&1)
  rc=$?
  t=$(( $(date +%s) - t0 ))
  if [ $rc -ne 0 ] && echo "$out" | grep -qF "$want" && [ $t -le $max ]; then
    pass=$((pass + 1)); echo "PASS  $name (${t} s)"
  else
    fail=$((fail + 1)); echo "FAIL  $name (rc $rc, ${t} s, wanted '$want' within $max s)"; echo "$out" | tail -8 | sed 's/^/      /'
  fi
}
nvidia-smi -L 2>/dev/null | sed 's/^/gpu: /'
for n in 2 4; do
  ok "ipc put_block x$n" $n $d/put_block.py --entry kernel_ -D M=65536 -D num_rank=$n -D block_M=4096 -D threads=128 --check-against put_block_ref
  ok "ipc allgather x$n" $n $d/allgather.py --entry allgather -D PE_num=$n -D M=$((n * 64)) -D N=256 --check-against allgather_ref
  ok "ipc all_to_all x$n" $n $d/all_to_all.py --entry all_to_all -D P=$n -D chunk=16 -D N=128 --check-against all_to_all_ref
  ok "ipc allreduce (signals) x$n" $n $d/allreduce.py --entry allreduce -D P=$n -D N=4000 --in round=1 --check-against allreduce_ref
  ok "ipc ag_gemm x$n" $n $d/ag_gemm.py --entry ag_gemm -D P=$n -D M=64 -D N=128 -D K=64 --in round=1 --check-against ag_gemm_ref
  ok "ipc T.allreduce (barrier_all across processes) x$n" $n $c --entry allreduce -D rows=24 -D cols=40 --check-against allreduce_ref
  ok "ipc T.all_to_all x$n" $n $c --entry all_to_all -D chunk=3 -D cols=7 -D P=$n --check-against all_to_all_ref
  ok "ipc T.Scale shift x$n" $n $c --entry shift -D rows=32 -D cols=16 --check-against shift_ref
  ok "ipc GEMM-RS x$n" $n $d/tp_gemm.py --entry gemm_rs -D M=64 -D N=64 -D KP=64 -D P=$n --check-against gemm_rs_ref
  ok "ipc MoE dispatch + experts + combine x$n" $n $d/moe.py --entry moe -D P=$n -D TOK=64 -D H=64 -D E=2 -D K=2 --check-against moe_ref
  ok "ipc per-thread primitives x$n" $n $d/per_thread.py --entry per_thread -D P=$n -D N=3000 --check-against per_thread_ref
  ok "ipc GEMM-RS overlapped x$n" $n $d/tp_gemm.py --entry gemm_rs_overlap -D M=$((128 * n)) -D N=128 -D KP=64 -D P=$n --in round=1 --check-against gemm_rs_overlap_ref
done
ok "ipc Cannon GEMM 2x2 ranks" 4 $d/cannon.py --entry cannon -D q=2 -D BM=128 -D BN=128 -D BK=128 --check-against cannon_ref
err "ipc: a failure in rank 1 ends rank 0's wait (timeout 60 s)" "peer rank 3 is out of range (2 ranks)" 30 2 \
  $b --entry fail_while_waiting -D P=2 --timeout 60
err "ipc: a wait nobody answers" "T.wait: timed out after 2000 ms waiting for element 1" 60 2 \
  $b --entry lonely_wait -D P=2 --timeout 2
err "ipc: barrier_all skipped by a rank" "T.barrier_all: timed out" 60 3 $b --entry partial_barrier -D P=3 --timeout 2
# speed: the same kernels on ipc (a process per rank) and local (one process) ranks
f=$d/bench_kernels.py
n=16777216
med() { sed -n 's/^bench: median \([0-9.]*\) ms.*/\1/p' | head -1; }
ipc_put=$(timeout 300 "$tool" launch -n 2 -- tilescale run $f --entry put_loop -D n=$n -D chunk=65536 -D reps=20 -D threads=256 --target cuda --timeout 30 --bench 5 2>&1 | med)
loc_put=$(timeout 300 "$tool" run $f --entry put_loop --ranks 2 -D n=$n -D chunk=65536 -D reps=20 -D threads=256 --target cuda --timeout 30 --bench 5 2>&1 | med)
ipc_pp=$(timeout 300 "$tool" launch -n 2 -- tilescale run $f --entry ping_pong -D reps=200 --target cuda --timeout 30 --bench 3 2>&1 | med)
loc_pp=$(timeout 300 "$tool" run $f --entry ping_pong --ranks 2 -D reps=2000 --target cuda --timeout 30 --bench 3 2>&1 | med)
awk -v ip="$ipc_put" -v lp="$loc_put" -v ipp="$ipc_pp" -v lpp="$loc_pp" -v n="$n" 'BEGIN {
  bytes = 2 * 2 * n * 4 * 20
  if (ip > 0) printf "speed: T.put_block 64 MiB x20, 2 ranks: ipc %.3f ms (%.2f TB/s)", ip, bytes / (ip * 1e-3) / 1e12
  if (lp > 0) printf ", local %.3f ms (%.2f TB/s)", lp, bytes / (lp * 1e-3) / 1e12
  printf "\n"
  if (ipp > 0) printf "speed: signal round trip, 2 ranks: ipc %.2f us", ipp * 1e3 / 200
  if (lpp > 0) printf ", local %.2f us", lpp * 1e3 / 2000
  printf " (ipc ranks on one GPU time-slice without MPS)\n"
}'
echo "dist_ipc_check: $pass passed, $fail failed"
[ $fail -eq 0 ]
