#!/bin/bash
# wgmma_gpu_check.sh — T.gemm on sm_90a's wgmma.mma_async (doc/HOPPER.md; the
# default on sm_90a since this passed on 2026-12-02, TILESCALE_CUDA_WGMMA=0: off) on the H200:
#
#  1. correctness against the C target (--check-target c: every element) of
#     examples/gemm.py (fp16, bf16, tails, 1 and 2 warpgroups, 32B/64B/128B
#     swizzles) and tests/run/kernels/wgmma_gemm.py (transpose_B,
#     transpose_A, T.wgmma_gemm + T.wait_wgmma), with
#     TILESCALE_CUDA_ARCH=sm_90a TILESCALE_CUDA_WGMMA=1;
#  2. compute-sanitizer memcheck, racecheck and synccheck on small runs;
#  3. timing: bench/gpu_bench.py's GEMM rows (4096³/8192³, fp16/bf16, and the
#     1024/2048 sizes added here) with three columns: cuBLAS (torch.matmul,
#     every output checked against it), ours on wgmma (the default row: sm_90a
#     and TILESCALE_CUDA_WGMMA on by default since 2026-12-02) and ours on
#     mma.sync (the "mma.sync" variant row, TILESCALE_CUDA_WGMMA=0).
#
#   B=build-gpu bash bench/wgmma_gpu_check.sh          # from the repository root
#   NO_BENCH=1 ...: parts 1 and 2 only (~1 min); the bench adds ~3-4 min.
#
# Without a GPU nothing runs (exit 77, as the GPU-only tests do).  Exit 1 if a
# result is wrong or a sanitizer reports an error.
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
fail=0
WG="TILESCALE_CUDA_ARCH=sm_90a TILESCALE_CUDA_WGMMA=1"
G=examples/gemm.py
K=tests/run/kernels/wgmma_gemm.py
run() { # label, file, then the tilescale arguments
  local label=$1 file=$2; shift 2
  local src; src=$(env $WG "$T" compile "$file" --target cuda --emit cuda "$@" 2>&1)
  local n; n=$(echo "$src" | grep -c 'wgmma\.mma_async')
  local out; out=$(env $WG "$T" run "$file" --target cuda --check-target c "$@" 2>&1)
  local v; v=$(echo "$out" | grep -Eo "PASS|FAIL" | head -1)
  echo "| $label | ${v:-ERROR} | $([ "$n" -gt 0 ] && echo wgmma || echo 'NOT wgmma') |"
  [ "$v" = PASS ] && [ "$n" -gt 0 ] || { fail=1; echo "$out" | tail -8; }
}
echo "| case (sm_90a, TILESCALE_CUDA_WGMMA=1) vs C target | result | instruction |"
echo "|---|---|---|"
run "gemm 1024³ fp16 128x256x128 2 stages 256 thr (bench tile)" $G --entry matmul -D M=1024 -D N=1024 -D K=1024 -D block_M=128 -D block_N=256 -D block_K=128 -D num_stages=2 -D threads=256
run "gemm 1024³ bf16 128x256x128 2 stages 256 thr" $G --entry matmul -D M=1024 -D N=1024 -D K=1024 -D block_M=128 -D block_N=256 -D block_K=128 -D num_stages=2 -D threads=256 -D dtype=bfloat16
run "gemm 1024³ fp16 128x128x32 3 stages 128 thr (TileLang default)" $G --entry matmul -D M=1024 -D N=1024 -D K=1024
run "gemm 1000x1000x1000 (tails) 128x128x32" $G --entry matmul -D M=1000 -D N=1000 -D K=1000
run "gemm 520x264x200 (tails) bf16 64x64x32" $G --entry matmul -D M=520 -D N=264 -D K=200 -D block_M=64 -D block_N=64 -D block_K=32 -D dtype=bfloat16
run "gemm 256x128x96 64x32x16 (32B A, 64B B)" $G --entry matmul -D M=256 -D N=128 -D K=96 -D block_M=64 -D block_N=32 -D block_K=16
run "gemm 256³ 64x256x64 256 thr (warpgroups over N)" $G --entry matmul -D M=256 -D N=256 -D K=256 -D block_M=64 -D block_N=256 -D block_K=64 -D threads=256
run "gemm 2048³ fp16 128x256x64 3 stages 256 thr" $G --entry matmul -D M=2048 -D N=2048 -D K=2048 -D block_M=128 -D block_N=256 -D block_K=64 -D num_stages=3 -D threads=256
run "transpose_B 1024x512x768" $K --entry gemm_tb -D M=1024 -D N=512 -D K=768
run "transpose_B 1000x520x200 (tails) 64x64x32" $K --entry gemm_tb -D M=1000 -D N=520 -D K=200 -D block_M=64 -D block_N=64 -D block_K=32
run "transpose_A 512x256x320" $K --entry gemm_ta -D M=512 -D N=256 -D K=320
run "T.wgmma_gemm x2 + T.wait_wgmma(0) 512x256x512" $K --entry gemm_async -D M=512 -D N=256 -D K=512
if command -v compute-sanitizer >/dev/null; then
  san() { # label, then the tilescale arguments
    local label=$1; shift
    for tool in memcheck racecheck synccheck; do
      local r; r=$(env $WG compute-sanitizer --tool $tool "$T" run "$@" --target cuda 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard" | head -3 | tr '\n' ' ')
      echo "sanitizer $tool $label: $r"
      echo "$r" | grep -Eq "ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards" || fail=1
    done
  }
  san "gemm 256³ 128x256x128 256 thr" $G --entry matmul -D M=256 -D N=256 -D K=256 -D block_M=128 -D block_N=256 -D block_K=128 -D num_stages=2 -D threads=256
  san "gemm 200x136x88 64x64x32" $G --entry matmul -D M=200 -D N=136 -D K=88 -D block_M=64 -D block_N=64 -D block_K=32
  san "gemm_async 128x128x128" $K --entry gemm_async -D M=128 -D N=128 -D K=128
else
  echo "compute-sanitizer not found: sanitizer runs skipped"
fi
if [ -z "${NO_BENCH:-}" ]; then
  # cuBLAS / ours on wgmma / ours on mma.sync, same inputs, every output checked (gpu_bench.py's essay)
  TILESCALE_CUDA_ARCH=sm_90a TS_BENCH_VARIANTS="mma.sync:TILESCALE_CUDA_WGMMA=0" \
  TS_BENCH_GEMM="1024:128x256x128:2:256:float16;2048:128x256x128:2:256:float16;8192:128x256x64:3:256:float16;8192:128x128x64:3:128:float16" \
  TS=$PWD/$T PYTHONUNBUFFERED=1 python3 bench/gpu_bench.py --only "gemm.py matmul" --no-tilelang || fail=1
fi
echo "wgmma_gpu_check: $([ $fail = 0 ] && echo ALL PASSED || echo FAILURES)"
exit $fail
