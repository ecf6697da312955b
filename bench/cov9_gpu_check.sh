#!/bin/bash
# cov9_gpu_check.sh — session 9's front-end coverage work for issue 8 part D on a
# real GPU (about 1-2 minutes).  T.int4 storage (int8 bytes, two elements each,
# the low nibble first; tests/run/kernels/int4.py): TileLang's gemm_int4 kernel
# (packed tiles copied whole, the gemm's loops sign-extending nibbles) and a
# T.Parallel store of int4 elements, and a split store of an mma accumulator
# through a float32 view of a bfloat16 tile (tests/run/kernels/shift_store.py
# split_store_view: per-row base indices), each on the CUDA target against the
# same kernel on the C target (sm_90 and sm_90a; int8 inputs are random bytes:
# every nibble value); then, through python -m tilescale (carry .tl-examples):
# TileLang's examples/gemm_int4 with its own check (torch.matmul of the
# unpacked values, assert_close with rtol=atol=0, M=N=K=1024), and
# dsa_sparse_finetune's sparse_mla_bwd (its __main__: S=2048, H=64, topk=512,
# against its torch reference; acc_dq, 256 registers, stays in registers and
# ptxas spills it).
#
#   B=build-gpu bash bench/cov9_gpu_check.sh   # from the repository root, carry [".tl-examples"]; builds $B
# Exit status 1 if anything failed, 77 without a GPU.
set -u
cd "$(dirname "$0")/.."
B=${B:-build-gpu}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TILESCALE_CACHE_DIR=$PWD/$B/kcache
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then echo "skipped: no GPU"; exit 77; fi
if [ ! -x "$B/tilescale" ] || [ ! -f "$B/libtilescale.so" ]; then
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
    cmake --build "$B" -j"$(nproc)" --target tilescale_cli tilescale >/dev/null || { echo "BUILD FAILED"; exit 1; }
fi
T=$B/tilescale
fails=0
check() { # label file entry defines...: CUDA against the C target, same entry, exact (integers) or within $TOL
  local label=$1 file=$2 entry=$3 tol=${TOL:-0}
  shift 3
  local out
  out=$("$T" run "$file" --entry "$entry" "$@" --target cuda --check-target c --seed 7 --rtol $tol --atol $tol 2>&1)
  if [ $? -eq 0 ] && echo "$out" | grep -q '^PASS$'; then echo "PASS $label"; else echo "FAIL $label"; echo "$out" | tail -12; fails=$((fails + 1)); fi
}
I=tests/run/kernels/int4.py
for arch in sm_90 sm_90a; do
  export TILESCALE_CUDA_ARCH=$arch
  check "int4 gemm_nt 256x256x256 (128x128x64 tiles) $arch" $I gemm_nt -D M=256 -D N=256 -D K=256 -D block_M=128 \
    -D block_N=128 -D block_K=64
  check "int4 gemm_nt ragged 200x72x96 $arch" $I gemm_nt -D M=200 -D N=72 -D K=96 -D block_M=64 -D block_N=32 -D block_K=64
  check "int4 quant (T.Parallel store of pairs) 96x200 $arch" $I quant -D M=96 -D N=200
  TOL=2e-2 check "split_store_view 32x512 (float32 view of bfloat16) $arch" tests/run/kernels/shift_store.py \
    split_store_view -D M=32 -D N=512 -D K=32
  TOL=2e-2 check "split_store_view 64x64 unguarded $arch" tests/run/kernels/shift_store.py split_store_view \
    -D M=64 -D N=64 -D K=64 -D guarded=0
done
unset TILESCALE_CUDA_ARCH
ex() { # label dir want script args...: python -m tilescale in dir; exit 0 and `want` (if any) in its output
  local label=$1 dir=$2 want=$3
  shift 3
  local out
  out=$(cd "$dir" && TILESCALE_LIB=$OLDPWD/$B/libtilescale.so PYTHONPATH=$OLDPWD/python timeout 300 python3 -m tilescale "$@" 2>&1)
  if [ $? -eq 0 ] && { [ -z "$want" ] || echo "$out" | grep -q "$want"; }; then echo "PASS $label"; else echo "FAIL $label"; echo "$out" | tail -15; fails=$((fails + 1)); fi
}
if [ -d .tl-examples ] && python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  ex "gemm_int4 example_tilelang_gemm_int4 (1024^3, its own exact check)" .tl-examples/gemm_int4 \
    "Correctness check passed" example_tilelang_gemm_int4.py
  ex "dsa_sparse_finetune sparse_mla_bwd (S 2048, H 64, topk 512)" .tl-examples/dsa_sparse_finetune \
    "assert_tensors_similar passed" sparse_mla_bwd.py
else
  echo "(.tl-examples or torch with CUDA missing: TileLang's examples skipped; carry .tl-examples)"
fi
echo "cov9_gpu_check: $fails failed"
[ $fails -eq 0 ]
