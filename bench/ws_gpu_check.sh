#!/bin/bash
# ws_gpu_check.sh — warp specialization (T.ws roles, mbarriers) on the GPU:
# examples/ws_gemm.py's two kernels against the C target (--check-target c)
# and against the naive GEMM on the GPU (--check-against), their kernel
# times beside examples/gemm.py's (same tile, not warp-specialized), and
# compute-sanitizer (memcheck, synccheck, racecheck) on a small run; examples/ws_flash_attention.py
# (`if tid < 256:` consumer / producer roles, each with its own K loop) against the naive attention.
#
#   B=build-gpu bash bench/ws_gpu_check.sh      # from the repository root, on the GPU machine
set -u
cd "$(dirname "$0")/.."
B=${B:-build-gpu}
T=$B/tilescale
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$PATH:/usr/local/cuda/bin
export TILESCALE_CACHE_DIR=$PWD/$B/kcache
[ -x "$T" ] || cmake --build "$B" -j"$(nproc)" --target tilescale_cli >/dev/null
fail=0
run() { # label, then the tilescale arguments
  local label=$1; shift
  local out; out=$("$T" run examples/ws_gemm.py --target cuda --time "$@" 2>&1)
  local v; v=$(echo "$out" | grep -Eo "PASS|FAIL" | head -1)
  local tm; tm=$(echo "$out" | grep -E "^  run " | head -1)
  echo "| $label | ${v:-ERROR} | $tm |"
  [ "$v" = PASS ] || { fail=1; echo "$out" | tail -8; }
}
echo "| run | result | time |"
echo "|---|---|---|"
for e in ws_matmul ws_matmul_ring; do
  run "$e 512^3 vs C target" --entry $e -D M=512 -D N=512 -D K=512 --check-target c
  run "$e 1024x768x1536 vs C target" --entry $e -D M=1024 -D N=768 -D K=1536 --check-target c
  run "$e 2048^3 vs naive (GPU)" --entry $e -D M=2048 -D N=2048 -D K=2048 --check-against matmul_naive
done
run "ws_matmul_ring stages=3 1024^3 vs naive" --entry ws_matmul_ring -D M=1024 -D N=1024 -D K=1024 -D stages=3 --check-against matmul_naive
# FlashAttention with a producer warp group and two consumer warp groups (`if tid < 256` roles)
fa() {
  local out; out=$("$T" run examples/ws_flash_attention.py --target cuda --time "$@" 2>&1)
  local v; v=$(echo "$out" | grep -Eo "PASS|FAIL" | head -1)
  echo "| ws_flash_attention $* | ${v:-ERROR} | $(echo "$out" | grep -E "^  run " | head -1) |"
  [ "$v" = PASS ] || { fail=1; echo "$out" | tail -8; }
}
fa --entry flashattn_ws -D batch=1 -D heads=2 -D seq_len=256 -D dim=64 -D is_causal=True --check-against attention_naive
fa --entry flashattn_ws -D batch=2 -D heads=3 -D seq_len=320 -D dim=128 -D is_causal=False --check-against attention_naive
fa --entry flashattn_ws -D batch=1 -D heads=4 -D seq_len=512 -D dim=64 -D is_causal=True -D block_M=128 --check-against attention_naive
for e in ws_matmul ws_matmul_ring; do
  echo "time $e 4096^3: $("$T" run examples/ws_gemm.py --target cuda --entry $e -D M=4096 -D N=4096 -D K=4096 --time 2>&1 | grep -E "^  run " | head -1 | tr '\n' ' ')"
done
echo "time gemm.py matmul 4096^3 128x128x64 2 stages 256 threads: $("$T" run examples/gemm.py --target cuda --entry matmul -D M=4096 -D N=4096 -D K=4096 -D block_M=128 -D block_N=128 -D block_K=64 -D num_stages=2 -D threads=256 --time 2>&1 | grep -E "^  run " | head -1 | tr '\n' ' ')"
if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck synccheck racecheck; do
    for e in ws_matmul ws_matmul_ring; do
      r=$(compute-sanitizer --tool $tool "$T" run examples/ws_gemm.py --target cuda --entry $e -D M=256 -D N=256 -D K=512 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard" | head -3 | tr '\n' ' ')
      echo "sanitizer $tool $e: $r"
    done
    r=$(compute-sanitizer --tool $tool "$T" run examples/ws_flash_attention.py --target cuda --entry flashattn_ws -D batch=1 -D heads=1 -D seq_len=128 -D dim=64 -D is_causal=True 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard" | head -3 | tr '\n' ' ')
    echo "sanitizer $tool flashattn_ws: $r"
  done
fi
[ $fail = 0 ] && echo "ALL PASS" || echo "SOME FAILED"
