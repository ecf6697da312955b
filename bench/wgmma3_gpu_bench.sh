#!/bin/bash
# wgmma3_gpu_bench.sh — one short timing (~2 min) of the pipelined wgmma gemm's default
# (TILESCALE_CUDA_WGMMA_INFLIGHT unset = AUTO: TOP with three stages or more) beside cuBLAS,
# the form before session 11 ("inflight 0": each gemm waits for its own group) and SLOT
# ("inflight 3": one barrier per step, copies one step less ahead), on the rows where the modes
# differ: examples/gemm.py 4000^3 128x128x32 3 stages (TileLang's default tile) and 8192^3 fp16
# 128x256x64 at 3 and 4 stages, 128x128x64 3 stages 128 threads.  Every output checked against
# cuBLAS (bench/gpu_bench.py).  B=build-gpu bash bench/wgmma3_gpu_bench.sh; exit 1 if a result is wrong.
set -u
cd "$(dirname "$0")/.."
B=${B:-build-gpu}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$PATH:/usr/local/cuda/bin
export TILESCALE_CACHE_DIR=$PWD/$B/kcache
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
[ -d "$B" ] || cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$B" -j"$(nproc)" --target tilescale_cli >/dev/null || { echo "BUILD FAILED"; exit 1; }
echo "commit $(git rev-parse --short HEAD 2>/dev/null), $(date -u '+%F %H:%M UTC')"
if TILESCALE_CUDA_ARCH=sm_90a \
  TS_BENCH_VARIANTS="inflight 0:TILESCALE_CUDA_WGMMA_INFLIGHT=0;inflight 3:TILESCALE_CUDA_WGMMA_INFLIGHT=3" \
  TS_BENCH_GEMM="8192:128x256x64:3:256:float16;8192:128x256x64:4:256:float16;8192:128x128x64:3:128:float16" \
  TS=$PWD/$B/tilescale PYTHONUNBUFFERED=1 timeout 300 python3 bench/gpu_bench.py --only "(extra),4000³ fp16 (partial tiles)" --no-tilelang; then
  echo "wgmma3_gpu_bench: 1 passed, 0 failed"
else
  echo "wgmma3_gpu_bench: 0 passed, 1 failed"
  exit 1
fi
