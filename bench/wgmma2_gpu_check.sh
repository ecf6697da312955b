#!/bin/bash
# wgmma2_gpu_check.sh — the pipelined wgmma gemm left in flight across the
# loop's steps (inject_pipeline, TsCaps.wgmma_inflight; doc/HOPPER.md) on the H200:
#
#  1. correctness against the C target (--check-target c: every element; the
#     CUDA output poisoned first by the runner) of examples/gemm.py (fp16, bf16,
#     tails, 2/3/4 stages, 1 and 2 warpgroups, trip counts below the stage
#     count, one stage as before) and tests/run/kernels/wgmma_gemm.py
#     (transpose_B pipelined, transpose_A, T.wgmma_gemm), each compiled with
#     the default (TILESCALE_CUDA_WGMMA_INFLIGHT unset, AUTO: each gemm waiting
#     for its own group with two stages, =1 with more) and =3 (SLOT: wait_group 1
#     before the step's barrier, copies one step less ahead; with two stages =2,
#     ONE: wait_group 1 after the next gemm), three of them also with =1 (TOP:
#     wait_group 0 before the barrier);
#     the printed CUDA must hold the wait the mode stands for;
#  2. compute-sanitizer racecheck and synccheck on small pipelined runs (2 and 3
#     stages, 1 and 2 warpgroups);
#  3. timing: bench/gpu_bench.py's GEMM rows for examples/gemm.py (4096^3 and
#     8192^3 fp16/bf16 at 128x256x128, 2 stages, 256 threads; extra rows
#     8192^3 128x256x64 3 stages and 128x128x64 3 stages 128 threads) beside
#     cuBLAS (torch.matmul, every output checked), with the variant rows
#     "inflight 0" (each gemm waits for its own group: before this change)
#     and "inflight 1".
#
#   B=build-gpu bash bench/wgmma2_gpu_check.sh       # from the repository root
#   NO_BENCH=1 ...: parts 1 and 2 only.
#
# Without a GPU nothing runs (exit 77).  Exit 1 if a result is wrong, a wait is
# missing from the CUDA or a sanitizer reports an error.  Last line: N passed, N failed.
set -u
cd "$(dirname "$0")/.."
B=${B:-build-gpu}
T=$B/tilescale
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$PATH:/usr/local/cuda/bin
export TILESCALE_CACHE_DIR=$PWD/$B/kcache
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
[ -d "$B" ] || cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$B" -j"$(nproc)" --target tilescale_cli >/dev/null || { echo "BUILD FAILED"; exit 1; }
echo "commit $(git rev-parse --short HEAD 2>/dev/null) $(git status --porcelain 2>/dev/null | grep -q . && echo '(+ uncommitted changes)'), $(date -u '+%F %H:%M UTC')"
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); }
G=examples/gemm.py
K=tests/run/kernels/wgmma_gemm.py
# run MODE WANT label file args...: WANT = the wait the loop must print
# ("wait<1>", "wait<0>" or "-": not looked at)
run() {
  local mode=$1 want=$2 label=$3 file=$4; shift 4
  local e="TILESCALE_CUDA_ARCH=sm_90a TILESCALE_CUDA_WGMMA_INFLIGHT=$mode"
  local src; src=$(env $e timeout 120 "$T" compile "$file" --target cuda --emit cuda "$@" 2>&1)
  local n; n=$(echo "$src" | grep -c 'wgmma\.mma_async')
  local w=ok
  if [ "$want" != - ]; then
    # the gemm's call is followed (after its register fence) by the wait the mode places
    if [ "$want" = "wait<1>" ]; then
      echo "$src" | grep -q '^ *ts_wgmma_wait<1>' || w=missing
    else
      echo "$src" | grep -B3 -E '^ +__syncthreads' | grep -q 'ts_wgmma_wait<0>' || w=missing
    fi
  fi
  local out; out=$(env $e timeout 300 "$T" run "$file" --target cuda --check-target c "$@" 2>&1)
  local v; v=$(echo "$out" | grep -Eo "PASS|FAIL" | head -1)
  echo "| $label | inflight=$mode | ${v:-ERROR} | $([ "$n" -gt 0 ] && echo wgmma || echo 'NOT wgmma') | $want $w |"
  if [ "$v" = PASS ] && [ "$n" -gt 0 ] && [ $w = ok ]; then ok; else bad; echo "$out" | tail -6; fi
}
both() { # label file args: pipelined: the default (auto: 0 with two stages, 1 with more), SLOT (3; ONE = 2 with two stages)
  run auto - "$@"
  run 3 "wait<1>" "$@"
}
all3() { # ... and TOP (1)
  both "$@"
  run 1 "wait<0>" "$@"
}
echo "| case (sm_90a) vs C target | mode | result | instruction | wait in the loop |"
echo "|---|---|---|---|---|"
all3 "gemm 1024³ fp16 128x256x128 2 st 256 thr (bench tile)" $G --entry matmul -D M=1024 -D N=1024 -D K=1024 -D block_M=128 -D block_N=256 -D block_K=128 -D num_stages=2 -D threads=256
both "gemm 1024³ bf16 128x256x128 2 st 256 thr" $G --entry matmul -D M=1024 -D N=1024 -D K=1024 -D block_M=128 -D block_N=256 -D block_K=128 -D num_stages=2 -D threads=256 -D dtype=bfloat16
both "gemm 1024³ fp16 128x128x32 3 st 128 thr" $G --entry matmul -D M=1024 -D N=1024 -D K=1024
all3 "gemm 1000³ (tails) 128x128x32 3 st" $G --entry matmul -D M=1000 -D N=1000 -D K=1000
both "gemm 520x264x200 (tails) bf16 64x64x32 3 st" $G --entry matmul -D M=520 -D N=264 -D K=200 -D block_M=64 -D block_N=64 -D block_K=32 -D dtype=bfloat16
both "gemm 256x128x96 64x32x16 3 st (32B A, 64B B)" $G --entry matmul -D M=256 -D N=128 -D K=96 -D block_M=64 -D block_N=32 -D block_K=16
both "gemm 256³ 64x256x64 2 st 256 thr (warpgroups over N)" $G --entry matmul -D M=256 -D N=256 -D K=256 -D block_M=64 -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=2
both "gemm 2048³ fp16 128x256x64 3 st 256 thr" $G --entry matmul -D M=2048 -D N=2048 -D K=2048 -D block_M=128 -D block_N=256 -D block_K=64 -D num_stages=3 -D threads=256
both "gemm 1024x768x2048 bf16 128x128x64 4 st 128 thr" $G --entry matmul -D M=1024 -D N=768 -D K=2048 -D block_M=128 -D block_N=128 -D block_K=64 -D num_stages=4 -D dtype=bfloat16
both "gemm 512x512x64 128x128x32 4 st (2 steps < 3 in flight)" $G --entry matmul -D M=512 -D N=512 -D K=64 -D num_stages=4
both "gemm 256x256x40 128x128x32 2 st (2 steps, tail K)" $G --entry matmul -D M=256 -D N=256 -D K=40 -D num_stages=2
all3 "gemm 384x512x1000 bf16 128x256x64 4 st 256 thr (tail K)" $G --entry matmul -D M=384 -D N=512 -D K=1000 -D block_M=128 -D block_N=256 -D block_K=64 -D num_stages=4 -D threads=256 -D dtype=bfloat16
run auto - "gemm 512³ 128x128x32 1 stage (two stages: pipeline_planning)" $G --entry matmul -D M=512 -D N=512 -D K=512 -D num_stages=1
both "transpose_B 1024x512x768 2 st" $K --entry gemm_tb -D M=1024 -D N=512 -D K=768
both "transpose_B 1000x520x200 (tails) 64x64x32 3 st" $K --entry gemm_tb -D M=1000 -D N=520 -D K=200 -D block_M=64 -D block_N=64 -D block_K=32 -D num_stages=3
run auto - "transpose_A 512x256x320" $K --entry gemm_ta -D M=512 -D N=256 -D K=320
run auto - "T.wgmma_gemm x2 + T.wait_wgmma(0) 512x256x512" $K --entry gemm_async -D M=512 -D N=256 -D K=512
run auto - "T.wgmma_gemm pipe, two accumulators 256x256x512" $K --entry gemm_async_pipe -D M=256 -D N=256 -D K=512
if command -v compute-sanitizer >/dev/null; then
  san() { # label, then the tilescale arguments
    local label=$1; shift
    for tool in racecheck synccheck memcheck; do
      local r; r=$(env TILESCALE_CUDA_ARCH=sm_90a timeout 200 compute-sanitizer --tool $tool "$T" run "$@" --target cuda 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard" | head -3 | tr '\n' ' ')
      echo "sanitizer $tool $label: $r"
      if echo "$r" | grep -Eq "ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards"; then ok; else bad; fi
    done
  }
  san "gemm 256x256x512 128x256x128 2 st 256 thr" $G --entry matmul -D M=256 -D N=256 -D K=512 -D block_M=128 -D block_N=256 -D block_K=128 -D num_stages=2 -D threads=256
  san "gemm 200x136x168 64x64x32 3 st 128 thr" $G --entry matmul -D M=200 -D N=136 -D K=168 -D block_M=64 -D block_N=64 -D block_K=32
else
  echo "compute-sanitizer not found: sanitizer runs skipped"
fi
if [ -z "${NO_BENCH:-}" ]; then
  # cuBLAS / ours (auto: 0 with two stages, 1 with more) / inflight 0, 1, 3 (2 was batch 1's); same inputs, every output checked
  if TILESCALE_CUDA_ARCH=sm_90a TS_BENCH_VARIANTS="inflight 0:TILESCALE_CUDA_WGMMA_INFLIGHT=0;inflight 1:TILESCALE_CUDA_WGMMA_INFLIGHT=1;inflight 3:TILESCALE_CUDA_WGMMA_INFLIGHT=3" \
    TS_BENCH_GEMM="8192:128x256x64:3:256:float16;8192:128x128x64:3:128:float16" \
    TS=$PWD/$T PYTHONUNBUFFERED=1 timeout 330 python3 bench/gpu_bench.py --only "gemm.py matmul" --no-tilelang; then ok; else bad; fi
fi
echo "wgmma2_gpu_check: $pass passed, $fail failed"
[ $fail = 0 ]
