#!/bin/sh
# GPU check of kernels compiled for several nodes (issue 6 part A): their
# CUDA includes NCCL's device API (GIN calls for ranks of other nodes),
# which NVRTC cannot compile, so the library builds them at run time with
# nvcc (src/target/cuda/nvcc.c) into the kernel cache and loads the cubin
# with the driver API.  One GPU cannot run GIN itself (NCCL refuses two
# ranks on one GPU, and a world of one rank has no other node), so this
# runs what one GPU can: worlds of ONE node (the local backend, 2 and 4
# ranks sharing the GPU) with kernels compiled --multinode, i.e. the
# nvcc-built module with nccl_device.h and the GIN globals, its branches on
# ranks per node taking the load/store side for every peer and T.barrier_all
# its one-node form, the adding signals of tests/run/kernels/gin_signals.py's
# ring (GIN signal forms compiled in, load/store branch taken); results
# against the references.  Then that the cache holds nvcc's builds (the
# key comment names nvcc and NCCL) and that a second run finds them.
# Exit 77 without a GPU, nvcc or NCCL device headers with GIN (>= 2.28.7).
#   sh bench/gin_gpu_check.sh [./build/tilescale]
tool="${1:-./build/tilescale}"
d=examples/distributed
command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU' || { echo "SKIP: no GPU"; exit 77; }
NVCC="${TILESCALE_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
[ -x "$NVCC" ] || { echo "SKIP: no nvcc"; exit 77; }
# NCCL's device headers with GIN (NCCL_VERSION_CODE >= 22807: 2.28.7, where
# GIN starts; 2.28.3's nccl_device.h has no ncclGin): the library's places,
# then a pip wheel's (nvidia-nccl-cu*), handed to the library when found there
inc=""
seen=""
wheels=$(python3 -c 'import glob, site; print(" ".join(sorted(set(g for p in site.getsitepackages() for g in glob.glob(p + "/nvidia/nccl*/include")))))' 2>/dev/null)
for h in "${TILESCALE_NCCL_INCLUDE:-/nonexistent}" "${NCCL_HOME:-/nonexistent}/include" "$(dirname "$NVCC")/../include" /usr/local/include /usr/include $wheels; do
  [ -f "$h/nccl_device.h" ] || continue
  v=$(sed -n 's/^#define NCCL_VERSION_CODE *\([0-9]*\).*/\1/p' "$h/nccl.h" 2>/dev/null | head -1)
  seen="$seen $h (${v:-no version})"
  if [ "${v:-0}" -ge 22807 ]; then inc="$h"; break; fi
done
[ -n "$inc" ] || { echo "SKIP: no NCCL device headers with GIN (NCCL >= 2.28.7; found:${seen:- none})"; exit 77; }
export TILESCALE_NCCL_INCLUDE="$inc"
echo "nvcc: $NVCC ($("$NVCC" --version | grep release)); NCCL headers: $inc ($(grep -m1 'define NCCL_VERSION_CODE' "$inc/nccl.h" 2>/dev/null))"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TILESCALE_CACHE_DIR="$tmp/cache"
pass=0
fail=0
ok() {
  name="$1"; shift
  t0=$(date +%s.%N)
  out=$(timeout 300 "$tool" run "$@" --target cuda --multinode --timeout 20 2>&1)
  rc=$?
  t1=$(date +%s.%N)
  if [ $rc -eq 0 ] && echo "$out" | grep -q '^PASS$'; then
    pass=$((pass + 1)); echo "PASS  $name ($(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s)"
  else
    fail=$((fail + 1)); echo "FAIL  $name (rc $rc)"; echo "$out" | grep -v ' ok$' | tail -8 | sed 's/^/      /'
  fi
}
for n in 2 4; do
  ok "put_block x$n (multinode, cold)" $d/put_block.py --entry kernel_ --ranks $n -D M=65536 -D num_rank=$n -D block_M=4096 -D threads=128 --check-against put_block_ref
  ok "allgather x$n (multinode, cold)" $d/allgather.py --entry allgather --ranks $n -D PE_num=$n -D M=$((n * 64)) -D N=256 --check-against allgather_ref
  ok "all_to_all x$n (multinode, cold; T.barrier_all's one-node branch)" $d/all_to_all.py --entry all_to_all --ranks $n -D P=$n -D chunk=16 -D N=128 --check-against all_to_all_ref
  # adding signals (a heap put's and a tile put's SignalAdd, T.signal_op add, T.atom_add) and waits on
  # them: the module has the GIN forms (signal buffer mapped, readSignal waits), the world of one node
  # takes the load/store branches (GIN itself needs another node)
  ok "signal ring x$n (multinode, adding signals)" tests/run/kernels/gin_signals.py --entry ring --ranks $n -D N=65536 -D BM=4096 --check-against ring_ref
done
# one build per distinct source: x2 and x4 of an example may print the same
# CUDA (the rank count is a launch argument), so at least one per example,
# and every kernel source in the cache is nvcc's
nv=$(grep -l '^/\* nvcc .*NCCL' "$TILESCALE_CACHE_DIR"/tsk-*.cu 2>/dev/null | wc -l)
srcs=$(ls "$TILESCALE_CACHE_DIR"/tsk-*.cu 2>/dev/null | wc -l)
cubins=$(ls "$TILESCALE_CACHE_DIR"/tsk-*.cubin 2>/dev/null | wc -l)
echo "cache: $nv of $srcs sources built by nvcc, $cubins cubins"
if [ "$nv" -ge 3 ] && [ "$nv" -eq "$srcs" ] && [ "$cubins" -eq "$srcs" ]; then pass=$((pass + 1)); echo "PASS  nvcc builds in the cache"; else fail=$((fail + 1)); echo "FAIL  nvcc builds in the cache ($nv of $srcs, $cubins cubins)"; fi
ok "put_block x2 (multinode, cached)" $d/put_block.py --entry kernel_ --ranks 2 -D M=65536 -D num_rank=2 -D block_M=4096 -D threads=128 --check-against put_block_ref
n2=$(ls "$TILESCALE_CACHE_DIR"/tsk-*.cubin 2>/dev/null | wc -l)
if [ "$n2" -eq "$cubins" ]; then pass=$((pass + 1)); echo "PASS  second run hit the cache"; else fail=$((fail + 1)); echo "FAIL  second run rebuilt ($cubins -> $n2 cubins)"; fi
echo "NOTE  GIN itself (puts to another node) not run: one GPU, one host"
echo "gin_gpu_check: $pass passed, $fail failed"
[ $fail -eq 0 ]
