#!/bin/bash
# cov8_gpu_check.sh — session 8's layout work for issue 8 part D on a real GPU
# (about 1-2 minutes): the register A operand replicated over FullCol warps
# (layout MMA_A), a gemm reading A from a shared copy of its registers when its
# accumulator is over the register budget (ts_layout_spill), nests reading a
# fragment at shifted indices rewritten over the fragment (shift_nest), and
# plan_smem's reuse inside uniform ifs, in tests/run/kernels/gemm_rs_fullcol.py
# and shift_store.py, each on the CUDA target against the same kernel on the C
# target (sm_90 and sm_90a); then the three TileLang examples these made
# compile, through python -m tilescale (carry .tl-examples): the persistent MLA
# decode (two launches, checked by the example against its torch reference),
# the AMD MLA decode benchmark (torch.testing.assert_close inside), and
# deepseek_v32's test_example_sparse_mla_bwd (the test's own check).
#
#   B=build-gpu bash bench/cov8_gpu_check.sh   # from the repository root, carry [".tl-examples"]; builds $B
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
check() { # label file entry defines...: CUDA against the C target, same entry
  local label=$1 file=$2 entry=$3
  shift 3
  local out
  out=$("$T" run "$file" --entry "$entry" "$@" --target cuda --check-target c --seed 7 --rtol 2e-2 --atol 2e-2 2>&1)
  if [ $? -eq 0 ] && echo "$out" | grep -q '^PASS$'; then echo "PASS $label"; else echo "FAIL $label"; echo "$out" | tail -12; fails=$((fails + 1)); fi
}
G=tests/run/kernels/gemm_rs_fullcol.py
S=tests/run/kernels/shift_store.py
for arch in sm_90 sm_90a; do
  export TILESCALE_CUDA_ARCH=$arch
  check "decode_fullcol MMA_A 1x4 warps $arch" $G decode_fullcol -D B=2 -D H=32 -D S=64 -D D=64
  check "decode_fullcol T.copy(s, p) re-layout $arch" $G decode_fullcol -D B=2 -D H=32 -D S=96 -D D=64 -D direct=1
  check "decode_fullcol 8 warps, 7 blocks, S=512 D=128 $arch" $G decode_fullcol -D B=3 -D H=64 -D S=512 -D D=128 \
    -D block_H=32 -D nblocks=7 -D threads=256
  TILESCALE_CUDA_SMEM_REUSE=1 check "decode_fullcol reuse inside the if $arch" $G decode_fullcol -D B=2 -D H=64 -D S=256 -D D=64
  check "decode_over_budget (spill of p for a shared accumulator) $arch" $G decode_over_budget -D B=2 -D H=32 -D S=128 -D D=512
  check "split_store guarded $arch" $S split_store -D M=32 -D N=64 -D K=32
  check "split_store 128x128, 4 parts, unguarded $arch" $S split_store -D M=128 -D N=128 -D K=64 -D parts=4 -D guarded=0
done
unset TILESCALE_CUDA_ARCH
ex() { # label dir want script args...: python -m tilescale in dir; exit 0 and `want` (if any) in its output
  local label=$1 dir=$2 want=$3
  shift 3
  local out
  out=$(cd "$dir" && TILESCALE_LIB=$OLDPWD/$B/libtilescale.so PYTHONPATH=$OLDPWD/python timeout 300 python3 -m tilescale "$@" 2>&1)
  if [ $? -eq 0 ] && { [ -z "$want" ] || echo "$out" | grep -q "$want"; }; then echo "PASS $label"; echo "$out" | grep -i "latency\|tflops" | head -2; else echo "FAIL $label"; echo "$out" | tail -15; fails=$((fails + 1)); fi
}
if [ -d .tl-examples ] && python3 -c 'import torch, einops; assert torch.cuda.is_available()' 2>/dev/null; then
  ex "deepseek_mla example_mla_decode_persistent (batch 128, 8192 keys)" .tl-examples/deepseek_mla "Latency" \
    example_mla_decode_persistent.py
  ex "deepseek_mla amd benchmark_mla_decode_amd_tilelang (batch 16)" .tl-examples/deepseek_mla/amd "Latency" \
    benchmark_mla_decode_amd_tilelang.py --batch 16
  TILESCALE_TEST=test_example_sparse_mla_bwd ex "deepseek_v32 test_example_sparse_mla_bwd (H 64 and 128)" \
    .tl-examples/deepseek_v32 "" test_tilelang_example_deepseek_v32.py
else
  echo "(.tl-examples, einops or torch with CUDA missing: TileLang's MLA examples skipped; carry .tl-examples)"
fi
echo "cov8_gpu_check: $fails failed"
[ $fails -eq 0 ]
