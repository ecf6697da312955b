#!/bin/bash
# gpu_check.sh — the CUDA backend on a real GPU, in one command (the lent
# H200: a fresh machine per call, so it builds from scratch).
#
#   bench/gpu_check.sh            # from the repository root; logs go to $OUT or /tmp
#
# 1. builds the CLI and test_cuda_nvrtc (cmake, Release, build dir $B);
# 2. runs every example, with the -D values of tests/run/example_*.sh plus
#    one larger size each, on the CUDA target against the same entry on the
#    C target (--check-target c: same random inputs, outputs poisoned), and
#    the main configurations also against their naive entry with both on
#    the GPU (--check-against);
# 3. runs compute-sanitizer: memcheck, racecheck (shared-memory hazards:
#    a missing __syncthreads shows here) and synccheck on small examples;
# 4. runs test_cuda_nvrtc, which on a GPU compares every primitive kernel
#    of that test (atomics, reductions, dtypes, strided/aliased tensors,
#    uniform read-modify-writes, blocks waiting on each other) with the C
#    target;
# and prints a PASS/FAIL table last, with the kernel's wall time
# (launch + synchronize, from --time; correctness only, no tuning yet).
# Exit status 1 if anything failed.
set -u
cd "$(dirname "$0")/.."
B=${B:-build-gpu}
LOGDIR=${OUT:-/tmp}
LOG=$LOGDIR/gpu_check.log
: >"$LOG"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TILESCALE_CACHE_DIR=$PWD/$B/kcache
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nvcc --version | tail -2; } 2>&1 | tee -a "$LOG"
if ! { cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release && cmake --build "$B" -j"$(nproc)" --target tilescale_cli test_cuda_nvrtc; } >>"$LOG" 2>&1; then
  tail -40 "$LOG"
  echo "BUILD FAILED"
  exit 1
fi
echo "build: $(($(date +%s) - t0)) s"
T=$B/tilescale
rows=()
fails=0

# check LABEL ARGS...: one `tilescale run`, one table row.
check() {
  local label=$1
  shift
  local out rc res kt err
  local s0=$(date +%s%N)
  out=$("$T" run "$@" --seed 7 --time 2>&1)
  rc=$?
  local wall=$(awk -v a="$s0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  { echo "== $label: tilescale run $* --seed 7 --time"; echo "$out"; } >>"$LOG"
  res=FAIL
  if [ $rc -eq 0 ] && echo "$out" | grep -q '^PASS$'; then res=PASS; else fails=$((fails + 1)); fi
  kt=$(echo "$out" | awk '$1 == "cuda" && $2 == "kernel" {print $3; exit}')
  err=$(echo "$out" | awk '/max abs err/ {n = $1; sub(/.*max abs err /, ""); printf "%s:%s ", n, $1}')
  rows+=("$(printf '%-4s %-46s kernel %8s ms  run %5s s  max abs err %s' "$res" "$label" "${kt:-?}" "$wall" "$err")")
  if [ $res = FAIL ]; then echo "$out" | tail -8; fi
}

EA=examples/elementwise_add.py GE=examples/gemm.py RM=examples/rms_norm.py SM=examples/softmax.py FA=examples/flash_attention.py
SK=examples/splitk_gemm.py
C="--target cuda --check-target c"
check "add 100x200 f32" $EA --entry elementwise_add -D M=100 -D N=200 $C
check "add 64x64 f16" $EA --entry elementwise_add -D M=64 -D N=64 -D in_dtype=float16 -D out_dtype=float16 $C
check "add 4096x4096 f32" $EA --entry elementwise_add -D M=4096 -D N=4096 $C
check "add naive 100x200" $EA --entry elementwise_add_naive -D M=100 -D N=200 $C
check "gemm 256x192x160 f16 (64,64,32)" $GE --entry matmul -D M=256 -D N=192 -D K=160 -D block_M=64 -D block_N=64 -D block_K=32 $C
check "gemm 100x72x52 f16 (32,32,16) partial tiles" $GE --entry matmul -D M=100 -D N=72 -D K=52 -D block_M=32 -D block_N=32 -D block_K=16 $C
check "gemm 64^3 bf16" $GE --entry matmul -D M=64 -D N=64 -D K=64 -D block_M=32 -D block_N=32 -D block_K=32 -D dtype=bfloat16 $C
check "gemm eager 96x80x72" $GE --entry matmul_eager -D M=96 -D N=80 -D K=72 -D block_M=32 -D block_N=32 -D block_K=16 $C
check "gemm 1024^3 f16 (128,128,32)" $GE --entry matmul -D M=1024 -D N=1024 -D K=1024 -D block_M=128 -D block_N=128 -D block_K=32 $C
check "gemm naive 100x72x52" $GE --entry matmul_naive -D M=100 -D N=72 -D K=52 $C
check "split-K gemm, two kernels 96x80x256/4" $SK --entry splitk_gemm -D M=96 -D N=80 -D K=256 -D splits=4 $C
check "split-K gemm, two kernels 50x70x128/2" $SK --entry splitk_gemm -D M=50 -D N=70 -D K=128 -D splits=2 $C
check "rms_norm 96x320" $RM --entry rms_norm -D M=96 -D N=320 $C
check "rms_norm 50x100" $RM --entry rms_norm -D M=50 -D N=100 $C
check "rms_norm 4096x4096" $RM --entry rms_norm -D M=4096 -D N=4096 $C
check "rms_norm_row 37x1024 (a row over 4 warps)" $RM --entry rms_norm_row -D M=37 -D N=1024 $C
check "rms_norm_row 9x512 blk_m=2 (2 warps a row)" $RM --entry rms_norm_row -D M=9 -D N=512 -D blk_m=2 $C
check "rms_norm_row 20x320 (shared fallback)" $RM --entry rms_norm_row -D M=20 -D N=320 $C
check "rms_norm_row 2048x8192" $RM --entry rms_norm_row -D M=2048 -D N=8192 $C
# converting vector copies (f16 -> f32 registers -> bf16; shared <-> global) and T.cumsum in registers
# (not CC/CS: CC is the C compiler the library starts, exported on the device; assigning it here
# made every later --check-target c run use a .py file as its compiler)
CASTK=tests/golden/ir_cast_copy.py CUMK=tests/golden/ir_cumsum_regs.py
check "cast_frag 40x136 f16->f32->bf16" $CASTK --entry cast_frag -D M=40 -D N=136 $C
check "cast_mem 40x90 bf16->f32 (shared)" $CASTK --entry cast_mem -D M=40 -D N=90 -D sdt=bfloat16 -D ddt=float32 $C
check "cast_mem 40x136 f32->f16 (shared)" $CASTK --entry cast_mem -D M=40 -D N=136 $C
check "cumsum in registers 40x256" $CUMK --entry cumsum_rows -D M=40 -D N=256 $C
check "cumsum in registers 33x64 reverse, into" $CUMK --entry cumsum_into -D M=33 -D N=64 -D reverse=True $C
check "softmax 200x96" $SM --entry softmax -D M=200 -D N=96 $C
check "softmax 1000x1024 (64 KB smem)" $SM --entry softmax -D M=1000 -D N=1024 $C
check "flashattn b1 h2 s128 d64" $FA --entry flashattn -D batch=1 -D heads=2 -D seq_len=128 -D dim=64 -D is_causal=False $C
check "flashattn b2 h1 s96 d32 causal" $FA --entry flashattn -D batch=2 -D heads=1 -D seq_len=96 -D dim=32 -D is_causal=True $C
check "flashattn b2 h4 s512 d64 causal" $FA --entry flashattn -D batch=2 -D heads=4 -D seq_len=512 -D dim=64 -D is_causal=True $C
check "attention naive b2 h1 s96 d32 causal" $FA --entry attention_naive -D batch=2 -D heads=1 -D seq_len=96 -D dim=32 -D is_causal=True $C
# software pipelines (pipeline_planning/inject_pipeline: cp.async, multi-buffered tiles): 1-4 stages,
# partial tiles in M, N and K, trip counts below the stage count, FlashAttention with 2 and 3 stages
for ns in 1 2 3 4; do
  check "gemm 250x200x100 f16 (64,64,32) ${ns} stages" $GE --entry matmul -D M=250 -D N=200 -D K=100 -D block_M=64 -D block_N=64 -D block_K=32 -D num_stages=$ns $C
done
check "gemm 100x72x20 f16 (32,32,16) 4 stages, 2 iters" $GE --entry matmul -D M=100 -D N=72 -D K=20 -D block_M=32 -D block_N=32 -D block_K=16 -D num_stages=4 $C
check "gemm 1000x1000x1000 f16 (128,128,32) 2 stages" $GE --entry matmul -D M=1000 -D N=1000 -D K=1000 -D block_M=128 -D block_N=128 -D block_K=32 -D num_stages=2 $C
check "gemm 1024^3 bf16 (128,128,32) 3 stages" $GE --entry matmul -D M=1024 -D N=1024 -D K=1024 -D block_M=128 -D block_N=128 -D block_K=32 -D num_stages=3 -D dtype=bfloat16 $C
for ns in 2 3; do
  check "flashattn b2 h2 s200 d64 ${ns} stages" $FA --entry flashattn -D batch=2 -D heads=2 -D seq_len=200 -D dim=64 -D is_causal=False -D num_stages=$ns $C
  check "flashattn b2 h2 s200 d64 causal ${ns} stages" $FA --entry flashattn -D batch=2 -D heads=2 -D seq_len=200 -D dim=64 -D is_causal=True -D num_stages=$ns $C
done
# 128x128 tiles, d128, 2 stages: 192 KB of shared memory (3 stages would need 256 KB)
check "flashattn b1 h4 s1000 d128 (128,128) causal 2 st" $FA --entry flashattn -D batch=1 -D heads=4 -D seq_len=1000 -D dim=128 -D is_causal=True -D block_M=128 -D block_N=128 -D threads=256 -D num_stages=2 $C
check "flashattn b1 h4 s1000 d128 (128,128) 2 stages" $FA --entry flashattn -D batch=1 -D heads=4 -D seq_len=1000 -D dim=128 -D is_causal=False -D block_M=128 -D block_N=128 -D threads=256 -D num_stages=2 $C
N="--target cuda --check-against"
check "[gpu vs gpu naive] add" $EA --entry elementwise_add -D M=100 -D N=200 $N elementwise_add_naive
check "[gpu vs gpu naive] gemm 256x192x160" $GE --entry matmul -D M=256 -D N=192 -D K=160 -D block_M=64 -D block_N=64 -D block_K=32 $N matmul_naive
check "[gpu vs gpu naive] split-K gemm" $SK --entry splitk_gemm -D M=96 -D N=80 -D K=256 -D splits=4 $N splitk_gemm_naive
check "[gpu vs gpu naive] rms_norm 96x320" $RM --entry rms_norm -D M=96 -D N=320 $N rms_norm_naive
check "[gpu vs gpu naive] softmax 200x96" $SM --entry softmax -D M=200 -D N=96 $N softmax_naive
check "[gpu vs gpu naive] flashattn s128 d64" $FA --entry flashattn -D batch=1 -D heads=2 -D seq_len=128 -D dim=64 -D is_causal=False $N attention_naive
# the pipeline's effect on kernel time (same kernel, TILESCALE_CUDA_PIPELINE=0: plain vector copies)
check "[pipeline on] gemm 2048x2048x1024 (128,128,32) 3 st" $GE --entry matmul -D M=2048 -D N=2048 -D K=1024 -D block_M=128 -D block_N=128 -D block_K=32 -D num_stages=3 $N matmul_naive
TILESCALE_CUDA_PIPELINE=0 check "[pipeline off] gemm 2048x2048x1024 (128,128,32)" $GE --entry matmul -D M=2048 -D N=2048 -D K=1024 -D block_M=128 -D block_N=128 -D block_K=32 -D num_stages=3 $N matmul_naive
echo "examples: $(($(date +%s) - t0)) s"

# sanitize TOOL LABEL ARGS...
sanitize() {
  local tool=$1 label=$2
  shift 2
  local out rc res
  out=$(compute-sanitizer --tool "$tool" --error-exitcode 9 "$T" run "$@" --target cuda --seed 3 2>&1)
  rc=$?
  { echo "== compute-sanitizer --tool $tool $label"; echo "$out"; } >>"$LOG"
  res=FAIL
  if [ $rc -eq 0 ] && echo "$out" | grep -q 'ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards'; then res=PASS; else fails=$((fails + 1)); fi
  rows+=("$(printf '%-4s %-46s %s' "$res" "sanitizer $tool: $label" "$(echo "$out" | grep -E 'SUMMARY' | tr '\n' ' ')")")
  if [ $res = FAIL ]; then echo "$out" | tail -20; fi
}
if command -v compute-sanitizer >/dev/null; then
  sanitize memcheck "softmax 200x96" $SM --entry softmax -D M=200 -D N=96
  sanitize memcheck "gemm 100x72x52 partial tiles" $GE --entry matmul -D M=100 -D N=72 -D K=52 -D block_M=32 -D block_N=32 -D block_K=16
  sanitize racecheck "gemm 100x72x52" $GE --entry matmul -D M=100 -D N=72 -D K=52 -D block_M=32 -D block_N=32 -D block_K=16
  sanitize racecheck "flashattn b1 h1 s64 d32 causal" $FA --entry flashattn -D batch=1 -D heads=1 -D seq_len=64 -D dim=32 -D is_causal=True
  sanitize racecheck "rms_norm 50x100" $RM --entry rms_norm -D M=50 -D N=100
  sanitize racecheck "gemm 100x72x52 3 stages (cp.async)" $GE --entry matmul -D M=100 -D N=72 -D K=52 -D block_M=32 -D block_N=32 -D block_K=16 -D num_stages=3
  sanitize racecheck "flashattn s200 d64 causal 2 stages" $FA --entry flashattn -D batch=1 -D heads=1 -D seq_len=200 -D dim=64 -D is_causal=True -D num_stages=2
  sanitize memcheck "gemm 100x72x20 4 stages (cp.async)" $GE --entry matmul -D M=100 -D N=72 -D K=20 -D block_M=32 -D block_N=32 -D block_K=16 -D num_stages=4
  sanitize synccheck "gemm 250x200x100 3 stages" $GE --entry matmul -D M=250 -D N=200 -D K=100 -D block_M=64 -D block_N=64 -D block_K=32 -D num_stages=3
  sanitize synccheck "softmax 200x96" $SM --entry softmax -D M=200 -D N=96
  # the primitive kernels of test_cuda_nvrtc (uniform read-modify-writes, atomics, ...)
  for tool in racecheck memcheck; do
    out=$(TS_TEST_CUDA_QUICK=1 timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 "$B/tests/test_cuda_nvrtc" 2>&1)
    rc=$?
    { echo "== compute-sanitizer --tool $tool test_cuda_nvrtc"; echo "$out"; } >>"$LOG"
    res=FAIL
    [ $rc -eq 0 ] && res=PASS || fails=$((fails + 1))
    rows+=("$(printf '%-4s %-46s %s' "$res" "sanitizer $tool: test_cuda_nvrtc kernels" "$(echo "$out" | grep -E 'SUMMARY|passed' | tr '\n' ' ')")")
    if [ $res = FAIL ]; then echo "$out" | grep -v '^  PASS' | tail -20; fi
  done
else
  rows+=("SKIP compute-sanitizer not found")
fi
echo "sanitizer: $(($(date +%s) - t0)) s"

ut=$("$B/tests/test_cuda_nvrtc" 2>&1)
rc=$?
echo "$ut" >"$LOGDIR/test_cuda_nvrtc.log"
echo "$ut" | grep -E '^  (PASS|FAIL)|^CUDA device|passed, .* failed' | grep -v nvrtc
echo "$ut" | grep -E 'check failed|differ' | head -20
res=FAIL
[ $rc -eq 0 ] && res=PASS || fails=$((fails + 1))
rows+=("$(printf '%-4s %-46s %s' "$res" "test_cuda_nvrtc (primitives vs C target)" "$(echo "$ut" | tail -1)")")

echo
echo "==== CUDA target on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u +%F), commit $(git rev-parse --short HEAD 2>/dev/null), total $(($(date +%s) - t0)) s"
printf '%s\n' "${rows[@]}"
echo "failures: $fails"
[ $fails -eq 0 ]
