#!/bin/bash
# cov7_gpu_check.sh — session 7's front-end constructs of issue 8 part D on a
# real GPU (about 20 s): TileLang's register hints (T.annotate_producer_reg_dealloc
# / T.annotate_consumer_reg_alloc / T.set_max_nreg / T.inc_max_nreg /
# T.dec_max_nreg: setmaxnreg on sm_90a) and hand-committed element copies
# (T.Parallel(prefer_async=True), T.ptx_commit_group/T.ptx_wait_group), in the
# warp-specialized GEMMs of tests/run/kernels/reg_hints.py, each on the CUDA
# target against its naive GEMM on the GPU, compiled for plain sm_90 (the hints
# compiled out) and for sm_90a (setmaxnreg executed); then T.make_tensor
# (tests/run/kernels/make_tensor.py) where present.
#
#   bash bench/cov7_gpu_check.sh      # from the repository root; builds ./build-gpu ($B)
# Exit status 1 if anything failed, 77 without a GPU.
set -u
cd "$(dirname "$0")/.."
B=${B:-build-gpu}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TILESCALE_CACHE_DIR=$PWD/$B/kcache
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then echo "skipped: no GPU"; exit 77; fi
if [ ! -x "$B/tilescale" ]; then
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
    cmake --build "$B" -j"$(nproc)" --target tilescale_cli tilescale >/dev/null || { echo "BUILD FAILED"; exit 1; }
fi
T=$B/tilescale
fails=0
check() {
  local label=$1
  shift
  local out
  out=$("$T" run "$@" --seed 7 2>&1)
  if [ $? -eq 0 ] && echo "$out" | grep -q '^PASS$'; then echo "PASS $label"; else echo "FAIL $label"; echo "$out" | tail -12; fails=$((fails + 1)); fi
}
R=tests/run/kernels/reg_hints.py
for arch in sm_90 sm_90a; do
  for e in ws_hinted ws_set_nreg; do
    TILESCALE_CUDA_ARCH=$arch check "$e 256^3 $arch" $R --entry $e --target cuda --check-against matmul_naive
    TILESCALE_CUDA_ARCH=$arch check "$e 512x384x1024 $arch" $R --entry $e -D M=512 -D N=384 -D K=1024 --target cuda --check-against matmul_naive
  done
done
if [ -f tests/run/kernels/make_tensor.py ]; then
  M=tests/run/kernels/make_tensor.py
  check "make_tensor grouped gemm (cuda vs c)" $M --entry grouped_ptr --target cuda --check-target c --rtol 1e-3 --atol 1e-3
fi
echo "cov7_gpu_check: $fails failed"
[ $fails -eq 0 ]
