#!/bin/sh
# A GEMM with a staged epilogue and T.use_swizzle (tests/run/kernels/staged_epilogue.py):
#  - on the C target it matches the naive GEMM, full and partial tiles;
#  - compiled for CUDA, the store of C_shared to C is 16-byte vector copies
#    proven aligned (after rasterize the block indices keep the grid's ranges):
#    vcopy<8> in the IR, and no element store to C left; with partial tiles
#    (run-time guards) the vector copies stay, beside the element path.
set -u
tool="${TILESCALE:-./build/tilescale}"
f=tests/run/kernels/staged_epilogue.py
fail() { echo "FAILED: $*"; exit 1; }
for dims in "M=256 N=256 K=64" "M=200 N=136 K=72"; do
  set --
  for d in $dims; do set -- "$@" -D "$d"; done
  "$tool" run $f --entry matmul_staged "$@" -D block_M=64 -D block_N=64 -D threads=128 --target c \
    --check-against matmul_naive --seed 7 >/dev/null || fail "C target, $dims"
done
ir=$("$tool" compile $f --entry matmul_staged -D M=1024 -D N=1024 -D K=1024 --target cuda \
     --dump-after partition_threads) || fail "CUDA compile"
echo "$ir" | grep -q "vcopy<8>(C\[" || fail "the store of C_shared is not 16-byte vector copies"
echo "$ir" | grep -qE "^ *C\[" && fail "element stores to C are left beside the vector copies"
echo "$ir" | grep -q "vcopy<8>(C\[.*, aligned)" || fail "the vector copies are not proven aligned"
"$tool" compile $f --entry matmul_staged -D M=1000 -D N=1000 -D K=1000 --target cuda \
  --dump-after partition_threads | grep -q "vcopy<8>(C\[" || fail "partial tiles: no vector copies"
echo "staged epilogue: ok"
