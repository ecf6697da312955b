#!/bin/sh
# `tilescale compile --emit`: the choices and their errors, without NVRTC.
# --emit cuda prints the CUDA target's source (the same text as --target
# cuda --emit c) and chooses the CUDA target by itself; --emit cuda|ptx|sass
# with --target c and an unknown --emit are errors (exit 2), never a crash.
# PTX and SASS themselves are tested by cli_emit_device.sh (needs NVRTC).
set -u
tool="${TILESCALE:-./build/tilescale}"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
G="examples/gemm.py --entry matmul -D M=96 -D N=80 -D K=64 -D block_M=32 -D block_N=32 -D block_K=32"

$tool compile $G --emit cuda >$d/cuda 2>$d/err || { cat $d/err; fail "--emit cuda"; }
grep -q 'extern "C" __global__' $d/cuda || fail "--emit cuda printed no __global__ function"
grep -q 'tsk_kernel' $d/cuda || fail "--emit cuda printed no tsk_kernel"
$tool compile $G --target cuda --emit c >$d/c || fail "--target cuda --emit c"
cmp -s $d/cuda $d/c || fail "--emit cuda and --target cuda --emit c differ"
$tool compile $G --emit c >$d/cc || fail "--emit c"
grep -q '__global__' $d/cc && fail "--emit c without --target printed CUDA"
# two kernels (split-K): both printed
$tool compile examples/splitk_gemm.py --entry splitk_gemm -D M=96 -D N=80 -D K=256 -D splits=4 --emit cuda >$d/sk ||
    fail "--emit cuda of a chain"
[ "$(grep -c '__global__' $d/sk)" -ge 2 ] || fail "--emit cuda of a two-kernel chain printed fewer than two kernels"
# ptxas's fast-compile level (inject_pipeline, TILESCALE_CUDA_PTXAS_FAST): asked for on the
# second line after the register-usage level only when switched on: =1 every pipelined
# tensor-core loop, =2 those of >= 128 mma.sync per warp (this 64x64x32 one: 16 with 4 warps), default never
P="examples/gemm.py --entry matmul -D M=256 -D N=256 -D K=256 -D block_M=64 -D block_N=64 -D block_K=32 -D num_stages=2"
line2() { env TILESCALE_CUDA_ARCH=sm_90 "$@" $tool compile $P --emit cuda | sed -n 2p; }
want='^/\* ptxas --register-usage-level=8 --Ofast-compile=min (tensor-core loops) \*/$'
line2 TILESCALE_CUDA_PTXAS_FAST=1 | grep -q "$want" || fail "PTXAS_FAST=1: no fast-compile level on line 2"
for v in 0 2 ""; do
    line2 TILESCALE_CUDA_PTXAS_FAST=$v | grep -q 'Ofast-compile' && fail "PTXAS_FAST='$v': fast-compile level asked for"
done
line2 TILESCALE_CUDA_PTXAS_FAST=0 | grep -q '^/\* ptxas --register-usage-level=8 (tensor-core loops) \*/$' ||
    fail "the register-usage level line changed"
for e in cuda ptx sass; do
    $tool compile $G --target c --emit $e >$d/out 2>&1
    [ $? -eq 2 ] || fail "--target c --emit $e: exit status not 2"
    grep -q "needs --target cuda" $d/out || { cat $d/out; fail "--target c --emit $e: message"; }
done
$tool compile $G --emit bogus >$d/out 2>&1
[ $? -eq 2 ] || fail "--emit bogus: exit status not 2"
grep -q "ir, c, cuda, ptx or sass" $d/out || { cat $d/out; fail "--emit bogus: message"; }
echo "ok"
