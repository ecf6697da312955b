#!/bin/sh
# Worlds of several nodes on sim ranks (issue 6 part A, multi-node): every
# distributed example of tests/run/dist_examples.sh that runs on 4 ranks
# again as 2 nodes x 2 ranks (TS_ONLY_RANKS=4: under the sanitizers all
# of them, 2 .. 9 ranks, took 530 s of the 600 s limit; run by hand
# without it: `TILESCALE_RANKS_PER_NODE=2 sh tests/run/dist_examples.sh`
# passes too, worlds of 8 ranks as 4 x 2, 9 as 5 nodes).  Each rank's peer table holds no
# address for the ranks of other nodes; the kernels, compiled for several
# nodes, reach them through the world's transport (a proxy thread), and
# must still match their references.  Also: the transport really carried
# requests, and --ranks-per-node's checks.
. tests/run/lib.sh
d=examples/distributed
out=$("$tool" run $d/allgather.py --entry allgather --ranks 4 --ranks-per-node 2 -D PE_num=4 -D M=32 -D N=48 --check-against allgather_ref 2>&1)
echo "$out"
echo "$out" | grep -q ': 4 ranks (sim, 2 nodes of 2 ranks), seed' || { echo "FAILED: no node line"; exit 1; }
n=$(echo "$out" | sed -n 's/^transport between nodes: \([0-9]*\) requests$/\1/p')
[ -n "$n" ] && [ "$n" -gt 0 ] || { echo "FAILED: nothing went through the transport ($n)"; exit 1; }
echo "$out" | grep -q '^PASS$' || { echo "FAILED: allgather on 2 x 2"; exit 1; }
# one node (--ranks-per-node = --ranks): no transport, no node line
out=$("$tool" run $d/allgather.py --entry allgather --ranks 4 --ranks-per-node 4 -D PE_num=4 -D M=32 -D N=48 --check-against allgather_ref 2>&1)
echo "$out" | grep -q 'transport between nodes' && { echo "FAILED: one node used the transport"; exit 1; }
echo "$out" | grep -q '^PASS$' || { echo "FAILED: allgather on one node"; exit 1; }
# bad settings
if "$tool" run $d/allgather.py --entry allgather --ranks 4 --ranks-per-node 5 -D PE_num=4 -D M=32 -D N=48 >/tmp/ts_nodes_$$ 2>&1; then
  echo "FAILED: 5 ranks per node of 4 accepted"; exit 1
fi
grep -q -- '--ranks-per-node 5 is more than --ranks 4' /tmp/ts_nodes_$$ || { cat /tmp/ts_nodes_$$; echo "FAILED: message"; exit 1; }
rm -f /tmp/ts_nodes_$$
# every example on 4 ranks, as 2 nodes of 2
TS_ONLY_RANKS=4 TILESCALE_RANKS_PER_NODE=2 sh tests/run/dist_examples.sh > /tmp/ts_nodes_ex_$$ 2>&1
rc=$?
grep -c '^transport between nodes' /tmp/ts_nodes_ex_$$
if [ $rc -ne 0 ]; then cat /tmp/ts_nodes_ex_$$; rm -f /tmp/ts_nodes_ex_$$; echo "FAILED: the examples on nodes of 2 ranks"; exit 1; fi
rm -f /tmp/ts_nodes_ex_$$
echo "dist_nodes: OK"
