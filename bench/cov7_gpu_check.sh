#!/bin/bash
# cov7_gpu_check.sh — session 7's front-end constructs of issue 8 part D on a
# real GPU (about 20 s): TileLang's register hints (T.annotate_producer_reg_dealloc
# / T.annotate_consumer_reg_alloc / T.set_max_nreg / T.inc_max_nreg /
# T.dec_max_nreg: setmaxnreg on sm_90a) and hand-committed element copies
# (T.Parallel(prefer_async=True), T.ptx_commit_group/T.ptx_wait_group), in the
# warp-specialized GEMMs of tests/run/kernels/reg_hints.py, each on the CUDA
# target against its naive GEMM on the GPU, compiled for plain sm_90 (the hints
# compiled out) and for sm_90a (setmaxnreg executed); then TileLang's grouped
# GEMM by pointers (T.make_tensor) and minference's test through
# python -m tilescale (carry .tl-examples); T.atomic_add(..., return_prev=True)
# (tests/run/kernels/atomic_prev.py) and TileLang's topk_selector test;
# T.sync_grid as two launches (tests/run/kernels/sync_grid.py).
#
#   B=build-gpu bash bench/cov7_gpu_check.sh   # from the repository root, carry [".tl-examples"]; builds $B
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
A=tests/run/kernels/atomic_prev.py
for e in bucket_slots bucket_slots_global; do
  check "$e (return_prev) vs serial count" $A --entry $e --target cuda --check-against bucket_slots_naive
done
check "bucket_slots N=5000 NB=7 vs serial count" $A --entry bucket_slots -D N=5000 -D NB=7 --target cuda --check-against bucket_slots_naive
check "bucket_slots_global N=50000 NB=7 chunk=700 vs serial count" $A --entry bucket_slots_global -D N=50000 -D NB=7 -D chunk=700 --target cuda --check-against bucket_slots_naive
G=tests/run/kernels/sync_grid.py
check "sync_grid centre N=1000 (two launches) vs naive" $G --entry centre --target cuda --check-against centre_naive
check "sync_grid centre N=100000 nblocks=132 vs naive" $G --entry centre -D N=100000 -D nblocks=132 --target cuda --check-against centre_naive
# T.make_tensor: pointer tables need real device addresses, so the GPU run is
# TileLang's own grouped GEMM by pointers (torch tensors' data_ptr() in the
# tables, checked by the example against torch.matmul), through our shim;
# TileLang's tests of topk_selector (T.atomic_add return_prev, user-ordered
# threads) and minference (register hints; its reference needs triton).
ex() { # label dir want script args...: python -m tilescale in dir; exit 0 and `want` (if any) in its output
  local label=$1 dir=$2 want=$3
  shift 3
  local out
  out=$(cd "$dir" && TILESCALE_LIB=$OLDPWD/$B/libtilescale.so PYTHONPATH=$OLDPWD/python timeout 300 python3 -m tilescale "$@" 2>&1)
  if [ $? -eq 0 ] && { [ -z "$want" ] || echo "$out" | grep -q "$want"; }; then echo "PASS $label"; else echo "FAIL $label"; echo "$out" | tail -15; fails=$((fails + 1)); fi
}
if [ -d .tl-examples ] && python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  [ -f "$B/libtilescale.so" ] || cmake --build "$B" -j"$(nproc)" >/dev/null
  ex "grouped_gemm_ptr 64,128,256 K=N=512" .tl-examples/grouped_gemm "matches PyTorch" \
    example_grouped_gemm_fwd_ptr.py --batch_sizes 64,128,256 --K 512 --N 512
  ex "grouped_gemm_ptr 16,33,64 K=128 N=96 (its test's sizes)" .tl-examples/grouped_gemm "matches PyTorch" \
    example_grouped_gemm_fwd_ptr.py --batch_sizes 16,33,64 --K 128 --N 96
  TILESCALE_TEST=test_example_topk_selector ex "deepseek_v32 test_example_topk_selector (64 x 32768, topk 2048)" \
    .tl-examples/deepseek_v32 "" test_tilelang_example_deepseek_v32.py
  if python3 -c 'import triton' 2>/dev/null; then
    TILESCALE_TEST=test_vs_sparse_attn ex "minference test_vs_sparse_attn" .tl-examples/minference "" test_vs_sparse_attn.py
  else
    echo "(triton missing: minference's test skipped)"
  fi
else
  echo "(.tl-examples or torch with CUDA missing: TileLang's grouped GEMM, topk_selector and minference skipped; carry .tl-examples)"
fi
echo "cov7_gpu_check: $fails failed"
[ $fails -eq 0 ]
