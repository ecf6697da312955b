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
for e in cuda ptx sass; do
    $tool compile $G --target c --emit $e >$d/out 2>&1
    [ $? -eq 2 ] || fail "--target c --emit $e: exit status not 2"
    grep -q "needs --target cuda" $d/out || { cat $d/out; fail "--target c --emit $e: message"; }
done
$tool compile $G --emit bogus >$d/out 2>&1
[ $? -eq 2 ] || fail "--emit bogus: exit status not 2"
grep -q "ir, c, cuda, ptx or sass" $d/out || { cat $d/out; fail "--emit bogus: message"; }
echo "ok"
