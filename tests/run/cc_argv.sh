#!/bin/sh
# Issue 9 E: the C compiler is started without a shell.  CC and
# TILESCALE_CFLAGS are split into words (quotes respected), so shell syntax
# in them is never run, a quoted flag with a blank arrives as one argument,
# an unterminated quote and a missing compiler are clear errors.
set -u
tool="${TILESCALE:-./build/tilescale}"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fails=0
fail() { echo "FAILED: $*"; fails=$((fails + 1)); }
ex="examples/elementwise_add.py --entry elementwise_add -D M=40 -D N=70 --seed 1"
export TILESCALE_CACHE_DIR="$d/cache"

# shell syntax in the flags is an argument to cc, never a command
TILESCALE_CFLAGS="-O1 ;touch $d/pwned" "$tool" run $ex >"$d/out" 2>&1 && fail "';touch' as a flag compiled"
[ -e "$d/pwned" ] && fail "a shell ran TILESCALE_CFLAGS"
TILESCALE_CFLAGS="\$(touch $d/pwned2)" "$tool" run $ex >"$d/out" 2>&1
[ -e "$d/pwned2" ] && fail "a shell ran \$(...) in TILESCALE_CFLAGS"
# a quoted define with a blank is one word: the kernel still compiles and runs
TILESCALE_CFLAGS="-DTS_TEST_X='a b' -O1" "$tool" run $ex >"$d/out" 2>&1 || { fail "quoted flag"; cat "$d/out"; }
# the command in the cache's record shows the words
grep -q "flags: .*-DTS_TEST_X='a b'" "$d"/cache/*.c || fail "flags not recorded in the cached source"
# an unterminated quote
TILESCALE_CFLAGS="-DX='a b" "$tool" run $ex >"$d/out" 2>&1 && fail "unterminated quote accepted"
grep -q "do not split into words" "$d/out" || { fail "unterminated quote message"; cat "$d/out"; }
# a compiler that does not exist: the real reason
CC="$d/no-such-cc" "$tool" run $ex >"$d/out" 2>&1 && fail "missing compiler accepted"
grep -q "does not run.*No such file or directory" "$d/out" || { fail "missing compiler message"; cat "$d/out"; }
# a compiler given with its own arguments (as "ccache gcc" would be)
CC="cc -O0" TILESCALE_CACHE_DIR="$d/cache2" "$tool" run $ex >"$d/out" 2>&1 || { fail "CC with arguments"; cat "$d/out"; }
# a cache directory whose name has blanks and shell characters
TILESCALE_CACHE_DIR="$d/a b;\$(touch $d/pwned3)" "$tool" run $ex >"$d/out" 2>&1 || { fail "odd cache dir"; cat "$d/out"; }
[ -e "$d/pwned3" ] && fail "a shell ran the cache directory's name"

[ $fails -eq 0 ] || { echo "$fails case(s) failed"; exit 1; }
echo ok
