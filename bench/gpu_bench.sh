#!/bin/bash
# gpu_bench.sh — our GPU kernels beside the vendor libraries and TileLang
# 0.1.15, in one command on the lent H200:
#
#   bench/gpu_bench.sh [--quick] [--only SUBSTR,...] [--no-tilelang]
#   bench/gpu_bench.sh --compile-only       # compile times only (bench_compile)
#
# from the repository root; logs and tables go to $OUT (or /tmp).
# 1. builds the CLI and bench_compile (cmake, Release, build dir $B; a warm
#    machine keeps it between calls, so a second call only relinks);
# 2. --compile-only: bench/bench_compile (front end, NVRTC cold, cache hit,
#    CUDA context and module load, every example, both targets) into
#    $OUT/bench_compile.md, and nothing else;
#    otherwise: bench/gpu_bench.py, the table of issue 5 (reference /
#    TileLang / ours, ratios, element-by-element checks; see its essay).
# TileLang runs where `import tilelang` works: its wheels installed with
# pip --target /tmp/site (../shared/tools/tilelang-wheels.sh says how; two
# device calls, because they exceed what one call carries), PYTHONPATH set
# to it (done here when /tmp/site exists).  Without them its column is
# empty and everything else runs.
# Exit status 1 if the build failed or one of our results was wrong.
set -u
cd "$(dirname "$0")/.."
B=${B:-build-gpu}
LOGDIR=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TILESCALE_CACHE_DIR=$PWD/$B/kcache
export PATH=$PATH:/usr/local/cuda/bin
if [ -d /tmp/site ]; then export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}; fi
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv 2>&1
if ! { cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release &&
       cmake --build "$B" -j"$(nproc)" --target tilescale_cli bench_compile; } >/tmp/gpu_bench_build.log 2>&1; then
  tail -40 /tmp/gpu_bench_build.log
  echo "BUILD FAILED"
  exit 1
fi
echo "build: $(($(date +%s) - t0)) s; commit $(git rev-parse --short HEAD 2>/dev/null) $(git status --porcelain 2>/dev/null | grep -q . && echo '(+ uncommitted changes)'), $(date -u '+%F %H:%M UTC')"
if [ "${1:-}" = "--compile-only" ]; then
  python3 -c 'import tilelang, sys; print("tilelang importable:", tilelang.__version__)' 2>&1 | tail -1
  "$B/bench/bench_compile" --fe 50 --cold 3 --warm 20 | tee "$LOGDIR/bench_compile.md"
  rc=${PIPESTATUS[0]}
  echo "bench_compile: $(($(date +%s) - t0)) s"
  exit $rc
fi
TS=$PWD/$B/tilescale PYTHONUNBUFFERED=1 python3 bench/gpu_bench.py "$@"
rc=$?
echo "bench: $(($(date +%s) - t0)) s"
exit $rc
