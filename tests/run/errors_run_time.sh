#!/bin/sh
# Issue 9, parts B and C: bad run-time input and output paths are clear
# errors with a non-zero exit, never a crash, an endless read, the OOM
# killer, or a replaced or emptied file.
set -u
tool="${TILESCALE:-./build/tilescale}"
d=$(mktemp -d)
trap 'umount "$d/tfs" 2>/dev/null; rm -rf "$d"' EXIT
fails=0
fail() { echo "FAILED: $*"; fails=$((fails + 1)); }
cat >"$d/base.py" <<'PY'
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def add(M, N, bm=32, bn=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm)) as (bx, by):
            for i, j in T.Parallel(bm, bn):
                if by * bm + i < M and bx * bn + j < N:
                    C[by * bm + i, bx * bn + j] = A[by * bm + i, bx * bn + j] + B[by * bm + i, bx * bn + j]

    return main
PY
run="$d/base.py --entry add"

# expect_fail 'words' args...: exit status 1 or 2 (not a signal), words on stderr
expect_fail() {
  want=$1; shift
  timeout 60 "$tool" "$@" >"$d/out" 2>"$d/err"
  rc=$?
  if [ $rc -ne 1 ] && [ $rc -ne 2 ]; then fail "[$*] exit status $rc"; cat "$d/err"; return; fi
  grep -Fq -- "$want" "$d/err" || { fail "[$*] stderr lacks '$want'"; cat "$d/err"; }
  head -n1 "$d/err" | grep -Eq '^([^:]+:[0-9]+:[0-9]+|tilescale): error: ' || { fail "[$*] format"; cat "$d/err"; }
}

# B: sizes that overflow or exceed the memory are refused before allocating
expect_fail 'has more bytes than fit in 64 bits' run $run -D M=4611686018427387904 -D N=4
expect_fail 'bytes of memory are available' run $run -D M=1099511627776 -D N=64
# B: FILE and --in must be regular files; the real error is reported
expect_fail 'not a regular file' run /dev/zero --entry add
expect_fail 'Is a directory' run "$d" --entry add
expect_fail 'No such file or directory' run "$d/nope.py" --entry add
expect_fail 'not a regular file' run $run -D M=4 -D N=4 --in A=/dev/zero
expect_fail 'Is a directory' run $run -D M=4 -D N=4 --in A="$d"
# B: a .npy header that claims more data than the file holds: refused before
# allocating (2^40 float32 elements would need 4 TB)
python3 - "$d/huge.npy" <<'PY'
import sys
h = "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }"
h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
open(sys.argv[1], "wb").write(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h.encode() + b"\0" * 64)
PY
expect_fail 'data is truncated' run $run -D M=4 -D N=4 --in A="$d/huge.npy"

# numeric options are validated
expect_fail "--seed expects an integer" run $run -D M=4 -D N=4 --seed abc
expect_fail "--threads expects an integer" run $run -D M=4 -D N=4 --threads -1
expect_fail "--atol expects a finite number" run $run -D M=4 -D N=4 --atol abc
expect_fail "--rtol expects a finite number" run $run -D M=4 -D N=4 --rtol nan
expect_fail "--shape expects an integer" run $run -D M=4 -D N=4 --shape M=abc

# C: --out never replaces a device node, and is checked before the kernel runs
# (a device node of our own when we may make one: a regression must not
# replace the machine's /dev/full)
if mknod "$d/full" c 1 7 2>/dev/null; then
  expect_fail 'not a regular file' run $run -D M=4 -D N=4 --out C="$d/full"
  [ -c "$d/full" ] || fail "the device node was replaced by a file"
  grep -q '^main: target' "$d/out" && fail "the kernel ran before --out was checked"
fi
mkfifo "$d/fifo" && expect_fail 'not a regular file' run $run -D M=4 -D N=4 --out C="$d/fifo"
[ -p "$d/fifo" ] || fail "the FIFO was replaced"
expect_fail 'No such file or directory' run $run -D M=4 -D N=4 --out C="$d/nodir/c.npy"
# C: an empty output name, and every rank's --out checked before a distributed run's kernel (fuzz campaign 6)
expect_fail 'the output file name is empty' run $run -D M=4 -D N=4 --out C=
expect_fail 'the output file name is empty' run $run -D M=4 -D N=4 --out C= --ranks 2 --timeout 5
expect_fail "$d/nodir/c0.npy: cannot write" run $run -D M=4 -D N=4 --out C="$d/nodir/c{rank}.npy" --ranks 2 --timeout 5
grep -q 'ranks (sim)' "$d/out" && fail "the distributed kernel ran before --out was checked"
# C: --out writes through a symlink (the link stays, its target gets the data)
: >"$d/target.npy"
ln -s target.npy "$d/link.npy"
"$tool" run $run -D M=40 -D N=70 --seed 5 --out C="$d/link.npy" >/dev/null 2>&1 || fail "--out through a symlink"
[ -L "$d/link.npy" ] || fail "the symlink was replaced"
[ -s "$d/target.npy" ] || fail "the symlink's target is empty"
"$tool" run $run -D M=40 -D N=70 --seed 5 --out C="$d/direct.npy" >/dev/null 2>&1 || fail "--out to a plain file"
cmp -s "$d/target.npy" "$d/direct.npy" || fail "data through the symlink differs"
ln -s new.npy "$d/dangling.npy"
"$tool" run $run -D M=40 -D N=70 --seed 5 --out C="$d/dangling.npy" >/dev/null 2>&1 || fail "--out via a dangling link"
[ -L "$d/dangling.npy" ] && cmp -s "$d/new.npy" "$d/direct.npy" || fail "dangling link: target not created"
# C: write errors are reported with a non-zero exit (EFBIG here; ENOSPC takes the same path)
( trap '' XFSZ; ulimit -f 4 2>/dev/null && "$tool" run $run -D M=64 -D N=64 --seed 1 --out C="$d/big.npy" >/dev/null 2>"$d/err"; echo $? >"$d/rc" )
if [ "$(cat "$d/rc")" = 0 ]; then fail "a failed write exited 0"; fi
grep -q 'cannot write' "$d/err" || { fail "write error message"; cat "$d/err"; }
ls "$d"/big.npy* >/dev/null 2>&1 && fail "a partial output file was left behind"

# C: a full disk (ENOSPC) on a 64 KiB tmpfs of our own where we may mount one
# (root, as in CI): non-zero exit, the message names the error, no partial
# file, and an older output at that path is left as it was (never data lost)
mkdir -p "$d/tfs"
if mount -t tmpfs -o size=64k tmpfs "$d/tfs" 2>/dev/null; then
  printf 'older output' >"$d/tfs/c.npy"
  "$tool" run $run -D M=256 -D N=256 --seed 1 --out C="$d/tfs/c.npy" >/dev/null 2>"$d/err"
  rc=$?
  [ $rc -ne 0 ] || fail "a write to a full disk exited 0"
  grep -q 'cannot write.*No space left on device' "$d/err" || { fail "ENOSPC message"; cat "$d/err"; }
  [ "$(cat "$d/tfs/c.npy")" = 'older output' ] || fail "the older output was lost on ENOSPC"
  [ "$(ls "$d/tfs" | wc -l)" = 1 ] || { fail "a partial file was left on the full disk"; ls -la "$d/tfs"; }
  umount "$d/tfs"
else
  echo "note: no tmpfs mount here (not root?): the ENOSPC case was not run"
fi

# A: extents stay 64-bit end to end (4294967360 was printed as 64, 2^40 as 0)
"$tool" compile $run -D M=4294967360 -D N=1099511627776 >"$d/ir" 2>&1 || { fail "compile with 64-bit extents"; cat "$d/ir"; }
grep -q 'C: global float32\[4294967360, 1099511627776\] out) grid(34359738368, 134217730)' "$d/ir" ||
  { fail "64-bit extents or grid cut in the IR"; head -3 "$d/ir"; }
expect_fail 'float32[4294967360, 1099511627776] has more bytes than fit in 64 bits' run $run -D M=4294967360 -D N=1099511627776
# ... also in a distributed run's heap (signed overflow in dist.c: fuzz campaign 5, tests/fuzz_corpus/cli-dist-heap-overflow)
expect_fail "'Q' float16[1, 64, 4611686018427387904, 32] has more bytes than fit in 64 bits" run examples/flash_attention.py \
  --entry flashattn -D batch=1 -D heads=4611686018427387904 -D seq_len=64 -D dim=32 -D is_causal=True --ranks 2 --timeout 5

[ $fails -eq 0 ] || { echo "$fails case(s) failed"; exit 1; }
echo ok
