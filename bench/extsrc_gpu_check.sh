#!/bin/bash
# extsrc_gpu_check.sh — session 10: external CUDA source in a kernel (T.import_source +
# T.call_extern, with T.access_ptr / T.address_of pointers) on a real GPU (a few minutes).
#  1. a kernel of our own (tests/golden/ir_extern.py ext_demo: two device functions of our
#     own, called as statements through pointers to local arrays and as an int32 value),
#     through tilescale.compile on torch CUDA tensors, against torch (random int32 inputs,
#     outputs poisoned);
#  2. TileLang's four examples that import the quantize package's (or their own) CUDA
#     source, each run unchanged through `python -m tilescale` with its own check:
#     dequantize_gemm's example_dequant_gemv_fp16xint4 (lop3 int4 -> fp16, assert_close),
#     example_dequant_gemm_bf16_fp4_hopper and _mxfp4_hopper (fp4 twiddling -> bf16 in a
#     pipelined tensor-core GEMM, profiler.assert_allclose against their torch references;
#     both fast and simple paths), bitnet-1.58b's int8 x int2 decode (decode_i2u_to_i8s +
#     T.dp4a, assert_close against torch.matmul); TileLang's own test functions of the two
#     dequantize examples in test_example_dequantize_gemm.py.
#
#   B=build-gpu bash bench/extsrc_gpu_check.sh   # from the repository root, carry [".tl-examples"]; builds $B
# One PASS/FAIL line per check, then "N passed, N failed".  Exit 1 if anything failed, 77 without a GPU.
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
passes=0
fails=0
res() { # label status output
  if [ "$2" -eq 0 ]; then echo "PASS $1"; passes=$((passes + 1)); else echo "FAIL $1"; echo "$3" | tail -15; fails=$((fails + 1)); fi
}
own() { # M
  local out
  out=$(TILESCALE_LIB=$PWD/$B/libtilescale.so PYTHONPATH=$PWD/python timeout 300 python3 - "$1" <<'PY' 2>&1
import sys, torch, tilescale
M = int(sys.argv[1])
k = tilescale.compile("tests/golden/ir_extern.py", "ext_demo", target="cuda", M=M)
src = k.get_kernel_source()
assert "mix3" in src and "add_pairs((&" in src, "the imported source or the calls are missing"
g = torch.Generator().manual_seed(11)
A = torch.randint(-1000, 1000, (M, 8), dtype=torch.int32, generator=g).cuda()
B = torch.full((M, 4), -7777, dtype=torch.int32, device="cuda")
C = torch.full((M,), -7777, dtype=torch.int32, device="cuda")
k(A, B, C)
torch.cuda.synchronize()
refB = A[:, 0::2] + A[:, 1::2]
refC = A[:, 0] * 3 + refB[:, 0]
assert torch.equal(B, refB), (B, refB)
assert torch.equal(C, refC), (C, refC)
print("ok")
PY
)
  [ $? -eq 0 ] && echo "$out" | grep -q '^ok$'
  res "own kernel ext_demo M=$1 (add_pairs through pointers, mix3 as a value) against torch" $? "$out"
}
own 64
own 256
ex() { # label dir want script args...: python -m tilescale in dir; exit 0 and `want` (if any) in its output
  local label=$1 dir=$2 want=$3
  shift 3
  local out st
  out=$(cd "$dir" && TILESCALE_TEST=${TT:-} TILESCALE_LIB=$OLDPWD/$B/libtilescale.so PYTHONPATH=$OLDPWD/python \
    timeout 480 python3 -m tilescale "$@" 2>&1)
  st=$?
  [ $st -eq 0 ] && { [ -z "$want" ] || echo "$out" | grep -q "$want"; }
  res "$label" $? "$out"
}
if [ -d .tl-examples ] && python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  ex "dequantize_gemm example_dequant_gemv_fp16xint4 (lop3 decode, 1x1024x1024, assert_close)" \
    .tl-examples/dequantize_gemm "Ref C" example_dequant_gemv_fp16xint4.py
  ex "dequantize_gemm example_dequant_gemm_bf16_fp4_hopper (256^3, fast and simple, assert_allclose)" \
    .tl-examples/dequantize_gemm "TFlops" example_dequant_gemm_bf16_fp4_hopper.py
  ex "dequantize_gemm example_dequant_gemm_bf16_mxfp4_hopper (256^3, 4 variants, assert_allclose)" \
    .tl-examples/dequantize_gemm "All checks pass" example_dequant_gemm_bf16_mxfp4_hopper.py
  ex "bitnet-1.58b tilelang_bitnet_158_int8xint2_decode (1x256x256, assert_close)" \
    .tl-examples/bitnet-1.58b/kernel_benchmark "" tilelang_bitnet_158_int8xint2_decode.py
  # TileLang's own tests of the two (as bench/tilelang_examples.sh runs them)
  for t in test_example_dequant_gemv_fp16xint4 test_example_dequant_gemm_bf16_mxfp4_hopper; do
    TT=$t ex "dequantize_gemm test_example_dequantize_gemm.py::$t" .tl-examples/dequantize_gemm "" \
      test_example_dequantize_gemm.py
  done
else
  echo "(.tl-examples or torch with CUDA missing: TileLang's examples skipped; carry .tl-examples)"
fi
echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
