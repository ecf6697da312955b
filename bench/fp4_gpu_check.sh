#!/bin/bash
# fp4_gpu_check.sh — T.float4_e2m1fn (OCP MX FP4 E2M1, two codes to a byte) and
# T.mma_gemm_blockscaled (the NVFP4 block-scaled gemm as generic loops) on a real
# GPU (about 1-2 minutes; doc/LANGUAGE.md "T.float4_e2m1fn").
#  1. tests/run/kernels/fp4.py on the CUDA target against the same kernel on the
#     C target (sm_90 and sm_90a): float -> fp4 through a shared tile and through
#     a fragment, fp4 -> float32/bfloat16 (int8 inputs are random bytes: every
#     code), the block-wise quantizer; codes and scales exact;
#  2. through python -m tilescale (carry .tl-examples): bench/fp4_gpu_check.py —
#     the cast table on the device against a hand-written table, quant and
#     gemm_bs against torch, TileLang's deepseek_v4 act_quant (test_fp4_act_quant,
#     its own bit check; test_round_trip_error) and gemm_sm120's NVFP4 example
#     with its own _verify.
#
#   B=build-gpu bash bench/fp4_gpu_check.sh   # from the repository root, carry [".tl-examples"]; builds $B
# One PASS/FAIL line per check, then "N passed, N failed"; exit status 1 if anything failed, 77 without a GPU.
set -u
cd "$(dirname "$0")/.."
B=${B:-build-gpu}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TILESCALE_CACHE_DIR=$PWD/$B/kcache
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then echo "skipped: no GPU"; exit 77; fi
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build "$B" -j"$(nproc)" --target tilescale_cli tilescale >/dev/null || { echo "BUILD FAILED"; exit 1; }
T=$B/tilescale
fails=0
passes=0
check() { # label file entry defines...: CUDA against the C target, same entry, exact
  local label=$1 file=$2 entry=$3
  shift 3
  local out
  out=$("$T" run "$file" --entry "$entry" "$@" --target cuda --check-target c --seed 7 --rtol 0 --atol 0 2>&1)
  if [ $? -eq 0 ] && echo "$out" | grep -q '^PASS$'; then echo "PASS $label"; passes=$((passes + 1))
  else echo "FAIL $label"; echo "$out" | tail -12; fails=$((fails + 1)); fi
}
F=tests/run/kernels/fp4.py
for arch in sm_90 sm_90a; do
  export TILESCALE_CUDA_ARCH=$arch
  check "fp4 to_fp4 float32 N=4096 $arch" $F to_fp4 -D N=4096 -D src=float32
  check "fp4 to_fp4 bfloat16 N=4096 $arch" $F to_fp4 -D N=4096 -D src=bfloat16
  check "fp4 to_fp4_frag float16 96x64 $arch" $F to_fp4_frag -D M=96 -D N=64 -D src=float16
  check "fp4 from_fp4 float32 N=4096 $arch" $F from_fp4 -D N=4096 -D dst=float32
  check "fp4 from_fp4 bfloat16 N=4096 $arch" $F from_fp4 -D N=4096 -D dst=bfloat16
  check "fp4 quant 256x1024 $arch" $F quant -D M=256 -D N=1024
done
unset TILESCALE_CUDA_ARCH
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  out=$(TILESCALE_LIB=$PWD/$B/libtilescale.so PYTHONPATH=$PWD/python timeout 400 python3 -m tilescale bench/fp4_gpu_check.py 2>&1)
  rc=$?
  echo "$out" | grep -E '^(PASS|FAIL) '
  p=$(echo "$out" | grep -c '^PASS ')
  f=$(echo "$out" | grep -c '^FAIL ')
  passes=$((passes + p))
  fails=$((fails + f))
  if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then echo "FAIL fp4_gpu_check.py exited $rc"; echo "$out" | tail -20; fails=$((fails + 1)); fi
  [ "$f" -gt 0 ] && echo "$out" | grep -v -E '^(PASS) ' | tail -40
else
  echo "FAIL torch with CUDA missing: bench/fp4_gpu_check.py not run"; fails=$((fails + 1))
fi
echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
