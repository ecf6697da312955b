#!/bin/bash
# cpasync_gpu_check.sh — session 10's explicit asynchronous copies and run-time
# clear flag on a real GPU (a few minutes).  (1) tests/run/kernels/cp_async.py on
# the CUDA target against its naive kernels (sm_90a and sm_90: T.ptx_cp_async of
# 16/8/4 bytes with predicates, T.cp_async_barrier_noinc, commit/wait groups);
# (2) the same kernels through the Python package against torch
# (bench/cpasync_torch.py); (3) TileLang's deepseek_mla/example_mla_decode_ws.py
# (flashattn: cp.async producer, T.wgmma_gemm/T.wait_wgmma consumers, split and
# not), warp_specialize/example_warp_specialize_flashmla.py (clear_accum=(j ==
# 0), T.fence_proxy_async) and deepseek_v32's sparse_mla_fwd_pipelined.py /
# sparse_mla_fwd_seesaw.py on the CUDA target against naive references
# (tests/run/kernels/mla_ref.py, sparse_mla_ref.py, run on the C target) on the
# same inputs (bench/cpasync_cpu_check.sh cuda); (4) through python -m tilescale (carry
# .tl-examples): each example's own check against its torch reference
# (example_mla_decode_ws main: profiler.assert_allclose; flashmla main; the two
# deepseek_v32 sparse MLA forwards with --test_correctness:
# torch.testing.assert_close against ref_sparse_mla_fwd_interface).
#
#   B=build-gpu bash bench/cpasync_gpu_check.sh   # from the repository root, carry [".tl-examples"]
# Prints one PASS/FAIL line per check and "N passed, N failed"; exit 1 if any failed, 77 without a GPU.
set -u
cd "$(dirname "$0")/.."
B=${B:-build-gpu}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TILESCALE_CACHE_DIR=$PWD/$B/kcache
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then echo "skipped: no GPU"; exit 77; fi
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build "$B" -j"$(nproc)" --target tilescale_cli tilescale >/dev/null || { echo "BUILD FAILED"; exit 1; }
T=$B/tilescale
passed=0 fails=0
ok() { echo "PASS $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; [ -n "${2:-}" ] && echo "$2" | tail -15; fails=$((fails + 1)); }
check() { # label file entry ref defines...: CUDA against the naive entry
  local label=$1 file=$2 entry=$3 ref=$4 out
  shift 4
  out=$("$T" run "$file" --entry "$entry" "$@" --target cuda --check-against "$ref" --seed 10 2>&1)
  if [ $? -eq 0 ] && echo "$out" | grep -q '^PASS$'; then ok "$label"; else bad "$label" "$out"; fi
}
F=tests/run/kernels/cp_async.py
for arch in sm_90a sm_90; do # (an sm_80 cubin does not load on the H200: CUDA_ERROR_NO_BINARY_FOR_GPU)
  export TILESCALE_CUDA_ARCH=$arch
  check "ws_cp_async 256^3 16-byte copies $arch" $F ws_cp_async matmul_nt_naive
  check "ws_cp_async 1024x768x512 128x128 tiles $arch" $F ws_cp_async matmul_nt_naive -D M=1024 -D N=768 -D K=512 \
    -D block_M=128 -D block_N=128
  check "ws_cp_async 200x136x160 8-byte copies, partial tiles $arch" $F ws_cp_async matmul_nt_naive -D M=200 -D N=136 \
    -D K=160 -D block_K=32 -D vec=4
  check "ws_cp_async 64x64x64 4-byte copies $arch" $F ws_cp_async matmul_nt_naive -D M=64 -D N=64 -D K=64 -D block_K=16 -D vec=2
  check "gather_groups float32 16-byte $arch" $F gather_groups gather_naive
  check "gather_groups float32 4-byte $arch" $F gather_groups gather_naive -D vec=1
  check "gather_groups float16 D=128 16-byte $arch" $F gather_groups gather_naive -D vec=8 -D dtype=float16 -D D=128
  check "gather_flags (8 threads store one flag) $arch" $F gather_flags gather_flags_naive -D R=4000 -D G=64
  check "gather_flags D=128 $arch" $F gather_flags gather_flags_naive -D D=128 -D S=32 -D R=200
  check "gather_flags_branch (forward_stores) $arch" $F gather_flags_branch gather_flags_naive -D R=4000 -D G=64
done
unset TILESCALE_CUDA_ARCH
out=$(PYTHONPATH=python TILESCALE_LIB=$PWD/$B/libtilescale.so timeout 300 python3 bench/cpasync_torch.py 2>&1)
while IFS= read -r l; do
  case "$l" in PASS*) ok "${l#PASS }" ;; FAIL*) bad "${l#FAIL }" ;; esac
done <<<"$out"
echo "$out" | grep -q "cpasync_torch: 0 failed" || { echo "$out" | grep -v "^PASS" | tail -8; }
# (3) the four examples on the CUDA target against naive references on the same inputs
# (bench/cpasync_cpu_check.sh cuda: the references run on the C target)
if [ -d .tl-examples ]; then
  for arch in sm_90a sm_90; do # (Hopper kernels: 220-230 KB of shared memory, over sm_80's 164 KB)
    out=$(TILESCALE_CUDA_ARCH=$arch B=$B bash bench/cpasync_cpu_check.sh cuda 2>&1)
    while IFS= read -r l; do
      case "$l" in PASS*) ok "${l#PASS } $arch" ;; FAIL*) bad "${l#FAIL } $arch" ;; esac
    done <<<"$out"
    echo "$out" | grep -q " 0 failed" || echo "$out" | grep -v "^PASS" | tail -20
  done
else
  echo "(.tl-examples missing: the examples are skipped; carry .tl-examples)"
fi
# (4) the examples' own checks through python -m tilescale
ex() { # label dir want script args...: exit 0 and `want` in its output
  local label=$1 dir=$2 want=$3 out
  shift 3
  out=$(cd "$dir" && TILESCALE_LIB=$OLDPWD/$B/libtilescale.so PYTHONPATH=$OLDPWD/python timeout 420 python3 -m tilescale "$@" 2>&1)
  if [ $? -eq 0 ] && { [ -z "$want" ] || echo "$out" | grep -q "$want"; }; then ok "$label"; else bad "$label" "$out"; fi
}
if [ -d .tl-examples ] && python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  ex "example_mla_decode_ws main (batch 16, ctx 4096; assert_allclose vs ref_program)" .tl-examples/deepseek_mla \
    "Latency" example_mla_decode_ws.py --batch 16 --kv_ctx 4096
  ex "example_warp_specialize_flashmla main (assert_allclose vs ref_program)" .tl-examples/warp_specialize "Latency" \
    example_warp_specialize_flashmla.py
  ex "sparse_mla_fwd_pipelined --test_correctness (assert_close vs torch)" .tl-examples/deepseek_v32 "Average time" \
    sparse_mla_fwd_pipelined.py --test_correctness
  ex "sparse_mla_fwd_seesaw --test_correctness (assert_close vs torch)" .tl-examples/deepseek_v32 "Average time" \
    sparse_mla_fwd_seesaw.py --test_correctness
else
  echo "(.tl-examples or torch with CUDA missing: the examples' own checks skipped)"
fi
echo "$passed passed, $fails failed"
[ $fails -eq 0 ]
