#!/bin/bash
# tmemrace_gpu_check.sh — tensor-memory tiles shared by two thread roles on the
# H200 (TILESCALE_TMEM_SHARED=1: the tile kept in shared memory, pass
# lower_tmem; a T.ws role's one arrive of a tcgen05 gemm / T.tcgen05_mma_arrive
# made by each of the role's threads, the mbarrier expecting that many times
# its count, pass partition_threads; doc/LANGUAGE.md "Tensor memory"):
#
#  1. tests/run/kernels/tmem.py tc_roles and tc_ws, TileLang's
#     gemm_tcgen05/gemm_tcgen5mma_ws.py gemm and flash_attention_sm100
#     {mha,gqa}_fwd_bshd.py flashattn_wasp on the CUDA target against the C
#     target, same inputs (tilescale run --check-target c), sm_90a and sm_90;
#  2. bench/tmemrace_gpu_check.py: the same kernels against torch;
#  3. compute-sanitizer memcheck, racecheck and synccheck on each (small
#     sizes): exit status (--error-exitcode), the summary's 0 errors / 0
#     hazards, and the result still PASS against the C target;
#  4. a planted race that racecheck must report (tc_roles' first role reading
#     the product without waiting for it), so that a clean line above means something.
#
#   B=build-gpu bash bench/tmemrace_gpu_check.sh   # from the repository root, carry [".tl-examples"]
# Prints one PASS/FAIL line per check and "N passed, N failed"; exit 1 if any failed, 77 without a GPU.
set -u
cd "$(dirname "$0")/.."
B=${B:-build-gpu}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$PATH:/usr/local/cuda/bin
export TILESCALE_CACHE_DIR=$PWD/$B/kcache
export TILESCALE_TMEM_SHARED=1
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then echo "skipped: no GPU"; exit 77; fi
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build "$B" -j"$(nproc)" --target tilescale_cli tilescale >/dev/null || { echo "BUILD FAILED"; exit 1; }
T=$B/tilescale
K=tests/run/kernels/tmem.py
E=.tl-examples
passed=0
failed=0
ok() { echo "PASS $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; echo "$2" | tail -15; failed=$((failed + 1)); }
WASP="-D block_M=64 -D block_N=64 -D threads=256 -D num_stages=2"
GEMM="--entry gemm -D block_M=128 -D block_N=128 -D block_K=64 -D in_dtype=bfloat16 -D out_dtype=bfloat16 -D accum_dtype=float32 -D num_stages=2"
check() { # label file args...: CUDA against the C target, same inputs, within $TOL
  local label=$1 file=$2 tol=${TOL:-1e-4}
  shift 2
  local out
  out=$(timeout 120 "$T" run "$file" "$@" --target cuda --check-target c --seed 7 --rtol $tol --atol $tol 2>&1)
  if [ $? -eq 0 ] && echo "$out" | grep -q '^PASS$'; then ok "$label"; else bad "$label" "$out"; fi
}
have_ex=0
[ -d $E/gemm_tcgen05 ] && [ -d $E/flash_attention_sm100 ] && have_ex=1
for arch in sm_90a sm_90; do
  export TILESCALE_CUDA_ARCH=$arch
  check "tc_roles 256x192x64 $arch" $K --entry tc_roles -D M=256 -D N=192 -D K=64
  check "tc_roles 200x72x32 block_N=32 (ragged) $arch" $K --entry tc_roles -D M=200 -D N=72 -D K=32 -D block_N=32
  check "tc_ws 256x192x320 3 stages $arch" $K --entry tc_ws -D M=256 -D N=192 -D K=320 -D stages=3
  check "tc_ws 96x80x72 2 stages $arch" $K --entry tc_ws -D M=96 -D N=80 -D K=72
  if [ $have_ex = 1 ]; then
    TOL=1e-2 check "gemm_tcgen5mma_ws gemm 512x512x1024 128x128x64 2 stages $arch" $E/gemm_tcgen05/gemm_tcgen5mma_ws.py \
      $GEMM -D M=512 -D N=512 -D K=1024
    for causal in False True; do
      TOL=2e-2 check "mha_fwd_bshd flashattn_wasp 2x4x256 d64 causal=$causal 64x64 tiles $arch" \
        $E/flash_attention_sm100/mha_fwd_bshd.py --entry flashattn_wasp $WASP -D batch=2 -D heads=4 -D seq_len=256 \
        -D dim=64 -D is_causal=$causal
      TOL=2e-2 check "gqa_fwd_bshd flashattn_wasp 2x4x256 d64 groups=2 causal=$causal 64x64 tiles $arch" \
        $E/flash_attention_sm100/gqa_fwd_bshd.py --entry flashattn_wasp $WASP -D batch=2 -D heads=4 -D seq_len=256 \
        -D dim=64 -D is_causal=$causal -D groups=2
    done
  fi
done
export TILESCALE_CUDA_ARCH=sm_90a
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  out=$(TILESCALE_LIB=$B/libtilescale.so PYTHONPATH=python timeout 300 python3 bench/tmemrace_gpu_check.py 2>&1)
  echo "$out" | grep -v '^[0-9]* passed, [0-9]* failed$'
  passed=$((passed + $(echo "$out" | grep -c '^PASS ')))
  failed=$((failed + $(echo "$out" | grep -c '^FAIL ')))
  echo "$out" | grep -q '^[0-9]* passed, [0-9]* failed$' || bad "bench/tmemrace_gpu_check.py ran to its end" "$out"
else
  echo "(torch with CUDA missing: bench/tmemrace_gpu_check.py skipped)"
fi
if command -v compute-sanitizer >/dev/null 2>&1; then
  san() { # label file args...: each tool; exit 0, its summary clean, the result PASS against the C target
    local label=$1 file=$2
    shift 2
    for tool in memcheck racecheck synccheck; do
      local out rc
      out=$(timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 "$T" run "$file" "$@" --target cuda \
        --check-target c --seed 3 --rtol ${TOL:-1e-4} --atol ${TOL:-1e-4} 2>&1)
      rc=$?
      local sum
      sum=$(echo "$out" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | head -2 | tr '\n' ' ')
      local want="ERROR SUMMARY: 0 errors"
      [ $tool = racecheck ] && want="RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"
      if [ $rc -eq 0 ] && echo "$out" | grep -q '^PASS$' && echo "$out" | grep -qF "$want"; then
        ok "$tool $label: $sum"
      else
        bad "$tool $label (exit $rc): $sum" "$(echo "$out" | grep -E '=====|FAIL|error' | head -30)"
      fi
    done
  }
  san "tc_roles 128x128x64" $K --entry tc_roles -D M=128 -D N=128 -D K=64
  san "tc_ws 128x128x160 3 stages" $K --entry tc_ws -D M=128 -D N=128 -D K=160 -D stages=3
  if [ $have_ex = 1 ]; then
    TOL=1e-2 san "gemm_tcgen5mma_ws gemm 256x256x512" $E/gemm_tcgen05/gemm_tcgen5mma_ws.py $GEMM -D M=256 -D N=256 -D K=512
    TOL=2e-2 san "mha_fwd_bshd flashattn_wasp 1x2x192 d64 causal" $E/flash_attention_sm100/mha_fwd_bshd.py \
      --entry flashattn_wasp $WASP -D batch=1 -D heads=2 -D seq_len=192 -D dim=64 -D is_causal=True
    TOL=2e-2 san "gqa_fwd_bshd flashattn_wasp 1x4x128 d64 groups=2" $E/flash_attention_sm100/gqa_fwd_bshd.py \
      --entry flashattn_wasp $WASP -D batch=1 -D heads=4 -D seq_len=128 -D dim=64 -D is_causal=False -D groups=2
  fi
  # the planted race: the first role reads the product without waiting for the mma warp's arrive
  d=$(mktemp -d)
  sed 's/T.mbarrier_wait_parity(bars\[1\], 0)/pass/' $K >$d/race.py
  if grep -q 'mbarrier_wait_parity(bars\[1\]' $d/race.py; then
    bad "planted race: the sed did not apply" ""
  else
    out=$(timeout 240 compute-sanitizer --tool racecheck --error-exitcode 9 "$T" run $d/race.py --entry tc_roles \
      -D M=128 -D N=128 -D K=64 --target cuda 2>&1)
    if echo "$out" | grep -q "RACECHECK SUMMARY: [1-9]"; then
      ok "racecheck reports the planted race (tc_roles reading C before the wait): $(echo "$out" | grep 'RACECHECK SUMMARY')"
    else
      bad "racecheck reports the planted race" "$out"
    fi
  fi
  rm -rf "$d"
else
  bad "compute-sanitizer found" "not on PATH"
fi
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
