#!/bin/sh
# T.ClusterKernel and T.block_rank_in_cluster (tests/run/kernels/cluster.py):
# on the C target (no clusters: pass lower_cluster computes the rank from
# the block indices) every block's rank against the naive formula for 1-,
# 2- and 3-dimensional clusters, and a persistent scheduler over cluster
# rows (TileLang's 2-CTA pattern) against persistent_sched.py's naive
# enumeration; the CUDA source for sm_90a carries __cluster_dims__ and
# reads %cluster_ctarank (the PTX: .reqnctapercluster), and sm_80 refuses
# the kernel.  bench/persist_gpu_check.sh runs them on the H200.
. tests/run/lib.sh
f=tests/run/kernels/cluster.py
check $f --entry cluster_rank --target c --check-against cluster_rank_naive
check $f --entry cluster_rank --target c -D gx=4 -D gy=4 -D gz=4 -D cx=1 -D cy=2 -D cz=4 --check-against cluster_rank_naive
check $f --entry cluster_rank --target c -D cx=1 -D cy=1 -D cz=1 --check-against cluster_rank_naive
check $f --entry cluster_rank --target c -D gx=16 -D gy=1 -D gz=1 -D cx=8 -D cy=1 --check-against cluster_rank_naive
check $f --entry persist_cluster --target c -D M=200 -D N=150 -D blocks=8 -D cluster=2 --check-against persist_naive
check $f --entry persist_cluster --target c -D M=200 -D N=150 -D blocks=6 -D cluster=2 -D col=False -D swizzle=3 --check-against persist_naive
check $f --entry persist_cluster --target c -D M=100 -D N=40 -D TM=8 -D TN=8 -D blocks=12 -D cluster=4 -D swizzle=1 --check-against persist_naive
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
for e in cluster_rank persist_cluster; do
  TILESCALE_CUDA_ARCH=sm_90a "$tool" compile $f --entry $e --target cuda --emit cuda >"$t/c.cu" || { echo "FAILED: $e: CUDA source"; exit 1; }
  grep -q '__cluster_dims__(2, ' "$t/c.cu" || { echo "FAILED: $e: no __cluster_dims__"; exit 1; }
  grep -q '%%cluster_ctarank' "$t/c.cu" || { echo "FAILED: $e: the rank is not read from %cluster_ctarank"; exit 1; }
  if TILESCALE_CUDA_ARCH=sm_90a "$tool" compile $f --entry $e --target cuda --emit ptx >"$t/c.ptx" 2>"$t/err"; then
    grep -q '\.reqnctapercluster 2' "$t/c.ptx" || { echo "FAILED: $e: no .reqnctapercluster in the PTX"; exit 1; }
  elif ! grep -q "NVRTC not found" "$t/err"; then
    cat "$t/err"; echo "FAILED: $e: PTX"; exit 1
  fi
  "$tool" compile $f --entry $e --target c --emit ir >"$t/ir" || { echo "FAILED: $e: C target IR"; exit 1; }
  if grep -q "cluster" "$t/ir"; then cat "$t/ir"; echo "FAILED: $e: a cluster left on the C target"; exit 1; fi
done
out=$(TILESCALE_CUDA_ARCH=sm_80 "$tool" compile $f --entry cluster_rank --target cuda --emit cuda 2>&1) &&
  { echo "FAILED: sm_80 accepted a cluster"; exit 1; }
echo "$out" | grep -q "thread block clusters need sm_90" || { echo "$out"; echo "FAILED: sm_80's message"; exit 1; }
echo "cluster: ok"
