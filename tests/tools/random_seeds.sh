#!/bin/sh
# The longer run with fresh seeds (issue 9 H): CI's ctest uses the fixed
# TS_TEST_SEED (tests/CMakeLists.txt) so that its result is reproducible;
# this configures a separate build with -DTS_TEST_SEED=random (every
# randomized test draws its own seed and prints it, the fuzzer draws one
# too) and runs the suite N times.  A failure's output names its seed:
# rerun that test with TS_TEST_SEED=<seed> (or `tilescale run ... --seed`).
#
#   sh tests/tools/random_seeds.sh [N [BUILD-DIR]]     # default 3 rounds, build-random
set -u
n=${1:-3}
b=${2:-build-random}
cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=Release -DTS_TEST_SEED=random >/dev/null || exit 1
cmake --build "$b" -j"$(nproc 2>/dev/null || echo 2)" >/dev/null || exit 1
export TILESCALE_CACHE_DIR="$PWD/$b/kcache"
fails=0
i=1
while [ "$i" -le "$n" ]; do
  echo "=== round $i of $n"
  if ! ctest --test-dir "$b" --output-on-failure -j"$(nproc 2>/dev/null || echo 2)" >"$b/round-$i.log" 2>&1; then
    fails=$((fails + 1))
    grep -E "Failed|seed" "$b/round-$i.log" | head -40
  fi
  tail -n 1 "$b/round-$i.log"
  i=$((i + 1))
done
echo "$fails of $n rounds failed (logs: $b/round-*.log)"
[ "$fails" -eq 0 ]
