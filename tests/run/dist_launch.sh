#!/bin/sh
# `tilescale launch` and the `proc` backend (a process per rank, heaps in
# shared memory, C target): examples on 2 and 4 processes against their
# references (each rank checks its own slice), then the launcher's and the
# rendezvous' failure paths — a rank that exits or is killed, a failure in
# one process ending another's wait, a peer that never comes, heaps of
# different sizes, a bad environment, the job timeout — each a clear
# message and a non-zero exit, fast, never a hang.
. tests/run/lib.sh
d=examples/distributed
c=$d/collectives.py
L="$tool launch"
now() { date +%s; }

# every one of the N ranks must print PASS
launched() {
  n=$1; shift
  out=$(timeout 120 $L -n $n -- tilescale run "$@" 2>&1)
  rc=$?
  echo "$out"
  got=$(echo "$out" | grep -c '^PASS$')
  if [ $rc -ne 0 ] || [ "$got" != "$n" ]; then
    echo "FAILED (rc $rc, $got of $n PASS): launch -n $n -- tilescale run $*"
    exit 1
  fi
}
for n in 2 4; do
  launched $n $d/allgather.py --entry allgather -D PE_num=$n -D M=$((n * 8)) -D N=48 --check-against allgather_ref
  launched $n $d/allreduce.py --entry allreduce -D P=$n -D N=200 --in round=1 --check-against allreduce_ref
  launched $n $c --entry allreduce --ranks $n -D rows=24 -D cols=40 --check-against allreduce_ref
  launched $n $c --entry all_to_all -D chunk=3 -D cols=7 -D P=$n --check-against all_to_all_ref
done
launched 3 $d/moe.py --entry moe -D P=3 -D TOK=16 -D H=32 -D E=2 -D K=2 --check-against moe_ref
launched 2 $d/ag_gemm.py --entry ag_gemm -D P=2 -D M=64 -D N=96 -D K=64 --in round=1 --check-against ag_gemm_ref
launched 4 $d/put_block.py --entry kernel_ -D M=4096 -D num_rank=4 -D block_M=512 -D threads=128 --check-against put_block_ref

# expect_fail WANT MAX_SECONDS CMD...: non-zero, WANT in the output, within MAX_SECONDS
expect_fail() {
  want="$1"; max="$2"; shift 2
  t0=$(now)
  out=$(timeout -s KILL 60 "$@" 2>&1)
  rc=$?
  t=$(( $(now) - t0 ))
  echo "$out"
  if [ $rc -eq 0 ] || ! echo "$out" | grep -qF -- "$want" || [ $t -gt $max ]; then
    echo "FAILED (rc $rc, ${t} s, wanted '$want' within $max s): $*"
    exit 1
  fi
}
f=tests/run/dist_bad.py
# a rank that exits: the launcher names it, stops the others, passes its status on
expect_fail "rank 1 (pid" 30 $L -n 3 -- sh -c 'if [ "$TILESCALE_RANK" = 1 ]; then exit 3; fi; sleep 50'
out=$($L -n 2 -- sh -c 'if [ "$TILESCALE_RANK" = 1 ]; then exit 3; fi; sleep 50' 2>&1)
[ $? -eq 3 ] || { echo "FAILED: the launcher must exit with the failed rank's status 3"; exit 1; }
expect_fail "was killed by signal 9" 30 $L -n 2 -- sh -c 'if [ "$TILESCALE_RANK" = 0 ]; then kill -9 $$; fi; sleep 50'
expect_fail "cannot run 'no-such-program-here'" 30 $L -n 2 -- no-such-program-here
# the environment each rank gets
out=$($L -n 3 -- sh -c 'echo "env $TILESCALE_RANK/$TILESCALE_WORLD_SIZE $RANK/$WORLD_SIZE $LOCAL_RANK seed=$TILESCALE_SEED dir=$TILESCALE_RDZV"' 2>&1)
echo "$out"
for r in 0 1 2; do
  echo "$out" | grep -q "^env $r/3 $r/3 $r seed=[0-9]" || { echo "FAILED: rank $r's environment"; exit 1; }
done
[ "$(echo "$out" | sed -n 's/.*seed=\([0-9]*\).*/\1/p' | sort -u | wc -l)" = 1 ] || { echo "FAILED: one seed for all ranks"; exit 1; }
dir=$(echo "$out" | sed -n 's/.*dir=//p' | head -1)
[ -n "$dir" ] && [ ! -e "$dir" ] || { echo "FAILED: the rendezvous directory $dir must be removed"; exit 1; }
# the job timeout
expect_fail "timed out after 1 s; stopping ranks 0 1" 30 $L -n 2 --timeout 1 -- sleep 50
# a failure in one process ends the other's wait long before its 30 s timeout
expect_fail "T.st: peer rank 3 is out of range (2 ranks) for 'sig'" 25 \
  $L -n 2 -- tilescale run $f --entry fail_while_waiting -D P=2 --timeout 60
# a wait nobody answers: the same message as on sim ranks, from every process
expect_fail "rank 0: T.wait: timed out after 300 ms waiting for sig[element 1] (byte 260 of rank 0's heap) to be == 1; it is 0" 30 \
  $L -n 2 -- tilescale run $f --entry lonely_wait -D P=2 --timeout 0.3
expect_fail "T.barrier_all: timed out after 300 ms: 4 of the 6 blocks of all ranks arrived" 30 \
  $L -n 3 -- tilescale run $f --entry partial_barrier -D P=3 --timeout 0.3
# --ranks against the launcher's world size
expect_fail "--ranks 3, but the launcher started a world of 2 processes" 30 \
  $L -n 2 -- tilescale run $d/allgather.py --entry allgather --ranks 3 -D PE_num=2 -D M=16 -D N=48

# without the launcher: a bad environment, a peer that never comes, heaps of different sizes
ag="$d/allgather.py --entry allgather -D PE_num=2 -D M=16 -D N=48"
rz=$(mktemp -d)
expect_fail "launcher environment: rank '5' is not a number in 0..1 (world size 2)" 30 \
  env TILESCALE_WORLD_SIZE=2 TILESCALE_RANK=5 TILESCALE_RDZV=$rz $tool run $ag
expect_fail "launcher environment: world size 'two' is not a number" 30 \
  env TILESCALE_WORLD_SIZE=two TILESCALE_RANK=0 TILESCALE_RDZV=$rz $tool run $ag
expect_fail "launcher environment: no rendezvous" 30 \
  env -u MASTER_PORT -u TILESCALE_MASTER_PORT -u TILESCALE_RDZV TILESCALE_WORLD_SIZE=2 TILESCALE_RANK=1 $tool run $ag
expect_fail "rendezvous: directory $rz/none does not exist" 30 \
  env TILESCALE_WORLD_SIZE=2 TILESCALE_RANK=1 TILESCALE_RDZV=$rz/none $tool run $ag
expect_fail "rank 0: joining the world: timed out after 1.0 s waiting for rank 1 (never joined) of 2" 30 \
  env TILESCALE_RDZV_TIMEOUT=1 TILESCALE_WORLD_SIZE=2 TILESCALE_RANK=0 TILESCALE_RDZV=$rz $tool run $ag
[ -z "$(ls $rz)" ] || { echo "FAILED: a failed rank must leave nothing behind in $rz: $(ls $rz)"; exit 1; }
env TILESCALE_WORLD_SIZE=2 TILESCALE_RANK=1 TILESCALE_RDZV=$rz $tool run $ag --heap 2097152 --timeout 10 >$rz.1 2>&1 &
expect_fail "has a host heap of 2097152 bytes but rank 0 has a host heap of 1048576 bytes" 30 env TILESCALE_WORLD_SIZE=2 TILESCALE_RANK=0 TILESCALE_RDZV=$rz $tool run $ag --heap 1048576 --timeout 10
wait
cat $rz.1
grep -qF "has a host heap of 1048576 bytes but rank 1 has a host heap of 2097152 bytes" $rz.1 || { echo "FAILED: rank 1 must name the heap sizes"; exit 1; }
# a peer killed during the launch (no launcher to stop the others): rank 0's
# 60 s wait ends at once, naming it, and the directory is left clean
t0=$(now)
env TILESCALE_WORLD_SIZE=2 TILESCALE_RANK=0 TILESCALE_RDZV=$rz $tool run $f --entry lonely_wait -D P=2 --timeout 60 >$rz.0 2>&1 &
p0=$!
env TILESCALE_WORLD_SIZE=2 TILESCALE_RANK=1 TILESCALE_RDZV=$rz $tool run $f --entry lonely_wait -D P=2 --timeout 60 >$rz.1 2>&1 &
p1=$!
for i in $(seq 300); do grep -q "rank 1 of 2" $rz.1 && break; sleep 0.1; done
sleep 0.3
kill -9 $p1
wait $p0
rc=$?
wait $p1 2>/dev/null
cat $rz.0
if [ $rc -eq 0 ] || ! grep -qF "rank 0: rank 1 (pid $p1) exited during the launch" $rz.0 || [ $(( $(now) - t0 )) -gt 40 ]; then
  echo "FAILED: a peer killed during the launch must end rank 0's wait, naming it"; exit 1
fi
[ -z "$(ls $rz)" ] || { echo "FAILED: $rz must be left empty: $(ls $rz)"; exit 1; }
# MASTER_PORT instead of a directory (torchrun's environment: a plain run takes --ranks), both ranks by hand
port=$((20000 + $$ % 20000))
env -u TILESCALE_RDZV WORLD_SIZE=2 RANK=1 MASTER_PORT=$port TILESCALE_SEED=7 $tool run $ag --ranks 2 --check-against allgather_ref >$rz.1 2>&1 &
out=$(env -u TILESCALE_RDZV WORLD_SIZE=2 RANK=0 MASTER_PORT=$port TILESCALE_SEED=7 $tool run $ag --ranks 2 --check-against allgather_ref 2>&1)
wait
echo "$out"; cat $rz.1
echo "$out" | grep -q '^PASS$' && grep -q '^PASS$' $rz.1 || { echo "FAILED: a world from RANK/WORLD_SIZE/MASTER_PORT"; exit 1; }
[ ! -e "${TMPDIR:-/tmp}/tilescale-rdzv-$(id -u)-$port" ] || { echo "FAILED: the MASTER_PORT directory must be removed"; exit 1; }
rm -rf $rz $rz.1
echo "dist_launch: all passed"
