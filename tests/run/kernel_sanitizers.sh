#!/bin/sh
# Issue 9 H: in the sanitizer build, the generated C kernels can be built
# with the sanitizers too (TILESCALE_CFLAGS; .ci/run's ASan leg sets it for
# every test).  Planted bug: a tiled add without a boundary guard on a
# tensor smaller than a tile, run with the library's own bounds checks off.
# With instrumented kernels AddressSanitizer must report the overflow inside
# the kernel; a plain release build cannot load instrumented kernels, so
# there this test is skipped (77).
. tests/run/lib.sh
if ! ldd "$tool" 2>/dev/null | grep -q libasan && ! nm "$tool" 2>/dev/null | grep -q __asan_init; then
  echo "not a sanitizer build: skipped"
  exit 77
fi
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
export TILESCALE_CACHE_DIR="$d/kcache"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
f=tests/golden/err_oob_global_store.py
TILESCALE_CFLAGS="$san" ASAN_OPTIONS=detect_leaks=0 "$tool" run $f --entry add -D M=16 -D N=16 --seed 1 --threads 1 \
  --no-check-bounds >"$d/out" 2>&1 && { cat "$d/out"; echo "FAILED: an out-of-bounds kernel ran clean"; exit 1; }
grep -q "ERROR: AddressSanitizer: heap-buffer-overflow" "$d/out" && grep -q "in tsk_" "$d/out" || {
  cat "$d/out"; echo "FAILED: no AddressSanitizer report from inside the kernel"; exit 1; }
echo "ok: the instrumented kernel's overflow was reported inside it"
# and a correct kernel runs clean with instrumented kernels
TILESCALE_CFLAGS="$san" check examples/softmax.py --entry softmax -D M=40 -D N=33 --check-against softmax_naive
