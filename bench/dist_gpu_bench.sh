#!/bin/sh
# Speed of the distributed primitives on the local backend (ranks sharing
# GPU 0), each figure beside its baseline from the same run (issue 6's goals
# for one GPU: put of 64 MiB between two ranks' heaps >= 90% of the
# device-to-device copy; a signal round trip <= 5 us).  Kernels:
# examples/distributed/bench_kernels.py; every timed run is also checked
# against its reference.  Prints a small table.
#   sh bench/dist_gpu_bench.sh [./build/tilescale]
tool="${1:-./build/tilescale}"
f=examples/distributed/bench_kernels.py
n=16777216        # 64 MiB of float32 per rank
reps=20
median() { # the --bench line's milliseconds (of $1, or of stdin)
  if [ $# -gt 0 ]; then echo "$1"; else cat; fi | sed -n 's/^bench: median \([0-9.]*\) ms.*/\1/p'
}
run() {
  out=$("$tool" run $f "$@" --target cuda --timeout 30 --bench 5 2>&1)
  if ! echo "$out" | grep -q '^PASS$'; then echo "$out" | tail -5 >&2; echo "FAILED: $*" >&2; return 1; fi
  median "$out"
}
put=$(run --entry put_loop --ranks 2 -D n=$n -D chunk=65536 -D reps=$reps -D threads=256 --check-against put_loop_ref) || exit 1
copy=$(run --entry copy_loop --ranks 2 -D n=$n -D chunk=65536 -D reps=$reps -D threads=256 --check-against copy_loop_ref) || exit 1
pp_reps=10000
pp=$(run --entry ping_pong --ranks 2 -D reps=$pp_reps --check-against ping_pong_ref) || exit 1
# GEMM + reduce-scatter, 2 local ranks, fp16 1024 x 1024 x 1024 per rank:
# T.reduce_scatter after the whole GEMM vs the overlapped epilogue push
# (each launch waits for its own `round`); not checked here (dist_gpu_check)
g="-D M=1024 -D N=1024 -D KP=1024 -D P=2 -D block_M=128 -D block_N=128"
rs=$("$tool" run examples/distributed/tp_gemm.py --entry gemm_rs --ranks 2 $g --target cuda --timeout 30 --bench 10 2>&1 | median)
rso=$("$tool" run examples/distributed/tp_gemm.py --entry gemm_rs_overlap --ranks 2 $g --in round=1 --target cuda --timeout 30 --bench 10 2>&1 | median)
echo "GEMM-RS 1024^3 fp16, 2 ranks: after the GEMM ${rs:-FAILED} ms, overlapped ${rso:-FAILED} ms per launch"
# all-gather of 4 local ranks, 16 MiB (fp16 4096 x 2048) per rank, pushed
# with T.putmem_nbi_block (examples/distributed/allgather.py) against the
# same 16 copies done by cudaMemcpyAsync (torch's copy_), same run
ag=$("$tool" run examples/distributed/allgather.py --entry allgather --ranks 4 -D PE_num=4 -D M=16384 -D N=2048 --target cuda --timeout 30 --bench 10 2>&1 | median)
mc=$(python3 -c "
import torch
n = 4096 * 2048
src = [torch.randn(n, device='cuda').half() for _ in range(4)]
dst = [torch.empty(4 * n, device='cuda').half() for _ in range(4)]
def go():
    for d in range(4):
        for s in range(4):
            dst[d][s * n:(s + 1) * n].copy_(src[s])
go(); torch.cuda.synchronize()
e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
e0.record()
for _ in range(10): go()
e1.record(); torch.cuda.synchronize()
print('%.4f' % (e0.elapsed_time(e1) / 10))
" 2>/dev/null)
echo "all-gather 4 ranks x 16 MiB fp16: ours ${ag:-FAILED} ms per launch (whole launch), cudaMemcpyAsync x16 ${mc:-n/a} ms"
# the device-to-device copy by cudaMemcpyAsync (torch's copy_) of the same
# 2 x 64 MiB per repetition: the baseline for the put
d2d=$(python3 -c "
import torch
n = $n
x = [torch.randn(n, device='cuda') for _ in range(2)]
y = [torch.empty(n, device='cuda') for _ in range(2)]
def go():
    for r in range(2):
        y[r].copy_(x[r])
go(); torch.cuda.synchronize()
e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
e0.record()
for _ in range($reps): go()
e1.record(); torch.cuda.synchronize()
print('%.4f' % e0.elapsed_time(e1))
" 2>/dev/null)
[ -n "$d2d" ] && awk -v d="$d2d" -v p="$put" -v n="$n" -v reps="$reps" 'BEGIN {
  b = 2 * 2 * n * 4 * reps
  printf "cudaMemcpyAsync D2D, same bytes: %.3f ms (%.2f TB/s); T.put_block at %.1f%% of it\n", d, b / (d * 1e-3) / 1e12, 100 * d / p }'
awk -v put="$put" -v copy="$copy" -v pp="$pp" -v n="$n" -v reps="$reps" -v ppr="$pp_reps" 'BEGIN {
  bytes = 2 * 2 * n * 4 * reps   # 2 ranks, read + write, float32, reps
  printf "%-44s %10s %12s\n", "case", "ms/launch", "figure"
  printf "%-44s %10.3f %9.2f TB/s\n", "T.put_block 64 MiB, 2 ranks -> peer", put, bytes / (put * 1e-3) / 1e12
  printf "%-44s %10.3f %9.2f TB/s\n", "same copy local (dst_pe=-1, baseline)", copy, bytes / (copy * 1e-3) / 1e12
  printf "%-44s %10s %11.1f%%\n", "put / local copy", "", 100 * copy / put
  printf "%-44s %10.3f %9.2f us\n", "signal round trip (st + wait_ge, 2 ranks)", pp, pp * 1e3 / ppr
}'
