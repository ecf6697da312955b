#!/bin/bash
# review_gpu_check.sh — session 10's review items on the H200 (about 3-5 minutes):
#
#  1. pass wgmma_waits (src/pass/wgmma_waits.c): each T.wait_wgmma fences the
#     accumulators it completes, no others.  tests/run/kernels/wgmma_gemm.py's
#     gemm_async_pipe (two accumulators, each wgmma group left pending across
#     the other's issue, wait(1) in the loop, wait(0) after it) and gemm_async
#     (one accumulator, wait(0)) and gemm_async_branch (the accumulators
#     alternating in a run-time branch) on sm_90a's wgmma against the same
#     entry on the C target (every element), plus a ragged size;
#  2. pass poll_marks (src/pass/poll_marks.c: the polling loads, release
#     stores and barriers of blocking kernels, decided in the IR, printed by
#     both targets): test_cuda_nvrtc (its primitives include blocks waiting
#     on each other, every kernel against the C target) and
#     bench/dist_gpu_check.sh (every distributed example, 2 and 4 ranks).
#
#   B=build-gpu bash bench/review_gpu_check.sh     # from the repository root
# One PASS/FAIL line per check, then "N passed, N failed"; exit status 1 if
# anything failed, 77 without a GPU.
set -u
cd "$(dirname "$0")/.."
B=${B:-build-gpu}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$PATH:/usr/local/cuda/bin
export TILESCALE_CACHE_DIR=$PWD/$B/kcache
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then echo "skipped: no GPU"; exit 77; fi
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build "$B" -j"$(nproc)" --target tilescale_cli test_cuda_nvrtc >/dev/null || { echo "BUILD FAILED"; exit 1; }
T=$B/tilescale
pass=0
fail=0
res() { # label ok output (its last 40 lines shown on a failure)
  if [ "$2" = 1 ]; then pass=$((pass + 1)); echo "PASS $1"; else fail=$((fail + 1)); echo "FAIL $1"; echo "$3" | tail -40 | sed 's/^/      /'; fi
}
K=tests/run/kernels/wgmma_gemm.py
wg() { # label entry defines...: sm_90a wgmma against the C target
  local label=$1 entry=$2
  shift 2
  local src out ok=0
  src=$(TILESCALE_CUDA_ARCH=sm_90a "$T" compile $K --entry "$entry" "$@" --target cuda --emit cuda 2>&1)
  out=$(TILESCALE_CUDA_ARCH=sm_90a "$T" run $K --entry "$entry" "$@" --target cuda --check-target c --seed 11 2>&1)
  if echo "$out" | grep -q '^PASS$' && echo "$src" | grep -q 'wgmma\.mma_async'; then ok=1; fi
  res "$label" $ok "$out"
}
wg "wgmma_waits gemm_async_pipe 256x256x512 (wait(1) in the loop, wait(0) after)" gemm_async_pipe -D M=256 -D N=256 -D K=512
wg "wgmma_waits gemm_async_pipe ragged 200x136x200" gemm_async_pipe -D M=200 -D N=136 -D K=200
wg "wgmma_waits gemm_async 256x256x512 (one accumulator, wait(0))" gemm_async -D M=256 -D N=256 -D K=512
wg "wgmma_waits gemm_async_branch 256x256x512 (accumulators alternating in a run-time branch)" gemm_async_branch -D M=256 -D N=256 -D K=512
if command -v compute-sanitizer >/dev/null 2>&1; then
  out=$(TILESCALE_CUDA_ARCH=sm_90a compute-sanitizer --tool racecheck --error-exitcode 9 "$T" run $K --entry gemm_async_pipe \
    -D M=128 -D N=128 -D K=256 --target cuda --check-target c --seed 3 2>&1)
  rc=$?
  res "wgmma_waits gemm_async_pipe racecheck" "$([ $rc -eq 0 ] && echo "$out" | grep -q '^PASS$' && echo 1)" "$out"
fi

out=$("$B/tests/test_cuda_nvrtc" 2>&1)
rc=$?
res "poll_marks test_cuda_nvrtc (primitives incl. blocking kernels vs C target): $(echo "$out" | tail -1)" \
  "$([ $rc -eq 0 ] && echo 1)" "$(echo "$out" | grep -E 'for sm_[0-9a]+:$|error:|FAIL|check failed|differ' | head -40)"
out=$(sh bench/dist_gpu_check.sh "$T" 2>&1)
rc=$?
echo "$out" | grep -E '^(PASS|FAIL) ' | sed 's/^\(PASS\|FAIL\) */\1 poll_marks dist: /'
np=$(echo "$out" | grep -c '^PASS ')
nf=$(echo "$out" | grep -c '^FAIL ')
pass=$((pass + np))
fail=$((fail + nf))
if [ $rc -ne 0 ] && [ "$nf" = 0 ]; then res "poll_marks dist_gpu_check (exit $rc)" 0 "$out"; fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
