#!/bin/sh
# `--tiered` and the tiered CUDA build through the CLI (pass tier_plan,
# driver/api.c, target/cuda/tier_cuda.c).  Without NVRTC only the emitted
# source and the option's errors are checked (the rest exits 77, reported
# as skipped); NVRTC is enough for the rest, no GPU needed:
#   - `compile --tiered quick --emit cuda` prints the quick tier (rolled k16
#     loops, NVRTC's fast-compile line), `--tiered 0` and the default the
#     full tier (what --emit shows: the kernel's own source);
#   - a bad value is a usage error (exit 2);
#   - `run` of a large kernel (GEMM 128x256x128, 256 threads) on an empty
#     cache builds the quick tier and, before the process exits, the full
#     one: two cubins (the launch itself fails without a driver, after the
#     compile); the next `run` takes the full tier from the cache and
#     builds nothing (still two); a small kernel builds one.
set -u
tool="${TILESCALE:-./build/tilescale}"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
export TILESCALE_CUDA_ARCH=sm_90
unset TILESCALE_TIERED
G="examples/gemm.py --entry matmul -D M=256 -D N=256 -D K=256 -D block_M=128 -D block_N=256 -D block_K=128 -D num_stages=2 -D threads=256"
S="examples/gemm.py --entry matmul -D M=256 -D N=256 -D K=256 -D block_M=64 -D block_N=64 -D block_K=16 -D num_stages=3"
rolled='#pragma unroll 1'
marker='/\* quick tier: nvrtc --Ofast-compile=min \*/'

$tool compile $G --tiered quick --emit cuda >$d/q 2>$d/err || { cat $d/err; fail "--tiered quick --emit cuda"; }
sed -n 3p $d/q | grep -q "$marker" || fail "--tiered quick: no fast-compile line"
grep -q "$rolled" $d/q || fail "--tiered quick: no rolled k16 loop"
TILESCALE_TIERED=quick $tool compile $G --emit cuda >$d/qe || fail "TILESCALE_TIERED=quick"
cmp -s $d/q $d/qe || fail "--tiered quick and TILESCALE_TIERED=quick differ"
for how in "--tiered 0" "--tiered 1" ""; do
  # shellcheck disable=SC2086
  $tool compile $G $how --emit cuda >$d/f || fail "compile $how"
  grep -q "quick tier" $d/f && fail "compile $how --emit cuda printed the quick tier"
  grep -q "$rolled" $d/f && fail "compile $how --emit cuda printed a rolled k16 loop"
done
$tool compile $G --target cuda --tiered quick >$d/ir || fail "--tiered quick (IR)"
grep -q "quick_tier gemm_k_rolled nvrtc_fast_compile min" $d/ir || fail "the quick tier's IR does not say so"
$tool compile $G --tiered sometimes --emit cuda >/dev/null 2>$d/err && fail "--tiered sometimes accepted"
grep -q "tiered expects 0, 1, quick or auto" $d/err || { cat $d/err; fail "--tiered sometimes: message"; }

# the builds themselves
$tool compile $S --emit ptx >/dev/null 2>$d/err
if grep -q "NVRTC not found" $d/err; then echo "skipped: NVRTC not found"; exit 77; fi
cubins() { find "$1" -name 'tsk-*.cubin' | wc -l; }
mkdir $d/c1 $d/c2
TILESCALE_CACHE_DIR=$d/c1 $tool run $G --target cuda --seed 1 >$d/out 2>&1
[ "$(cubins $d/c1)" -eq 2 ] || { cat $d/out; fail "run of a large kernel: $(cubins $d/c1) cubins, want 2 (quick + full)"; }
[ "$(grep -l 'quick tier: nvrtc' $d/c1/tsk-*.cu | wc -l)" -eq 1 ] || fail "not one quick-tier source in the cache"
TILESCALE_CACHE_DIR=$d/c1 $tool run $G --target cuda --seed 1 --time >$d/out 2>&1
[ "$(cubins $d/c1)" -eq 2 ] || fail "second run: $(cubins $d/c1) cubins, want still 2"
TILESCALE_CACHE_DIR=$d/c2 $tool run $S --target cuda --seed 1 >$d/out 2>&1
[ "$(cubins $d/c2)" -eq 1 ] || fail "run of a small kernel: $(cubins $d/c2) cubins, want 1"
TILESCALE_CACHE_DIR=$d/c2 $tool run $G --target cuda --seed 1 --tiered 0 >$d/out 2>&1
[ "$(cubins $d/c2)" -eq 2 ] || fail "--tiered 0: $(cubins $d/c2) cubins, want 1 more"
echo "cli_tiered: ok"
