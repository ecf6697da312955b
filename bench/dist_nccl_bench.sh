#!/bin/sh
# Our collectives beside NCCL's in the same run (issue 6 H), one process
# and one GPU per rank: for N = 2, 4, 8 (as many as there are GPUs) and
# all-reduce, all-gather, reduce-scatter and all-to-all of float32, the
# kernel of examples/distributed/collectives.py runs on ipc ranks
# (`tilescale launch -n N -- tilescale run ... --target cuda --bench 10`,
# whole launches: host barriers and launch included) on random inputs
# written to .npy files, then bench/dist_nccl.py runs NCCL's collective
# (torch.distributed) on the same files, checks that our outputs equal
# NCCL's (NCCL as the golden reference) and times it.  One line per case:
# time and bus bandwidth of both (nccl-tests' definitions) and the ratio.
#
# NCCL needs one GPU per rank: with fewer than 2 GPUs (or without torch)
# it says so and exits 0.  DRY=1 runs our side on proc ranks (C target)
# with small sizes and numpy in NCCL's place: a check of this script on a
# machine without GPUs.
#   sh bench/dist_nccl_bench.sh [./build/tilescale]
tool="${1:-./build/tilescale}"
c=examples/distributed/collectives.py
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ -n "$DRY" ]; then
  target=c; ngpu=4; R=32; C=64; blocks=2
else
  target=cuda; R=1024; C=4096; blocks=64
  if [ "$ngpu" -lt 2 ]; then
    echo "dist_nccl_bench: NCCL needs one GPU per rank and $ngpu GPU(s) are visible: not run"
    exit 0
  fi
  if ! python3 -c "import torch, torch.distributed, numpy" 2>/dev/null; then
    echo "dist_nccl_bench: no torch/numpy for NCCL: not run"
    exit 0
  fi
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
gen() { # gen N ROWS COLS: a{rank}.npy, float32 in [-1, 1)
  python3 -c "
import numpy as np, sys
n, r, c = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
g = np.random.default_rng(7)
for k in range(n):
    np.save('$tmp/a%d.npy' % k, (g.random((r, c), dtype=np.float32) * 2 - 1).astype(np.float32))
" "$@"
}
printf "%-16s %5s %10s %12s %12s %12s %12s %8s\n" op ranks MiB ours_us ours_GB/s nccl_us nccl_GB/s ours/nccl
for n in 2 4 8; do
  [ $n -le $ngpu ] || continue
  for op in allreduce allgather reduce_scatter all_to_all; do
    case $op in
      allreduce) gen $n $((4 * R)) $C; args="--entry allreduce -D rows=$((4 * R)) -D cols=$C -D blocks=$blocks --in X=$tmp/a{rank}.npy --out X=$tmp/o{rank}.npy"
                 bytes=$((4 * R * C * 4)); factor="2*($n-1)/$n" ;;
      allgather) gen $n $R $C; args="--entry allgather -D rows=$R -D cols=$C -D P=$n -D blocks=$blocks --in A=$tmp/a{rank}.npy --out B=$tmp/o{rank}.npy"
                 bytes=$((n * R * C * 4)); factor="($n-1)/$n" ;;
      reduce_scatter) gen $n $((n * R)) $C; args="--entry reduce_scatter -D rows=$R -D cols=$C -D P=$n -D blocks=$blocks --in A=$tmp/a{rank}.npy --out B=$tmp/o{rank}.npy"
                 bytes=$((n * R * C * 4)); factor="($n-1)/$n" ;;
      all_to_all) gen $n $((n * R)) $C; args="--entry all_to_all -D chunk=$R -D cols=$C -D P=$n -D blocks=$blocks --in A=$tmp/a{rank}.npy --out B=$tmp/o{rank}.npy"
                 bytes=$((n * R * C * 4)); factor="($n-1)/$n" ;;
    esac
    out=$(timeout 300 "$tool" launch -n $n -- tilescale run $c $args --target $target --timeout 60 --bench 10 2>&1)
    ms=$(echo "$out" | sed -n 's/^bench: median \([0-9.]*\) ms.*/\1/p' | sort -g | tail -1)
    if [ -z "$ms" ]; then
      echo "$out" | tail -5; echo "FAILED: ours, $op x$n"; fail=1; continue
    fi
    nccl="" ; nus=0
    if [ -n "$DRY" ]; then # numpy in NCCL's place: the same comparison
      python3 -c "
import numpy as np, sys
op, n = sys.argv[1], int(sys.argv[2])
a = [np.load('$tmp/a%d.npy' % k).astype(np.float64) for k in range(n)]
for r in range(n):
    o = np.load('$tmp/o%d.npy' % r)
    if op == 'allreduce': want = sum(a)
    elif op == 'allgather': want = np.concatenate(a)
    elif op == 'reduce_scatter': want = np.split(sum(a), n)[r]
    else: want = np.concatenate([np.split(a[s], n)[r] for s in range(n)])
    assert o.shape == want.shape and np.abs(o - want).max() < 1e-4, (op, r)
" $op $n || { echo "FAILED: ours != numpy, $op x$n"; fail=1; }
    else
      nccl=$(MASTER_PORT=$((29500 + n)) timeout 300 "$tool" launch -n $n -- python3 bench/dist_nccl.py $op "$tmp/a{rank}.npy" "$tmp/o{rank}.npy" 20 2>&1)
      rc=$?
      line=$(echo "$nccl" | grep '^nccl ')
      nus=$(echo "$line" | sed -n 's/.* time=\([0-9.]*\)us.*/\1/p')
      if [ $rc -ne 0 ] || [ -z "$nus" ]; then echo "$nccl" | tail -5; echo "FAILED: NCCL or ours != NCCL, $op x$n"; fail=1; fi
    fi
    awk -v op=$op -v n=$n -v b=$bytes -v ms=$ms -v nus="${nus:-0}" -v f="$(echo "$factor" | bc -l)" 'BEGIN {
      us = ms * 1e3; ob = b / (us * 1e-6) * f / 1e9
      if (nus > 0) { nb = b / (nus * 1e-6) * f / 1e9; printf "%-16s %5d %10.1f %12.1f %12.1f %12.1f %12.1f %7.0f%%\n", op, n, b / 1048576, us, ob, nus, nb, 100 * nus / us }
      else printf "%-16s %5d %10.1f %12.1f %12.1f %12s %12s %8s\n", op, n, b / 1048576, us, ob, "-", "-", "-"
    }'
  done
done
[ $fail -eq 0 ]
