#!/bin/sh
# Worlds of several nodes, as two or three "nodes" on this machine: one
# `tilescale launch --nnodes K --node-rank I --master-port P` per node, proc
# ranks (C target) meeting over TCP at 127.0.0.1:P where rank 0's process
# serves the rendezvous (src/comm/rdzv_tcp.c).  Checked: the examples
# against their references across nodes (each rank's PASS), the rank ->
# (node, local rank) map every rank prints, a torchrun-style environment
# (GROUP_RANK, LOCAL_WORLD_SIZE) by hand, a failure on one node ending a
# wait on another at once, ranks of different hosts refused with a message
# naming both, a node that never comes, a rank 0 that cannot be reached,
# and the launcher's own checks.  Each a clear message, fast, never a hang.
. tests/run/lib.sh
d=examples/distributed
f=tests/run/dist_bad.py
L="$tool launch"
now() { date +%s; }
port=$((21000 + $$ % 20000))
tmp=$(mktemp -d)
next_port() { port=$((port + 1)); }

# nodes K N PROG...: K launchers of N ranks each, all at once; their outputs in $tmp/node.I
nodes() {
  k=$1; n=$2; shift 2
  next_port
  rm -f $tmp/node.*
  i=1
  while [ $i -lt $k ]; do
    timeout 120 $L -n $n --nnodes $k --node-rank $i --master-port $port -- "$@" >$tmp/node.$i 2>&1 &
    i=$((i + 1))
  done
  timeout 120 $L -n $n --nnodes $k --node-rank 0 --master-port $port -- "$@" >$tmp/node.0 2>&1
  rc0=$?
  wait
  return $rc0
}
all_out() { cat $tmp/node.*; }

# every rank of every node must PASS
passed() {
  k=$1; n=$2; shift 2
  nodes $k $n tilescale run "$@"
  all_out
  got=$(all_out | grep -c '^PASS$')
  if [ "$got" != $((k * n)) ]; then
    echo "FAILED ($got of $((k * n)) PASS): $k nodes x $n: tilescale run $*"
    exit 1
  fi
}
passed 2 2 $d/allgather.py --entry allgather -D PE_num=4 -D M=32 -D N=48 --check-against allgather_ref
# the map: rank = node * ranks per node + local rank, as every rank reports it
for r in 0 1 2 3; do
  all_out | grep -q "rank $r of 4 (proc, a process per rank, pid [0-9]*, node $((r / 2)), local rank $((r % 2)))" ||
    { echo "FAILED: rank $r's node and local rank"; exit 1; }
done
passed 2 2 $d/allreduce.py --entry allreduce -D P=4 -D N=200 --in round=1 --check-against allreduce_ref
passed 3 1 $d/collectives.py --entry all_to_all -D chunk=3 -D cols=7 -D P=3 --check-against all_to_all_ref
passed 2 1 $d/moe.py --entry moe -D P=2 -D TOK=16 -D H=32 -D E=2 -D K=2 --check-against moe_ref

# torchrun's environment by hand (GROUP_RANK is its node index), 2 nodes x 2
next_port
ag="$d/allgather.py --entry allgather -D PE_num=4 -D M=32 -D N=48 --ranks 4 --check-against allgather_ref"
for r in 3 2 1 0; do
  env -u TILESCALE_RDZV RANK=$r WORLD_SIZE=4 LOCAL_RANK=$((r % 2)) LOCAL_WORLD_SIZE=2 GROUP_RANK=$((r / 2)) \
    MASTER_ADDR=localhost MASTER_PORT=$port TILESCALE_SEED=11 timeout 60 $tool run $ag >$tmp/tr.$r 2>&1 &
done
wait
cat $tmp/tr.*
[ "$(cat $tmp/tr.* | grep -c '^PASS$')" = 4 ] || { echo "FAILED: a world of 2 nodes from torchrun's variables"; exit 1; }
grep -q "node 1, local rank 0" $tmp/tr.2 || { echo "FAILED: rank 2 from GROUP_RANK=1"; exit 1; }

# expect WANT MAX_SECONDS: the last nodes run failed with WANT in some node's output, within MAX_SECONDS
expect() {
  if [ $rc -eq 0 ] || ! all_out | grep -qF -- "$1" || [ $(( $(now) - t0 )) -gt $2 ]; then
    all_out
    echo "FAILED (rc $rc, $(( $(now) - t0 )) s, wanted '$1' within $2 s)"
    exit 1
  fi
}
# a failure on node 1 ends node 0's 60 s wait at once
t0=$(now)
nodes 2 1 tilescale run $f --entry fail_while_waiting -D P=2 --timeout 60
rc=$?
expect "T.st: peer rank 3 is out of range (2 ranks) for 'sig'" 30
# a wait nobody answers, across nodes: the sim message
t0=$(now)
nodes 2 1 tilescale run $f --entry lonely_wait -D P=2 --timeout 0.3
rc=$?
expect "rank 0: T.wait: timed out after 300 ms waiting for sig[element 1] (byte 260 of rank 0's heap) to be == 1; it is 0" 30
# a rank of node 1 killed during the launch (no launcher to stop the others):
# its connection drops, and rank 0's 60 s wait ends at once, naming it
next_port
t0=$(now)
tr="--entry lonely_wait -D P=2 --timeout 60 --ranks 2"
env -u TILESCALE_RDZV RANK=0 WORLD_SIZE=2 LOCAL_WORLD_SIZE=1 MASTER_PORT=$port timeout 100 $tool run $f $tr >$tmp/node.0 2>&1 &
p0=$!
env -u TILESCALE_RDZV RANK=1 WORLD_SIZE=2 LOCAL_WORLD_SIZE=1 MASTER_PORT=$port $tool run $f $tr >$tmp/node.1 2>&1 &
p1=$!
for i in $(seq 300); do grep -q "rank 1 of 2" $tmp/node.1 && break; sleep 0.1; done
sleep 0.3
kill -9 $p1
wait $p0
rc=$?
wait $p1 2>/dev/null
expect "rank 0: rank 1 (pid $p1) exited during the launch" 40
# ranks of different hosts: heap files are one host's, refused naming both
next_port
t0=$(now)
TILESCALE_HOST_ID=hostB timeout 60 $L -n 1 --nnodes 2 --node-rank 1 --master-port $port -- tilescale run $d/allgather.py --entry allgather -D PE_num=2 -D M=16 -D N=48 >$tmp/node.1 2>&1 &
TILESCALE_HOST_ID=hostA timeout 60 $L -n 1 --nnodes 2 --node-rank 0 --master-port $port -- tilescale run $d/allgather.py --entry allgather -D PE_num=2 -D M=16 -D N=48 >$tmp/node.0 2>&1
rc=$?
wait
expect "world (proc): rank 0 (node 0, local rank 0, host hostA) cannot reach 1 of the 2 ranks: rank 1 (node 1, local rank 0) runs on host hostB" 30
grep -qF "rank 1 (node 1, local rank 0, host hostB) cannot reach" $tmp/node.1 || { echo "FAILED: node 1 must say it too"; exit 1; }
# a node that never comes: node 0's ranks say so and end (rank 0, the
# server, does not wait for ranks that never joined)
rm -f $tmp/node.*
next_port
t0=$(now)
TILESCALE_RDZV_TIMEOUT=1 timeout 60 $L -n 2 --nnodes 2 --node-rank 0 --master-port $port -- tilescale run $d/allgather.py --entry allgather -D PE_num=4 -D M=32 -D N=48 >$tmp/node.0 2>&1
rc=$?
expect "joining the world: timed out after 1.0 s waiting for ranks 2 (never joined), 3 (never joined) of 4" 30
next_port
t0=$(now)
env -u TILESCALE_RDZV TILESCALE_RDZV_TIMEOUT=1 RANK=0 WORLD_SIZE=2 LOCAL_WORLD_SIZE=1 MASTER_PORT=$port \
  timeout 60 $tool run $d/allgather.py --entry allgather -D PE_num=2 -D M=16 -D N=48 --ranks 2 >$tmp/node.0 2>&1
rc=$?
expect "rank 0: joining the world: timed out after 1.0 s waiting for rank 1 (never joined) of 2" 10
# a rank 0 nobody serves
next_port
t0=$(now)
TILESCALE_RDZV_TIMEOUT=1 timeout 60 $L -n 1 --nnodes 2 --node-rank 1 --master-port $port -- tilescale run $d/allgather.py --entry allgather -D PE_num=2 -D M=16 -D N=48 >$tmp/node.0 2>&1
rc=$?
expect "rank 1: rendezvous: cannot reach rank 0 at 127.0.0.1:$port (MASTER_ADDR:MASTER_PORT) after 1.0 s: Connection refused" 30
# the launcher's and the environment's checks
t0=$(now)
$L -n 2 --nnodes 2 -- true >$tmp/node.0 2>&1; rc=$?
expect "launch: --nnodes 2 needs --node-rank" 5
$L -n 2 --nnodes 2 --node-rank 2 --master-port 1 -- true >$tmp/node.0 2>&1; rc=$?
expect "launch: --node-rank 2 is not below --nnodes 2" 5
env -u MASTER_PORT $L -n 2 --nnodes 2 --node-rank 0 -- true >$tmp/node.0 2>&1; rc=$?
expect "launch: --nnodes 2 needs --master-port" 5
env -u MASTER_PORT -u TILESCALE_MASTER_PORT -u TILESCALE_RDZV RANK=0 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 \
  $tool run $d/allgather.py --entry allgather -D PE_num=4 -D M=32 -D N=48 --ranks 4 >$tmp/node.0 2>&1; rc=$?
expect "a world of 2 nodes meets at MASTER_ADDR:MASTER_PORT" 5
env -u TILESCALE_RDZV RANK=0 WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 NODE_RANK=2 MASTER_PORT=$port \
  $tool run $d/allgather.py --entry allgather -D PE_num=4 -D M=32 -D N=48 --ranks 4 >$tmp/node.0 2>&1; rc=$?
expect "node rank '2' is not a number in 0..1 (2 nodes)" 5
rm -rf $tmp
echo "dist_multinode: all passed"
