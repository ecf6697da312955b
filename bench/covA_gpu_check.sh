#!/bin/bash
# covA_gpu_check.sh — session 6's front-end constructs of issue 8 part D on a real
# GPU (about 30 s): views of another dtype, T.view(buf, shape=, dtype=)
# (tests/run/kernels/view_dtype.py: uint16/float32 views of bfloat16 and float16
# shared tiles with NaN patterns forced in, a float32 tile read as uint16 halves,
# a gemm accumulator through a float32 scratch over a bfloat16 tile), each
#   - on the CUDA target against the same kernel on the C target, bit-exact for the
#     integer outputs (the NaN payloads must come out unchanged), and
#   - on the CUDA target against its naive kernel run on the GPU;
# then test_cuda_nvrtc (which launches its view_dtype cases against the C target
# when a device is present).
#
#   bash bench/covA_gpu_check.sh      # from the repository root; builds ./build-gpu ($B)
# Exit status 1 if anything failed.
set -u
cd "$(dirname "$0")/.."
B=${B:-build-gpu}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TILESCALE_CACHE_DIR=$PWD/$B/kcache
if [ ! -x "$B/tilescale" ] || [ ! -x "$B/tests/test_cuda_nvrtc" ]; then
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
    cmake --build "$B" -j"$(nproc)" --target tilescale_cli tilescale test_cuda_nvrtc >/dev/null || { echo "BUILD FAILED"; exit 1; }
fi
T=$B/tilescale
fails=0
check() {
  local label=$1
  shift
  local out
  out=$("$T" run "$@" --seed 11 2>&1)
  if [ $? -eq 0 ] && echo "$out" | grep -q '^PASS$'; then echo "PASS $label"; else echo "FAIL $label"; echo "$out" | tail -12; fails=$((fails + 1)); fi
}
V=tests/run/kernels/view_dtype.py
C="--target cuda --check-target c"
check "bits_copy 64x64 (cuda vs c, bit-exact)" $V --entry bits_copy $C --atol 0 --rtol 0
check "bits_copy 4096x256 block_M=64 (cuda vs c, bit-exact)" $V --entry bits_copy -D M=4096 -D N=256 -D block_M=64 $C --atol 0 --rtol 0
check "bits_copy 4096x256 vs gpu naive" $V --entry bits_copy -D M=4096 -D N=256 -D block_M=64 --target cuda --check-against bits_copy_naive
check "narrow_read 32x48 (cuda vs c, bit-exact)" $V --entry narrow_read $C --atol 0 --rtol 0
check "narrow_read 5x7 vs gpu naive" $V --entry narrow_read -D M=5 -D N=7 --target cuda --check-against narrow_read_naive
check "scratch_reuse 64x32x64 (cuda vs c)" $V --entry scratch_reuse $C --rtol 1e-5 --atol 1e-5
check "scratch_reuse 1024x256x128 block_M=64 vs gpu naive" $V --entry scratch_reuse -D M=1024 -D K=256 -D N=128 -D block_M=64 --target cuda --check-against scratch_reuse_naive --rtol 1e-3 --atol 1e-3
out=$("$B/tests/test_cuda_nvrtc" 2>&1)
if [ $? -eq 0 ]; then echo "PASS test_cuda_nvrtc (launches: $(echo "$out" | grep -c 'launch') lines)"; else echo "FAIL test_cuda_nvrtc"; echo "$out" | grep -i "fail\|view_dtype" | tail -12; fails=$((fails + 1)); fi
echo "failed: $fails"
[ $fails -eq 0 ]
