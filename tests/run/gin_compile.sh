#!/bin/sh
# Several nodes on CUDA (issue 6 part A): kernels compiled for a world of
# several nodes (--multinode) print their accesses to ranks of other nodes
# as NCCL 2.28 GIN device calls (nccl_device.h: ncclGin put / putValue /
# signal / readSignal / flush; adding signals as GIN signals), chosen at
# run time by the IR's branch on ranks per node; the
# source must build for sm_90 against the installed NCCL headers.  NVRTC
# cannot take nccl_device.h (src/target/cuda/nvcc.c says why), so the
# library builds such kernels with nvcc (unit.test_cuda_gin_build); here
# nvcc's -cubin by hand, and the library's --emit ptx through its nvcc
# path.  What GIN lacks is refused, naming it.  Skipped
# (77) without nvcc or nccl_device.h; the one-node code is pinned by the
# cuda_* goldens.
. tests/run/lib.sh
d=examples/distributed
NVCC="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
inc=""
for h in /usr/local/include /usr/local/cuda/include /usr/include "${NCCL_HOME:-/nonexistent}/include"; do
  v=$(sed -n 's/^#define NCCL_VERSION_CODE *\([0-9]*\).*/\1/p' "$h/nccl.h" 2>/dev/null | head -1)
  if [ -f "$h/nccl_device.h" ] && [ "${v:-0}" -ge 22807 ]; then inc="$h"; break; fi # GIN from 2.28.7
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
# the printed calls (no nvcc needed)
emit() { name=$1; shift; "$tool" compile "$@" --target cuda --emit cuda > "$tmp/$name.cu" 2> "$tmp/$name.err" || { cat "$tmp/$name.err"; fail "compile $name"; }; }
emit put_block $d/put_block.py --entry kernel_ -D M=4096 -D num_rank=2 -D block_M=512 -D threads=128 --multinode
emit allgather $d/allgather.py --entry allgather -D PE_num=4 -D M=32 -D N=48 --multinode
emit put_block1 $d/put_block.py --entry kernel_ -D M=4096 -D num_rank=2 -D block_M=512 -D threads=128
grep -q '#include <nccl_device.h>' "$tmp/put_block.cu" || fail "no nccl_device.h"
grep -q 'ts_g.put(ncclTeamWorld(ts_gin_comm), (int)ts_pe, ts_gin_win' "$tmp/put_block.cu" || fail "heap put not a GIN put"
grep -q 'ts_comm_rpn' "$tmp/put_block.cu" || fail "no ranks-per-node branch"
grep -q 'ts_g.putValue(ncclTeamWorld(ts_gin_comm)' "$tmp/allgather.cu" || fail "tile put not GIN putValues"
grep -q 'ncclGin\|nccl_device\|ts_comm_rpn' "$tmp/put_block1.cu" && fail "one-node code mentions GIN"
# T.barrier_all across nodes: GIN signals between the ranks, only where the world spans nodes at run time
emit all_to_all $d/all_to_all.py --entry all_to_all -D P=4 -D chunk=6 -D N=20 --multinode
grep -q 'ts_g.signal(ncclTeamWorld(ts_gin_comm), ts_p, ncclGin_SignalInc{0})' "$tmp/all_to_all.cu" || fail "barrier_all: no GIN signals"
grep -q 'ts_g.readSignal(0)' "$tmp/all_to_all.cu" || fail "barrier_all: no wait on the GIN signal"
"$tool" compile $d/all_to_all.py --entry all_to_all -D P=4 -D chunk=6 -D N=20 --multinode --target cuda --dump-after lower_comm > "$tmp/ir2.txt" 2>&1 || fail "dump all_to_all"
grep -q 'if ranks_per_node >= num_ranks:' "$tmp/ir2.txt" || fail "barrier_all: no IR branch on the world's nodes"
grep -q 'barrier_all(, flags=0/1/0, xport=gin.barrier)' "$tmp/ir2.txt" || fail "barrier_all: no transport form"
# the IR: the branch and the transport op
"$tool" compile $d/put_block.py --entry kernel_ -D M=4096 -D num_rank=2 -D block_M=512 -D threads=128 --multinode --target cuda --dump-after lower_comm > "$tmp/ir.txt" 2>&1 || fail "dump"
grep -q 'ranks_per_node == rank // ranks_per_node' "$tmp/ir.txt" || fail "no IR branch"
grep -q ', xport=gin.put)' "$tmp/ir.txt" || fail "no xport op (a GIN put)"
# adding signals across nodes (tests/run/kernels/gin_signals.py): the signal buffer's words are GIN
# signals; a put carries ncclGin_SignalAdd on its last row / element, T.signal_op add and T.atom_add are
# signal(SignalAdd), waits on this rank's word read heap word + readSignal - shadow, a set of the own
# word resets the shadow
k=tests/run/kernels/gin_signals.py
emit ring $k --entry ring -D N=1024 -D BM=256 --multinode
emit reset $k --entry reset -D P=4 --multinode
grep -q 'ts_g.put(ncclTeamWorld(ts_gin_comm), (int)ts_pe, ts_gin_win, ts_d, ts_gin_win, ts_s, (size_t)ts_cnt \* 4u, ncclGin_SignalAdd{' "$tmp/ring.cu" || fail "put with SignalAdd"
grep -q 'ts_g.putValue(ncclTeamWorld(ts_gin_comm), (int)ts_pe, ts_gin_win, ts_d, ts_sp\[ts_r \* ts_srs + ts_i\], ncclGin_SignalAdd{' "$tmp/ring.cu" || fail "putValue with SignalAdd"
[ "$(grep -c 'if (ts_fo >= 0 && ts_sid >= 0) ts_g.signal(ncclTeamWorld(ts_gin_comm), (int)ts_pe, ncclGin_SignalAdd{' "$tmp/ring.cu")" -eq 2 ] || fail "signal_op add / atom_add: not two signal(SignalAdd)"
[ "$(grep -c 'ts_g.readSignal(ts_sid) - \*ts_sh' "$tmp/ring.cu")" -eq 3 ] || fail "waits do not read the GIN signal"
grep -q 'if (ts_sh) \*ts_sh = ts_g.readSignal(ts_sid);' "$tmp/reset.cu" || fail "reset: no shadow update"
"$tool" compile $k --entry ring -D N=1024 -D BM=256 --multinode --target cuda --dump-after lower_comm > "$tmp/ir3.txt" 2>&1 || fail "dump ring"
grep -q 'gin_signal_buffers 0:sig' "$tmp/ir3.txt" || fail "ring: no signal buffer in the IR"
grep -q 'xport=gin.put_values, gin_signals=slot 0' "$tmp/ir3.txt" || fail "ring: no putValues form in the IR"
"$tool" compile $k --entry reset -D P=4 --multinode --target cuda --dump-after lower_comm > "$tmp/ir4.txt" 2>&1 || fail "dump reset"
grep -q 'fence(, flags=1/0/2, xport=gin.flush (sources reusable; not remote completion' "$tmp/ir4.txt" || fail "T.quiet: no flush form saying what it does not give"
# refusals, naming what GIN lacks
refuse() { want=$1; shift; if "$tool" compile "$@" --target cuda --multinode --emit cuda > "$tmp/r.out" 2>&1; then fail "accepted: $*"; fi
  grep -q "$want" "$tmp/r.out" || { cat "$tmp/r.out"; fail "message: $want"; }; }
refuse "no gets" $d/tile_copy.py --entry tile_copy -D M=40 -D N=48 -D BM=16 -D BN=16
refuse "a release store is a flag" $d/mem_model.py --entry mem_model -D P=4 -D N=200
# set signals: no ordered form in GIN (no SignalSet up to NCCL 2.31): refused, naming the adding signal
refuse "use an adding signal (T.Amo.SIGNAL_ADD" $d/allreduce.py --entry allreduce -D P=4 -D N=200
refuse "cannot set a signal in order after the data" tests/run/kernels/gin_refusals.py --entry kern -D P=4 -D what=signal_set
# the build for sm_90
if [ ! -x "$NVCC" ] || [ -z "$inc" ]; then echo "SKIP: no nvcc ($NVCC) or no nccl_device.h of NCCL >= 2.28.7 (GIN)"; exit 77; fi
for k in put_block allgather all_to_all ring reset; do
  "$NVCC" -arch=sm_90 -std=c++17 -w -I"$inc" -cubin -o "$tmp/$k.cubin" "$tmp/$k.cu" || fail "nvcc $k"
  [ -s "$tmp/$k.cubin" ] || fail "empty cubin $k"
done
TILESCALE_CACHE_DIR="$tmp/cache" TILESCALE_NVCC="$NVCC" TILESCALE_NCCL_INCLUDE="$inc" "$tool" compile $d/allgather.py --entry allgather -D PE_num=4 -D M=32 -D N=48 --multinode --target cuda --emit ptx > "$tmp/ag.ptx" 2> "$tmp/ag.err" || { cat "$tmp/ag.err"; fail "library nvcc path (--emit ptx)"; }
grep -q '.entry tsk_kernel' "$tmp/ag.ptx" || fail "no kernel in the PTX"

echo "gin_compile: OK"
