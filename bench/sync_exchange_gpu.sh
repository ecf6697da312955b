#!/bin/sh
# ON THE DEVICE: the bitonic sort of tests/run/kernels/sync_exchange.py,
# whose exchanges insert_sync accepts through sync_exclusive (issue 8: each
# step's barrier only, none inside the exchange), runs on the GPU against a
# rank sort on random inputs, at three sizes (N elements, `threads` per
# block, two or more elements per thread); then, where compute-sanitizer
# is found, under its racecheck (no hazard may be reported).  Prints one
# line per case and "sync_exchange_gpu: P passed, F failed"; exit 1 on a
# failure, 77 (skipped) only when the driver reports no CUDA device.
#   bash bench/sync_exchange_gpu.sh        (from the repository root, after a build)
set -u
tool="${TILESCALE:-./build/tilescale}"
f=tests/run/kernels/sync_exchange.py
passes=0 fails=0
echo "sync_exchange_gpu: $("$tool" --version 2>&1 | head -1), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
for d in "" "-D N=64 -D threads=32" "-D N=2048 -D threads=256"; do
  out=$("$tool" run $f --entry bitonic $d --target cuda --check-against sort_naive 2>&1)
  rc=$?
  if [ $rc -ne 0 ] && echo "$out" | grep -q "no CUDA driver found\|no CUDA device"; then
    echo "skipped: $(echo "$out" | grep -o "no CUDA[^(]*" | head -1)"
    exit 77
  fi
  if [ $rc -eq 0 ] && echo "$out" | grep -q '^PASS$'; then
    echo "passed: bitonic $d"; passes=$((passes + 1))
  else
    echo "$out" | tail -5; echo "FAILED: bitonic $d (exit status $rc)"; fails=$((fails + 1))
  fi
  if command -v compute-sanitizer >/dev/null 2>&1; then
    out=$(compute-sanitizer --tool racecheck --error-exitcode 9 "$tool" run $f --entry bitonic $d --target cuda 2>&1)
    rc=$?
    if [ $rc -eq 0 ] && echo "$out" | grep -q "RACECHECK SUMMARY: 0 hazards" && ! echo "$out" | grep -qE "^========= (Error|Warning)"; then
      echo "passed: racecheck bitonic $d"; passes=$((passes + 1))
    else
      echo "$out" | grep -i "hazard\|error" | head -5; echo "FAILED: racecheck bitonic $d (exit status $rc)"; fails=$((fails + 1))
    fi
  fi
done
echo "sync_exchange_gpu: $passes passed, $fails failed"
[ $fails -eq 0 ]
