#!/bin/sh
# Golden test: run the command named on the first "# ARGS:" line of a .py
# file (FILE stands for the file itself) and compare what it prints with
# the expected text beside it: x.out (must succeed, stdout) or x.err (must
# fail with a non-zero exit, stderr).  UPDATE_GOLDEN=1 rewrites the
# expected file instead.  An optional "# ENV:" line sets environment
# variables for the command (NAME=value words, e.g. the CUDA architecture,
# so that the output does not depend on the machine's GPU).  Run from the
# repository root.
set -u
f="$1"
base="${f%.py}"
tool="${TILESCALE:-./build/tilescale}"
args=$(sed -n 's/^# ARGS: //p' "$f" | head -n1)
[ -n "$args" ] || { echo "$f: no '# ARGS:' line"; exit 1; }
rel=$(realpath --relative-to="$PWD" "$f")
args=$(echo "$args" | sed "s|FILE|$rel|g")
envs=$(sed -n 's/^# ENV: //p' "$f" | head -n1)
out=$(mktemp); err=$(mktemp)
# shellcheck disable=SC2086
env $envs "$tool" $args >"$out" 2>"$err"
rc=$?
# AddressSanitizer's one-line notice that it only partly follows
# swapcontext (the C target's thread coroutines, src/target/c/threads_c.c)
# is the sanitizer build's, not the compiler's: not part of the diagnostic.
grep -v "^==[0-9]*==WARNING: ASan doesn't fully support makecontext/swapcontext" "$err" >"$err.f"; mv "$err.f" "$err"
if [ -f "$base.err" ] || { [ "${UPDATE_GOLDEN:-}" = 1 ] && [ $rc -ne 0 ]; }; then
  want="$base.err"; got="$err"
  [ $rc -ne 0 ] || { echo "$f: expected a failure, exit status was 0"; cat "$out"; rm -f "$out" "$err"; exit 1; }
else
  want="$base.out"; got="$out"
  [ $rc -eq 0 ] || { echo "$f: failed with status $rc"; cat "$err"; rm -f "$out" "$err"; exit 1; }
fi
if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
  cp "$got" "$want"; echo "updated $want"; rm -f "$out" "$err"; exit 0
fi
if diff -u "$want" "$got"; then rc=0; else echo "$f: output differs from $want"; rc=1; fi
rm -f "$out" "$err"
exit $rc
