#!/bin/bash
# tilelang_examples.sh — TileLang's own example tests run unchanged on our compiler (issue 8 C).
#
#   bash bench/tilelang_examples.sh fetch [GITDIR]   # HERE: TileLang's examples/ into .tl-examples/
#                                                    # (ignored; carry it) from a git mirror of
#                                                    # tile-ai/tilelang (default: the fetch tool's
#                                                    # /work/.mirror/tile-ai+tilelang/repo)
#   bash bench/tilelang_examples.sh run [REGEX]      # ON THE DEVICE (carry [".tl-examples"])
#
# `run` builds libtilescale (as bench/py_gpu.sh, build dir $B, kept between calls on a warm
# machine), lists every `def test_*` of every examples/*/test_example_*.py (or only files whose
# path matches REGEX), and runs each test function on its own,
#     cd <its directory> && TILESCALE_TEST=<name> python3 -m tilescale test_example_x.py
# ($TILESCALE_TEST makes `python -m tilescale` import the test file, as pytest does, and run just
# that test through tilelang.testing's runner), $JOBS at a time (default 4:
# mostly compile-bound), each under a $PER_TEST-second timeout (default 240), stopping new ones
# after $BUDGET seconds (default 480, inside one 10-minute device call).  TileLang is NOT
# installed there: `import tilelang` is our shim (tilescale.tilelang); nor is flash-attn, the reference
# of a few tests: bench/tl_refs/flash_attn, a torch reference, stands in for it.  Results: one row per test
# (PASSED / FAILED / SKIPPED / TIMEOUT / ERROR, seconds, the first error line) in
# $OUT/tilelang_examples.md, the per-test logs (last 60 lines each) in $OUT/tl_logs/.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
if [ "${1:-}" = fetch ]; then
  src=${2:-/work/.mirror/tile-ai+tilelang/repo}
  ex="$(git rev-parse --git-path info/exclude)"
  grep -qx "/.tl-examples/" "$ex" 2>/dev/null || echo "/.tl-examples/" >>"$ex"
  rm -rf .tl-examples && mkdir -p .tl-examples
  git --git-dir="$src" archive HEAD examples | tar -x -C .tl-examples --strip-components=1
  git --git-dir="$src" rev-parse HEAD >.tl-examples/COMMIT
  echo "$(find .tl-examples -name 'test_example_*.py' | wc -l) test files, $(du -sh .tl-examples | cut -f1), tile-ai/tilelang $(cut -c1-10 .tl-examples/COMMIT)"
  exit 0
fi
[ "${1:-}" = run ] || { sed -n '2,22p' "$0"; exit 2; }
PATTERN=${2:-.}
[ -d .tl-examples ] || { echo "no .tl-examples/: run '$0 fetch' where the call is made from, and carry it"; exit 2; }
B=${B:-build-gpu}
OUTD=${OUT:-/tmp}
JOBS=${JOBS:-4}
PER_TEST=${PER_TEST:-240}
BUDGET=${BUDGET:-480}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TILESCALE_CACHE_DIR=$ROOT/$B/kcache
t0=$(date +%s)
if ! { cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release && cmake --build "$B" -j"$(nproc)" --target tilescale tilescale_cli; } \
  >"$OUTD/tl_build.log" 2>&1; then
  tail -40 "$OUTD/tl_build.log"; echo "BUILD FAILED"; exit 1
fi
export TILESCALE_LIB=$ROOT/$B/libtilescale.so PYTHONPATH=$ROOT/python PYTHONUNBUFFERED=1
# pytest (some example tests import it): the image's, or bench/py_gpu.sh's /tmp/pyt, or .whl-py if carried
if ! python3 -c 'import pytest' 2>/dev/null; then
  [ -d /tmp/pyt ] || { ls .whl-py/*.whl >/dev/null 2>&1 && python3 -m pip install -q --no-index --no-deps --target /tmp/pyt .whl-py/*.whl; }
  [ -d /tmp/pyt ] && export PYTHONPATH=$PYTHONPATH:/tmp/pyt
fi
# flash-attn, the reference of the varlen FlashAttention and sparse GQA decode tests: where it is not
# installed, bench/tl_refs/flash_attn (a torch reference of the two functions they call) stands in
python3 -c 'import flash_attn' 2>/dev/null || export PYTHONPATH=$PYTHONPATH:$ROOT/bench/tl_refs
export DEADLINE=$((t0 + BUDGET)) PER_TEST OUTD
mkdir -p "$OUTD/tl_logs"
list=$(for f in $(find .tl-examples -name 'test_example_*.py' | sort | grep -E "$PATTERN"); do
  for t in $(sed -n 's/^def \(test_[A-Za-z0-9_]*\)(.*/\1/p' "$f"); do echo "$f $t"; done
done)
echo "build: $(($(date +%s) - t0)) s; $(echo "$list" | grep -c .) tests; tilelang $(cut -c1-10 .tl-examples/COMMIT)"
one() { # FILE TEST -> one tab-separated result line
  local f=$1 t=$2 log rc s0 status reason
  log="$OUTD/tl_logs/$(echo "${f#.tl-examples/}" | tr / _)__$t.log"
  if [ "$(date +%s)" -ge "$DEADLINE" ]; then printf 'R\t%s\t%s\tNOT RUN\t0\tout of time budget\n' "${f#.tl-examples/}" "$t"; return; fi
  s0=$(date +%s.%N)
  (cd "$(dirname "$f")" && TILESCALE_TEST=$t timeout "$PER_TEST" python3 -m tilescale "$(basename "$f")") >"$log.full" 2>&1
  rc=$?
  status=$(sed -n "s/^\(PASSED\|FAILED\|SKIPPED\) *$t\([[ ].*\)\{0,1\}$/\1/p" "$log.full" | sort -u | tr '\n' ' ')
  case "$status" in *FAILED*) status=FAILED ;; *PASSED*) status=PASSED ;; *SKIPPED*) status=SKIPPED ;; *) status= ;; esac
  [ $rc -eq 124 ] && status=TIMEOUT
  [ -z "$status" ] && status=ERROR
  reason=""
  if [ "$status" != PASSED ]; then
    reason=$(grep -m1 -E 'error:|Error:|Error\b|SKIPPED' "$log.full" | cut -c1-160 | tr '\t|' '  ')
    [ -z "$reason" ] && reason=$(tail -1 "$log.full" | cut -c1-160 | tr '\t|' '  ')
  fi
  tail -60 "$log.full" >"$log"; rm -f "$log.full"
  printf 'R\t%s\t%s\t%s\t%.1f\t%s\n' "${f#.tl-examples/}" "$t" "$status" "$(awk "BEGIN{print $(date +%s.%N) - $s0}")" "$reason"
}
export -f one
res=$(echo "$list" | grep . | xargs -P "$JOBS" -L 1 bash -c 'one "$0" "$1"' | grep '^R' | sort)
{
  echo "TileLang examples (tile-ai/tilelang $(cut -c1-10 .tl-examples/COMMIT)) on tilescale $(git rev-parse --short HEAD 2>/dev/null), $(date -u '+%F %H:%M UTC'), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
  echo
  for s in PASSED FAILED SKIPPED TIMEOUT ERROR "NOT RUN"; do printf '%s %s; ' "$(echo "$res" | cut -f4 | grep -cx "$s")" "$s"; done
  echo
  echo
  echo "| file | test | result | s | first error |"
  echo "|---|---|---|---|---|"
  echo "$res" | awk -F'\t' '{printf "| %s | %s | %s | %s | %s |\n", $2, $3, $4, $5, $6}'
} | tee "$OUTD/tilelang_examples.md"
echo "total: $(($(date +%s) - t0)) s"
