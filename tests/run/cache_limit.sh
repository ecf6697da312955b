#!/bin/sh
# Issue 9 F: the kernel cache's size limit and `tilescale cache info|clean`.
#  - beyond $TILESCALE_CACHE_MAX the least recently used kernels go first
#    (a cache hit counts as a use), the kernel just built stays, and so does
#    every kernel used in the last minute even when the limit is exceeded;
#  - files the cache did not make (other names, a symlink and a directory
#    with the cache's own names) are never removed; a writer's temporary is
#    removed only when stale;
#  - `cache info` counts kernels, bytes and foreign files; `cache clean`
#    empties, `cache clean --max-size` trims to a size;
#  - a malformed TILESCALE_CACHE_MAX is an error, not ignored;
#  - processes building and trimming at once all succeed.
set -u
tool="${TILESCALE:-./build/tilescale}"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
C=$d/cache
export TILESCALE_CACHE_DIR=$C
unset TILESCALE_CACHE_MAX
add="examples/elementwise_add.py --entry elementwise_add_naive"
# build N: compile and run a distinct kernel (N is its M extent)
build() { "$tool" run $add -D M="$1" -D N=8 --seed 1 >"$d/log" 2>&1 || { cat "$d/log"; fail "build $1"; }; }
ours() { find "$C" -maxdepth 1 -type f -name 'tsk-*' ! -name '*tmp*' -printf '%f\n' | grep -E '^tsk-[0-9a-f]{32}\.' | sort; }
bytes() { s=0; for f in "$@"; do s=$((s + $(stat -c %s "$C/$f"))); done; echo $s; }
key_files() { ls "$C" | grep "^$1\." ; }
new_key() { comm -13 "$d/before" "$d/after" | sed 's/\..*//' | sort -u; }
make_kernel() { ours >"$d/before"; build "$1"; ours >"$d/after"; k=$(new_key); [ -n "$k" ] || fail "no new kernel for $1"; echo "$k"; }

# the size of kernel D, measured in a cache of its own
TILESCALE_CACHE_DIR=$d/solo "$tool" run $add -D M=48 -D N=8 --seed 1 >/dev/null || fail "solo build"
sD=0; for f in "$d"/solo/tsk-*; do sD=$((sD + $(stat -c %s "$f"))); done

mkdir -p "$C"
# foreign files with the cache's names and others
echo keep >"$C/README"
echo keep >"$C/tsk-notakey.c"
echo keep >"$d/outside"
ln -s "$d/outside" "$C/tsk-0123456789abcdef0123456789abcdef.so"
mkdir "$C/tsk-fedcba9876543210fedcba9876543210.c"
foreign="README tsk-notakey.c tsk-0123456789abcdef0123456789abcdef.so tsk-fedcba9876543210fedcba9876543210.c"

A=$(make_kernel 8); B=$(make_kernel 16); K3=$(make_kernel 24)
sA=$(bytes $(key_files $A)); sC=$(bytes $(key_files $K3))
for f in $(key_files $A); do touch -d '4 hours ago' "$C/$f"; done
for f in $(key_files $B); do touch -d '3 hours ago' "$C/$f"; done
for f in $(key_files $K3); do touch -d '2 hours ago' "$C/$f"; done
"$tool" cache info >"$d/info" || fail "cache info"
grep -q "^  kernels: 3 (6 files" "$d/info" || { cat "$d/info"; fail "info: 3 kernels"; }
grep -q "^  other files: 4 " "$d/info" || { cat "$d/info"; fail "info: 4 foreign files"; }
grep -q "^  limit:   1.00 GiB" "$d/info" || { cat "$d/info"; fail "info: default limit"; }
build 8 # a hit on A: now its last use is the newest of the three
grep -q "cache hit" "$d/log" 2>/dev/null; "$tool" run $add -D M=8 -D N=8 --seed 1 --time | grep -q "cache hit" || fail "A is not a hit"

# D over the limit: B (least recently used) goes; C, A (just used) and D stay
export TILESCALE_CACHE_MAX=$((sD + sA + sC + 100))
D=$(make_kernel 48)
[ -z "$(key_files $B)" ] || fail "B (least recently used) was kept"
[ -n "$(key_files $A)" ] || fail "A (used by a cache hit) was removed"
[ -n "$(key_files $K3)" ] || fail "C was removed though B's removal was enough"
[ -n "$(key_files $D)" ] || fail "the kernel just built was removed"

# a tiny limit: the old kernel goes, those used in the last minute stay
export TILESCALE_CACHE_MAX=1
E=$(make_kernel 56)
[ -z "$(key_files $K3)" ] || fail "C (old) was kept under a 1-byte limit"
for k in $A $D $E; do [ -n "$(key_files $k)" ] || fail "a kernel used in the last minute was removed"; done
for f in $foreign; do [ -e "$C/$f" ] || fail "foreign $f removed by trimming"; done
[ "$(cat "$d/outside")" = keep ] || fail "a symlink's target was touched"

# concurrent builders under a 1-byte limit, old kernels to trim around them
for f in $(ours); do touch -d '2 hours ago' "$C/$f"; done
pids=""
for m in 64 72 80 88; do "$tool" run $add -D M=$m -D N=8 --seed 1 >"$d/p$m" 2>&1 & pids="$pids $!"; done
for p in $pids; do wait $p || { cat "$d"/p*; fail "a concurrent build failed"; }; done
for m in 64 72 80 88; do grep -q 'sum' "$d/p$m" || fail "concurrent run $m printed no result"; done

# malformed limit
TILESCALE_CACHE_MAX=abc "$tool" run $add -D M=8 -D N=8 >"$d/out" 2>&1 && fail "TILESCALE_CACHE_MAX=abc accepted"
grep -q "TILESCALE_CACHE_MAX='abc' is not a size" "$d/out" || { cat "$d/out"; fail "malformed limit message"; }
TILESCALE_CACHE_MAX=abc "$tool" cache info >"$d/out" 2>&1 && fail "cache info with a malformed limit"
unset TILESCALE_CACHE_MAX

# clean --max-size trims to the size (kernels used in the last minute are
# spared, so age them first), clean empties; temporaries only when stale
for f in $(ours); do touch -d '2 hours ago' "$C/$f"; done
echo t >"$C/tsk-00000000000000000000000000000000.so.tmp-abcdef"; touch -d '2 hours ago' "$C/tsk-00000000000000000000000000000000.so.tmp-abcdef"
echo t >"$C/tsk-11111111111111111111111111111111.so.tmp-ghijkl"
n0=$(ours | wc -l)
"$tool" cache clean --max-size 70K >"$d/out" || fail "clean --max-size"
left=$(bytes $(ours))
[ "$left" -le 71680 ] || { cat "$d/out"; fail "clean --max-size 70K left $left bytes"; }
[ -n "$(ours)" ] || fail "clean --max-size 70K removed everything"
[ "$(ours | wc -l)" -lt "$n0" ] || fail "clean --max-size 70K removed nothing"
[ -e "$C/tsk-00000000000000000000000000000000.so.tmp-abcdef" ] && fail "stale temporary kept"
[ -e "$C/tsk-11111111111111111111111111111111.so.tmp-ghijkl" ] || fail "fresh temporary (a writer at work) removed"
"$tool" cache clean >"$d/out" || fail "clean"
grep -q "^removed [1-9][0-9]* kernel" "$d/out" || { cat "$d/out"; fail "clean's report"; }
[ -z "$(ours)" ] || fail "clean left kernels: $(ours)"
for f in $foreign; do [ -e "$C/$f" ] || fail "foreign $f removed by clean"; done
"$tool" cache info | grep -q "^  kernels: 0 " || fail "info after clean"
# a missing directory is an empty cache, and is not created
TILESCALE_CACHE_DIR=$d/none "$tool" cache info | grep -q "^  kernels: 0 " || fail "info of a missing directory"
[ -e "$d/none" ] && fail "cache info created the directory"
echo ok
