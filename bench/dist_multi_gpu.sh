#!/bin/sh
# The distributed layer on 2 GPUs (issue 7's first run), in about 150 s:
#   A. every distributed example on ipc ranks, one process per GPU
#      (`tilescale launch -n 2`; Cannon on 4 processes, two per GPU), each
#      rank checked against the reference;
#   B. speed against NCCL in the same run: all-gather and all-to-all at
#      64 KiB and 64 MiB (bus bandwidth as nccl-tests defines it), AG-GEMM
#      and overlapped GEMM-RS against NCCL + cuBLAS (bench/dist_multi_nccl.py,
#      torch.distributed under the same launcher);
#   C. the examples again on the local backend (one process; it puts all
#      ranks on GPU 0: it does not span GPUs), as far as time allows.
# Each stage stops starting runs at its deadline (A: 70 s, B: 125 s, C:
# 145 s from the start; BUDGET scales them) and counts what it left out.
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0 and friends, exported for
# the children).  Writes only temporary files of a few KiB; needs no
# rebuild.  Exit status: 0 if everything that ran passed, 1 otherwise,
# 2 on bad usage; with fewer than 2 GPUs it runs nothing and exits 1.
# DRY=1 runs A, B (ours only) and C on proc/sim ranks of the C target at
# small sizes: how the script itself is tested without GPUs.  MIN_GPUS=1
# NO_NCCL=1 runs it on one GPU (both processes on it; NCCL cannot): a
# rehearsal of the GPU paths before the 2-GPU run.
#   sh bench/dist_multi_gpu.sh ./build-gpu/tilescale
tool="${1:-./build-gpu/tilescale}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
budget=${BUDGET:-150}
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
if [ ! -x "$tool" ]; then
  echo "dist_multi_gpu: error: '$tool' is not an executable (give the tilescale binary, e.g. ./build-gpu/tilescale)"
  exit 2
fi
if [ -n "$DRY" ]; then
  target=c; ngpu=2
  echo "dist_multi_gpu: DRY run (C target, proc/sim ranks, small sizes, no NCCL)"
else
  target=cuda
  ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  if [ "$ngpu" -lt "${MIN_GPUS:-2}" ]; then
    echo "dist_multi_gpu: error: needs 2 GPUs (one per rank), $ngpu visible: nothing run"
    exit 1
  fi
  nvidia-smi -L | sed 's/ (UUID.*//; s/^/gpu: /'
  nvidia-smi topo -m 2>/dev/null | sed -n '1,3p' | sed 's/^/topo: /'
fi
d=examples/distributed
c=$d/collectives.py
bk=$d/bench_kernels.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=""

# case NAME N ARGS... : one line per example (file, entry, -D ..., --check-against ...)
cases() {
  echo "put_block|2|$d/put_block.py --entry kernel_ -D M=65536 -D num_rank=2 -D block_M=4096 -D threads=128 --check-against put_block_ref"
  echo "allgather (push)|2|$d/allgather.py --entry allgather -D PE_num=2 -D M=128 -D N=256 --check-against allgather_ref"
  echo "all_to_all|2|$d/all_to_all.py --entry all_to_all -D P=2 -D chunk=16 -D N=128 --check-against all_to_all_ref"
  echo "allreduce (signals)|2|$d/allreduce.py --entry allreduce -D P=2 -D N=4000 --in round=1 --check-against allreduce_ref"
  echo "AG-GEMM (tile signals)|2|$d/ag_gemm.py --entry ag_gemm -D P=2 -D M=64 -D N=128 -D K=64 --in round=1 --check-against ag_gemm_ref"
  echo "T.allreduce|2|$c --entry allreduce -D rows=24 -D cols=40 --check-against allreduce_ref"
  echo "T.allgather|2|$c --entry allgather -D rows=6 -D cols=10 -D P=2 --check-against allgather_ref"
  echo "T.reduce_scatter|2|$c --entry reduce_scatter -D rows=5 -D cols=12 -D P=2 --check-against reduce_scatter_ref"
  echo "T.all_to_all|2|$c --entry all_to_all -D chunk=3 -D cols=7 -D P=2 --check-against all_to_all_ref"
  echo "T.Scale shift|2|$c --entry shift -D rows=32 -D cols=16 --check-against shift_ref"
  echo "pre-attention a2a|2|$d/seq_parallel_a2a.py --entry pre_attn_a2a -D P=2 -D B=2 -D H=8 -D S=64 -D D=64 --check-against pre_attn_a2a_ref"
  echo "post-attention a2a|2|$d/seq_parallel_a2a.py --entry post_attn_a2a -D P=2 -D B=2 -D H=8 -D S=64 -D D=64 --check-against post_attn_a2a_ref"
  echo "TP GEMM + allreduce|2|$d/tp_gemm.py --entry gemm_allreduce -D M=64 -D N=64 -D KP=64 --check-against gemm_allreduce_ref"
  echo "GEMM-RS|2|$d/tp_gemm.py --entry gemm_rs -D M=64 -D N=64 -D KP=64 -D P=2 --check-against gemm_rs_ref"
  echo "GEMM-RS overlapped|2|$d/tp_gemm.py --entry gemm_rs_overlap -D M=256 -D N=128 -D KP=64 -D P=2 --in round=1 --check-against gemm_rs_overlap_ref"
  echo "views: AG-GEMM|2|$d/views.py --entry ag_gemm_views -D M=64 -D N=64 -D K=64 -D P=2 --check-against ag_gemm_views_ref"
  echo "views: TP GEMM|2|$d/views.py --entry tp_gemm_views -D M=64 -D N=64 -D KP=64 --check-against tp_gemm_views_ref"
  echo "MoE dispatch+combine|2|$d/moe.py --entry moe -D P=2 -D TOK=64 -D H=64 -D E=2 -D K=2 --check-against moe_ref"
  echo "per-thread primitives|2|$d/per_thread.py --entry per_thread -D P=2 -D N=3000 --check-against per_thread_ref"
  echo "ag_loop (bench kernel)|2|$bk --entry ag_loop -D P=2 -D n=100000 -D chunk=4096 -D reps=2 --check-against ag_loop_ref"
  echo "a2a_loop (bench kernel)|2|$bk --entry a2a_loop -D P=2 -D n=100000 -D chunk=4096 -D reps=2 --check-against a2a_loop_ref"
  echo "Cannon 2x2|4|$d/cannon.py --entry cannon -D q=2 -D BM=128 -D BN=128 -D BK=128 --check-against cannon_ref"
}

# stage BACKEND DEADLINE: every case; "ipc" through the launcher, "local" in one process
stage() {
  be=$1; until=$2; pass=0; fail=0; left=0
  cases > $tmp/cases
  while IFS='|' read -r name n args; do
    if [ "$(el)" -ge "$until" ]; then left=$((left + 1)); continue; fi
    if [ "$be" = ipc ]; then
      out=$(timeout 60 "$tool" launch -n $n -- tilescale run $args --target $target --timeout 20 2>&1)
    else
      out=$(timeout 60 "$tool" run $args --ranks $n --target $target --timeout 20 2>&1)
    fi
    rc=$?
    want=1; [ "$be" = ipc ] && want=$n
    got=$(echo "$out" | grep -c '^PASS$')
    if [ $rc -eq 0 ] && [ "$got" = "$want" ]; then
      pass=$((pass + 1))
    else
      fail=$((fail + 1)); fails="$fails
  $be $name (rc $rc): $(echo "$out" | grep -v ' ok$' | grep -i 'error\|fail\|mismatch' | head -2 | tr '\n' ' ' | cut -c1-220)"
    fi
    if [ "$be" = ipc ] && [ -z "$warned" ]; then
      warned=1
      echo "$out" | grep 'tilescale: warning' | sort -u | head -4 | sed 's/^/topology: /'
    fi
  done < $tmp/cases
  printf "%-58s %3d passed %3d failed %3d not run (time)\n" "$3" $pass $fail $left
  [ $fail -eq 0 ]
}

ok=1
echo "== A. examples, checked =="
stage ipc $(( 70 * budget / 150 )) "ipc, one process per GPU (Cannon: 4 processes)" || ok=0

echo "== B. speed against NCCL (ms per collective: ours = median launch / reps, incl. barriers) =="
med() { sed -n 's/^bench: median \([0-9.]*\) ms.*/\1/p' | sort -g | tail -1; }
ours() { # KEY REPS ARGS...: ms per repetition of ours, slowest rank
  key=$1; reps=$2; shift 2
  if [ "$(el)" -ge $(( 110 * budget / 150 )) ]; then echo "$key=-"; return; fi
  out=$(timeout 60 "$tool" launch -n 2 -- tilescale run "$@" --target $target --timeout 20 --bench 3 2>&1)
  m=$(echo "$out" | med)
  if [ -z "$m" ]; then
    echo "ours $key failed: $(echo "$out" | grep -i 'error\|fail' | head -2 | tr '\n' ' ' | cut -c1-200)" >&2
    echo "$key=-"
  else
    echo "$key=$(echo "$m / $reps" | bc -l | cut -c1-10)"
  fi
}
if [ -n "$DRY" ]; then small=2048; large=65536; chunk=1024; M=64; N=64; K=64; blk=""; else
  small=8192; large=8388608; chunk=65536; M=512; N=1024; K=4096; blk="-D block_M=128 -D block_N=128"; fi
args="$(ours ag_64KiB 200 $bk --entry ag_loop -D P=2 -D n=$small -D chunk=2048 -D reps=200)
$(ours a2a_64KiB 200 $bk --entry a2a_loop -D P=2 -D n=$small -D chunk=2048 -D reps=200)
$(ours ag_64MiB 10 $bk --entry ag_loop -D P=2 -D n=$large -D chunk=$chunk -D reps=10)
$(ours a2a_64MiB 10 $bk --entry a2a_loop -D P=2 -D n=$large -D chunk=$chunk -D reps=10)
$(ours ag_gemm 1 $d/ag_gemm.py --entry ag_gemm -D P=2 -D M=$M -D N=$N -D K=$K $blk --in round=1)
$(ours gemm_rs 1 $d/tp_gemm.py --entry gemm_rs_overlap -D M=$((2 * M)) -D N=$N -D KP=$K -D P=2 $blk --in round=1)"
echo "$args" | tr '\n' ' ' | sed 's/^/ours (ms): /; s/$/\n/'
if [ -n "$DRY" ]; then
  echo "(DRY: no NCCL)"
elif [ -n "$NO_NCCL" ]; then
  echo "NCCL: not run (NO_NCCL)"
elif [ "$(el)" -ge $(( 130 * budget / 150 )) ]; then
  echo "NCCL: not run (time)"
elif ! python3 -c "import torch, torch.distributed" 2>/dev/null; then
  echo "NCCL: not run (no torch)"
else
  MASTER_PORT=$((29600 + $$ % 300)) timeout 60 "$tool" launch -n 2 -- python3 bench/dist_multi_nccl.py $args M=$M N=$N K=$K 2>&1 |
    grep -v '^\[\|Warning\|warn(' | tail -12 || ok=0
fi

echo "== C. examples on the local backend (one process, both ranks on GPU 0) =="
stage local $(( 145 * budget / 150 )) "local, 2 ranks on GPU 0 (Cannon: 4)" || ok=0
if [ -n "$fails" ]; then echo "failures:$fails"; fi
echo "dist_multi_gpu: $( [ $ok = 1 ] && echo ok || echo FAILED ) in $(el) s"
[ $ok = 1 ]
