#!/bin/bash
# arch_hints_gpu_check.sh — pass arch_hints on the GPU (issue 5 part 0,
# about 15 s after the build): TileLang's register hints in the
# warp-specialised GEMMs of tests/run/kernels/reg_hints.py are dropped from
# the IR for sm_90 (the default on the H200) and kept for sm_90a, where the
# CUDA source now prints setmaxnreg without the #if
# __CUDA_ARCH_FEAT_SM90_ALL guard it had before; each kernel runs on the
# CUDA target against its naive GEMM for both architectures, and the sm_90a
# source must hold setmaxnreg, the sm_90 one not.
#
#   B=build-gpu bash bench/arch_hints_gpu_check.sh   # from the repository root; builds $B if needed
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
R=tests/run/kernels/reg_hints.py
fails=0
for arch in sm_90 sm_90a; do
  for e in ws_hinted ws_set_nreg; do
    n=$(TILESCALE_CUDA_ARCH=$arch "$T" compile $R --entry $e --target cuda --emit cuda | grep -c setmaxnreg)
    want=0
    [ $arch = sm_90a ] && want=yes
    if { [ $want = 0 ] && [ "$n" != 0 ]; } || { [ $want = yes ] && [ "$n" = 0 ]; }; then
      echo "FAIL $e $arch: $n setmaxnreg in the source"
      fails=$((fails + 1))
    fi
    for dims in "" "-D M=512 -D N=384 -D K=1024"; do
      # shellcheck disable=SC2086
      out=$(TILESCALE_CUDA_ARCH=$arch "$T" run $R --entry $e $dims --target cuda --check-against matmul_naive --seed 7 2>&1)
      if [ $? -eq 0 ] && echo "$out" | grep -q '^PASS$'; then echo "PASS $e $arch $dims ($n setmaxnreg)"
      else echo "FAIL $e $arch $dims"; echo "$out" | tail -12; fails=$((fails + 1)); fi
    done
  done
done
echo "arch_hints_gpu_check: $fails failed"
[ $fails -eq 0 ]
