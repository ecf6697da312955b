#!/bin/sh
# bench/run.sh — build Release in build-bench and run the benchmarks.
#
# Prints, in Markdown, the machine facts bench/RESULTS.md records (date,
# commit, CPU, core count, compiler), then the output of
#   bench_compile  front end / cold / warm compile times (examples/gemm.py,
#                  examples/flash_attention.py),
#   bench_cpu      CPU GEMM run time vs a naive C GEMM, with the C target's
#                  default flags and again with TILESCALE_CFLAGS=-march=native,
#   and the wall time of one `tilescale compile --emit c` process (what a
#   CLI user pays for the front end, process start included), next to that
#   of /bin/true timed the same way.
# Kernels built by bench_cpu go to a private cache (build-bench/kcache-bench),
# never ~/.cache.  bench_compile makes and removes its own /tmp directories.
#
# Usage: sh bench/run.sh [--quick]     (--quick: fewer runs, smaller GEMM)
# In a tree exported with `git archive` (no .git), set TS_BENCH_COMMIT to the
# commit it came from so that the report names it.
set -eu
cd "$(dirname "$0")/.."
B=build-bench
quick=${1:-}

cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$B" -j2 --target tilescale_cli bench_compile bench_cpu >/dev/null

export TILESCALE_CACHE_DIR="$PWD/$B/kcache-bench"
unset TILESCALE_CFLAGS || true

echo "## Run of $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
if git rev-parse --git-dir >/dev/null 2>&1; then
    commit="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src include CMakeLists.txt || echo ' (plus uncommitted changes in src/, include/ or CMakeLists.txt)')"
else
    commit="${TS_BENCH_COMMIT:-unknown} (exported tree, no .git)"
fi
echo "- commit: $commit"
echo "- CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) online CPUs ($(lscpu | sed -n 's/^Hypervisor vendor: *//p' | sed 's/^\(.\)/hypervisor \1/'))"
echo "- compiler: $(${CC:-cc} --version | head -1)"
echo "- load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

if [ "$quick" = "--quick" ]; then
    "$B/bench/bench_compile" --fe 50 --cold 2 --warm 10
    echo
    "$B/bench/bench_cpu" --size 512 --runs 3 --naive-runs 2
    echo
    TILESCALE_CFLAGS=-march=native "$B/bench/bench_cpu" --size 512 --runs 3 --naive-runs 1
else
    "$B/bench/bench_compile"
    echo
    "$B/bench/bench_cpu"
    echo
    TILESCALE_CFLAGS=-march=native "$B/bench/bench_cpu" --naive-runs 1
fi

echo
echo "### One CLI process: \`tilescale compile examples/gemm.py --entry matmul ... --emit c\` (20 runs)"
echo
# Wall time of a command, 20 runs, from a shell loop: includes fork/exec, so
# /bin/true is timed the same way as the floor to subtract.
time20() {
    i=0
    ts=""
    while [ $i -lt 20 ]; do
        t0=$(date +%s%N)
        "$@" >/dev/null
        t1=$(date +%s%N)
        ts="$ts $(( (t1 - t0) / 1000 ))"
        i=$((i + 1))
    done
    echo "$ts" | tr ' ' '\n' | grep . | sort -n |
        awk '{v[NR]=$1} END {printf "median %.2f ms, min %.2f ms", (v[int((NR+1)/2)]+v[int(NR/2)+1])/2000, v[1]/1000}'
}
echo "- tilescale compile: $(time20 "$B/tilescale" compile examples/gemm.py --entry matmul -D M=1024 -D N=1024 \
    -D K=1024 -D block_M=128 -D block_N=128 -D block_K=32 --emit c)"
echo "- /bin/true, same loop (process start floor): $(time20 /bin/true)"
echo
echo "- load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
