#!/bin/bash
# ws_regs_gpu_check.sh — warp-specialised kernels with their fragments in
# registers (layout inference over each T.ws role's threads, issue 5 part A)
# on the GPU, before and after: every run twice, with
# TILESCALE_CUDA_WS_LAYOUT=0 (the path before: a role kernel's fragments in
# shared memory) and with the default (=1: registers laid out over the
# role's warps).
#
#   1. correctness: examples/ws_gemm.py's two kernels against the C target
#      and the naive GEMM, examples/ws_flash_attention.py against the naive
#      attention (block_M=128: 256 consumer threads in 8 warp rows, registers;
#      block_M=64: no warp grid fits, shared memory in both runs);
#   2. compute-sanitizer memcheck, racecheck and synccheck on small runs of
#      each, both paths;
#   3. kernel time (TILESCALE_CUDA_BENCH: 50 timed launches after 5, median)
#      of ws_matmul / ws_matmul_ring (2, 3 and 4 stages) at 4096^3 and
#      flashattn_ws at B1 H32 S4096 D128 (and D64), both paths, beside cuBLAS
#      (torch.matmul) and SDPA (torch, flash) on the same shapes where torch
#      is installed, and the dynamic shared memory each of ours asks for (from
#      the generated CUDA's first line); the registers path in each form of
#      the producer's hand-over (TILESCALE_CUDA_WS_ASYNC=0: plain loads and
#      stores, before pass ws_async_copy made them cp.async; =wait: cp.async,
#      cp.async.wait_group 0, then the plain arrive; =noinc:
#      cp.async.mbarrier.arrive.noinc alone; =mbar: cp.async.mbarrier.arrive,
#      then the arrive), and the plain examples/gemm.py matmul at 4096^3;
#      also compiled for sm_90a (TILESCALE_CUDA_ARCH=sm_90a), where pass
#      ws_role_regs gives each role a region of its own, moves registers from
#      the producer to the mma role (setmaxnreg) and asks for two blocks per
#      SM (the GEMMs; FlashAttention's roles do not fit two blocks).
#
# Every check above runs with the default form (src/base/caps.h,
# TS_WS_ASYNC_*); step 2 also runs synccheck on the ring GEMM and
# FlashAttention in each of the three cp.async forms, for the record (not
# counted as a failure; session 7: "Missing wait" with =mbar).
#
#   B=build-gpu bash bench/ws_regs_gpu_check.sh     # from the repository root, on the GPU machine
#   PART=check ... / PART=time ...                  # steps 1-2 only / step 3 only (default: all)
#
# Without a GPU (no nvidia-smi, or it finds none) it says so and exits 77
# (skipped), never "pass".  Exit status 1 if a check failed.
set -u
cd "$(dirname "$0")/.." || exit 1
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "ws_regs_gpu_check: no GPU here: SKIPPED"
  exit 77
fi
B=${B:-build-gpu}
T=$B/tilescale
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$PATH:/usr/local/cuda/bin
export TILESCALE_CACHE_DIR=$PWD/$B/kcache
if [ ! -x "$T" ]; then
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build "$B" -j"$(nproc)" --target tilescale_cli >/dev/null
fi
[ -x "$T" ] || { echo "ws_regs_gpu_check: cannot build $T"; exit 1; }
fail=0
GEMM=examples/ws_gemm.py
FA=examples/ws_flash_attention.py
PART=${PART:-all}
if [ "$PART" != time ]; then

# 1. correctness, both paths
check() { # ws_layout, file, then the tilescale arguments
  local w=$1 f=$2; shift 2
  local out; out=$(TILESCALE_CUDA_WS_LAYOUT=$w "$T" run "$f" --target cuda "$@" 2>&1)
  local v; v=$(echo "$out" | grep -Eo "PASS|FAIL" | head -1)
  echo "| ws_layout=$w${TILESCALE_CUDA_WS_ASYNC:+ ws_async=$TILESCALE_CUDA_WS_ASYNC}${TILESCALE_CUDA_ARCH:+ $TILESCALE_CUDA_ARCH} | $(basename "$f") $* | ${v:-ERROR} |"
  [ "$v" = PASS ] || { fail=1; echo "$out" | tail -8; }
}
echo "| path | run | result |"
echo "|---|---|---|"
for w in 0 1; do
  for e in ws_matmul ws_matmul_ring; do
    check $w $GEMM --entry $e -D M=512 -D N=512 -D K=512 --check-target c
    check $w $GEMM --entry $e -D M=1024 -D N=768 -D K=1536 --check-target c
    check $w $GEMM --entry $e -D M=2048 -D N=2048 -D K=2048 --check-against matmul_naive
  done
  check $w $GEMM --entry ws_matmul_ring -D M=1024 -D N=1024 -D K=1024 -D stages=3 --check-against matmul_naive
  check $w $FA --entry flashattn_ws -D batch=1 -D heads=2 -D seq_len=256 -D dim=64 -D is_causal=True -D block_M=128 --check-against attention_naive
  check $w $FA --entry flashattn_ws -D batch=2 -D heads=3 -D seq_len=384 -D dim=128 -D is_causal=False -D block_M=128 --check-against attention_naive
  check $w $FA --entry flashattn_ws -D batch=1 -D heads=4 -D seq_len=512 -D dim=64 -D is_causal=True -D block_M=128 --check-against attention_naive
  check $w $FA --entry flashattn_ws -D batch=1 -D heads=2 -D seq_len=256 -D dim=64 -D is_causal=True --check-against attention_naive
done
# sm_90a: pass ws_role_regs (roles' regions, setmaxnreg, two blocks per SM)
for e in ws_matmul ws_matmul_ring; do
  TILESCALE_CUDA_ARCH=sm_90a check 1 $GEMM --entry $e -D M=1024 -D N=768 -D K=1536 --check-target c
  TILESCALE_CUDA_ARCH=sm_90a check 1 $GEMM --entry $e -D M=2048 -D N=2048 -D K=2048 --check-against matmul_naive
done
TILESCALE_CUDA_ARCH=sm_90a check 1 $GEMM --entry ws_matmul_ring -D M=1024 -D N=1024 -D K=1024 -D stages=3 --check-against matmul_naive
# the other forms of the producer's cp.async hand-over (registers path)
for form in wait noinc mbar; do
  TILESCALE_CUDA_WS_ASYNC=$form check 1 $GEMM --entry ws_matmul -D M=1024 -D N=768 -D K=1536 --check-target c
  TILESCALE_CUDA_WS_ASYNC=$form check 1 $GEMM --entry ws_matmul_ring -D M=2048 -D N=2048 -D K=2048 --check-against matmul_naive
  TILESCALE_CUDA_WS_ASYNC=$form check 1 $FA --entry flashattn_ws -D batch=2 -D heads=3 -D seq_len=384 -D dim=128 -D is_causal=False -D block_M=128 --check-against attention_naive
done

# 2. compute-sanitizer, both paths
if command -v compute-sanitizer >/dev/null; then
  for w in 0 1; do
    for tool in memcheck racecheck synccheck; do
      for run in "$GEMM --entry ws_matmul -D M=256 -D N=256 -D K=512" \
                 "$GEMM --entry ws_matmul_ring -D M=256 -D N=256 -D K=512" \
                 "$FA --entry flashattn_ws -D batch=1 -D heads=1 -D seq_len=256 -D dim=64 -D is_causal=True -D block_M=128"; do
        # shellcheck disable=SC2086
        r=$(TILESCALE_CUDA_WS_LAYOUT=$w compute-sanitizer --tool $tool "$T" run $run --target cuda 2>&1 |
            grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard" | head -3 | tr '\n' ' ')
        echo "sanitizer ws_layout=$w $tool $(echo "$run" | awk '{print $3}'): $r"
        echo "$r" | grep -Eq "ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards" || fail=1
      done
    done
  done
  for form in wait noinc mbar; do
    for run in "$GEMM --entry ws_matmul_ring -D M=256 -D N=256 -D K=512" \
               "$FA --entry flashattn_ws -D batch=1 -D heads=1 -D seq_len=256 -D dim=64 -D is_causal=True -D block_M=128"; do
      # shellcheck disable=SC2086
      r=$(TILESCALE_CUDA_WS_ASYNC=$form compute-sanitizer --tool synccheck "$T" run $run --target cuda 2>&1 |
          grep -E "ERROR SUMMARY|Barrier error|Missing|PASS|FAIL" | sort | uniq -c | head -5 | tr '\n' ' ')
      echo "sanitizer (record only) WS_ASYNC=$form synccheck $(echo "$run" | awk '{print $3}'): $r"
    done
  done
  for tool in memcheck racecheck synccheck; do
    for e in ws_matmul ws_matmul_ring; do
      r=$(TILESCALE_CUDA_ARCH=sm_90a compute-sanitizer --tool $tool "$T" run $GEMM --entry $e -D M=256 -D N=256 -D K=512 --target cuda 2>&1 |
          grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard" | head -3 | tr '\n' ' ')
      echo "sanitizer sm_90a (ws_role_regs) $tool $e: $r"
      echo "$r" | grep -Eq "ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards" || fail=1
    done
  done
else
  echo "compute-sanitizer not found: sanitizer checks not run"
  fail=1
fi

fi

# 3. kernel time, both paths, beside cuBLAS / SDPA
if [ "$PART" != check ]; then
smem() { # ws_layout, file, args: the dynamic shared memory of the generated CUDA
  # shellcheck disable=SC2068
  TILESCALE_CUDA_WS_LAYOUT=$1 "$T" compile "$2" ${@:3} --target cuda --emit cuda 2>/dev/null | head -1 |
    grep -Eo "[0-9]+ bytes of dynamic shared memory" | grep -Eo "^[0-9]+"
}
tm() { # ws_layout, file, args: median kernel ms (TILESCALE_CUDA_WS_ASYNC from the caller's environment)
  # shellcheck disable=SC2068
  TILESCALE_CUDA_WS_LAYOUT=$1 TILESCALE_CUDA_BENCH=50,5 "$T" run "$2" ${@:3} --target cuda --time 2>&1 |
    grep -Eo "cuda bench [0-9.]+" | grep -Eo "[0-9.]+$"
}
echo
echo "| kernel | shared bytes before | after | ms before (ws_layout=0) | ms registers, plain copies (WS_ASYNC=0) | ms registers, default | ms cp.async + wait + arrive (=wait) | ms cp.async.mbarrier.arrive.noinc (=noinc) | ms cp.async.mbarrier.arrive + arrive (=mbar) | ms default on sm_90a (ws_role_regs) | reference |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
ref_gemm=$(python3 - <<'EOF' 2>/dev/null
import torch
a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
b = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
for _ in range(5): torch.matmul(a, b)
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
s.record()
for _ in range(50): torch.matmul(a, b)
e.record(); e.synchronize()
print("cuBLAS %.3f ms" % (s.elapsed_time(e) / 50))
EOF
)
for e in "ws_matmul" "ws_matmul_ring" "ws_matmul_ring -D stages=3" "ws_matmul_ring -D stages=4"; do
  a="--entry $e -D M=4096 -D N=4096 -D K=4096"
  # shellcheck disable=SC2086
  echo "| $e 4096^3 fp16 | $(smem 0 $GEMM $a) | $(smem 1 $GEMM $a) | $(tm 0 $GEMM $a) | $(TILESCALE_CUDA_WS_ASYNC=0 tm 1 $GEMM $a) | $(tm 1 $GEMM $a) | $(TILESCALE_CUDA_WS_ASYNC="wait" tm 1 $GEMM $a) | $(TILESCALE_CUDA_WS_ASYNC=noinc tm 1 $GEMM $a) | $(TILESCALE_CUDA_WS_ASYNC=mbar tm 1 $GEMM $a) | $(TILESCALE_CUDA_ARCH=sm_90a tm 1 $GEMM $a) | ${ref_gemm:-torch not found} |"
done
echo "| examples/gemm.py matmul 4096^3 fp16 (no roles) | | | | | $(tm 1 examples/gemm.py --entry matmul -D M=4096 -D N=4096 -D K=4096) | | | | | ${ref_gemm:-torch not found} |"
for d in 64 128; do
  ref_fa=$(python3 - "$d" <<'EOF' 2>/dev/null
import sys, torch
import torch.nn.functional as F
d = int(sys.argv[1])
q, k, v = (torch.randn(1, 32, 4096, d, device="cuda", dtype=torch.float16) for _ in range(3))
f = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
for _ in range(5): f()
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
s.record()
for _ in range(50): f()
e.record(); e.synchronize()
print("SDPA causal %.3f ms" % (s.elapsed_time(e) / 50))
EOF
)
  a="--entry flashattn_ws -D batch=1 -D heads=32 -D seq_len=4096 -D dim=$d -D is_causal=True -D block_M=128"
  # shellcheck disable=SC2086
  echo "| flashattn_ws B1 H32 S4096 D$d causal, block_M=128 | $(smem 0 $FA $a) | $(smem 1 $FA $a) | $(tm 0 $FA $a) | $(TILESCALE_CUDA_WS_ASYNC=0 tm 1 $FA $a) | $(tm 1 $FA $a) | $(TILESCALE_CUDA_WS_ASYNC="wait" tm 1 $FA $a) | $(TILESCALE_CUDA_WS_ASYNC=noinc tm 1 $FA $a) | $(TILESCALE_CUDA_WS_ASYNC=mbar tm 1 $FA $a) | $(TILESCALE_CUDA_ARCH=sm_90a tm 1 $FA $a) | ${ref_fa:-torch not found} |"
done
fi
if [ $fail = 0 ]; then echo "ALL PASS"; else echo "SOME FAILED"; exit 1; fi
