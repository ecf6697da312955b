#!/bin/sh
# The CLI's data paths: --out writes every tensor to .npy, --in reads them
# back (the second run must reproduce the first bit for bit), --seed fixes
# the random inputs, and a different seed gives different inputs.
set -u
tool="${TILESCALE:-./build/tilescale}"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
ex="examples/elementwise_add.py --entry elementwise_add -D M=40 -D N=70"
fail() { echo "FAILED: $*"; exit 1; }

$tool run $ex --seed 7 --out A=$d/a.npy --out B=$d/b.npy --out C=$d/c.npy >/dev/null || fail "run with --out"
$tool run $ex --in A=$d/a.npy --in B=$d/b.npy --out C=$d/c2.npy >/dev/null || fail "run with --in"
cmp -s $d/c.npy $d/c2.npy || fail "C from --in inputs differs from the first run"
$tool run $ex --seed 7 --out A=$d/a7.npy >/dev/null || fail "second run with seed 7"
cmp -s $d/a.npy $d/a7.npy || fail "--seed 7 twice gave different inputs"
$tool run $ex --seed 8 --out A=$d/a8.npy >/dev/null || fail "run with seed 8"
cmp -s $d/a.npy $d/a8.npy && fail "--seed 7 and --seed 8 gave the same inputs"
# the .npy files are real NumPy files: magic, version, a header naming the dtype and shape
head -c 6 $d/c.npy | od -c | head -1 | grep -q 'N   U   M   P   Y' || fail "bad .npy magic"
grep -a -q "'descr': '<f4'" $d/c.npy || fail "dtype missing from the .npy header"
grep -a -q "'shape': (40, 70)" $d/c.npy || fail "shape missing from the .npy header"
# a shape mismatch between a file and the kernel is reported, not crashed on
$tool run examples/elementwise_add.py --entry elementwise_add -D M=41 -D N=70 --in A=$d/a.npy >$d/out 2>&1 && fail "shape mismatch accepted"
grep -q "shape" $d/out || { cat $d/out; fail "shape mismatch message"; }
# a wrong entry name is reported
$tool run $ex --check-against no_such_entry >$d/out 2>&1 && fail "unknown --check-against entry accepted"
grep -q "no function 'no_such_entry'" $d/out || { cat $d/out; fail "unknown entry message"; }
echo "ok"
