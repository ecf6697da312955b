#!/bin/bash
# gpu_bench.sh — our GPU kernels beside the vendor libraries, in one command
# on the lent H200 (a fresh machine per call, so it builds from scratch):
#
#   bench/gpu_bench.sh [--quick]     # from the repository root; logs go to $OUT or /tmp
#
# 1. builds the CLI (cmake, Release, build dir $B, as bench/gpu_check.sh);
# 2. runs bench/gpu_bench.py: (a) examples/gemm.py matmul at 1024^3 and
#    4096^3 (fp16 in, fp32 accumulate, fp16 out) against torch.matmul
#    (cuBLAS); (b) examples/flash_attention.py flashattn, batch 1, 8 heads,
#    2048 tokens, dim 64 and 128, against torch's scaled_dot_product_attention;
#    (c) examples/elementwise_add.py on 8192 x 8192 float32 against torch.add
#    and a device-to-device copy.  Kernel time only: our kernels are timed
#    by the CUDA runtime's benchmark mode (TILESCALE_CUDA_BENCH, CUDA events
#    around each launch on data already on the device), the references with
#    torch.cuda.Event; medians after warm-up.  Each of our results is checked
#    against a float32 torch reference.  GEMM and FlashAttention run twice:
#    "simt" (TILESCALE_CUDA_MMA=0: T.gemm as loops, the code before tensor
#    cores) and "mma" (the default: mma.sync).
# Prints a Markdown table last; gpu_bench.json and gpu_bench.log go to $OUT.
# Exit status 1 if the build failed or a result was wrong.
set -u
cd "$(dirname "$0")/.."
B=${B:-build-gpu}
LOGDIR=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TILESCALE_CACHE_DIR=$PWD/$B/kcache
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv 2>&1
if ! { cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release && cmake --build "$B" -j"$(nproc)" --target tilescale_cli; } \
  >/tmp/gpu_bench_build.log 2>&1; then
  tail -40 /tmp/gpu_bench_build.log
  echo "BUILD FAILED"
  exit 1
fi
echo "build: $(($(date +%s) - t0)) s; commit $(git rev-parse --short HEAD 2>/dev/null) $(git status --porcelain 2>/dev/null | grep -q . && echo '(+ uncommitted changes)'), $(date -u '+%F %H:%M UTC')"
TS=$B/tilescale PYTHONUNBUFFERED=1 python3 bench/gpu_bench.py "$@"
rc=$?
echo "bench: $(($(date +%s) - t0)) s"
exit $rc
