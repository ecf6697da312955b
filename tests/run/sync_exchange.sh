#!/bin/sh
# Thread-level exchanges whose race freedom rests on a condition over the
# thread and uniform loop variables (issue 8; tests/run/kernels/sync_exchange.py):
# the bitonic sort compiles for CUDA with one barrier per step and sorts on
# the C target (against a rank sort, random inputs, two sizes); each near
# miss (both threads of a pair exchanging, the partner's neighbour written,
# a condition that picks both threads of some pairs, the right pairs in
# early stages only) is still refused by insert_sync as a race; so is the
# near miss of DeepEP's `if tx == rank` read of the thread's own column.  The CUDA
# passes' IR of `bitonic` runs thread by thread in test_interp_examples.
. tests/run/lib.sh
f=tests/run/kernels/sync_exchange.py
check $f --entry bitonic --target c --check-against sort_naive
check $f --entry bitonic --target c -D N=64 -D threads=32 --check-against sort_naive
for d in "" "-D N=64 -D threads=32"; do
  out=$("$tool" compile $f --entry bitonic $d --target cuda --emit ir 2>&1) || { echo "$out"; echo "FAILED: bitonic $d refused"; exit 1; }
  n=$(echo "$out" | grep -c 'barrier()')
  # one at the start of each step (it also orders the copy in), one before the copy out
  [ "$n" = 2 ] || { echo "$out"; echo "FAILED: bitonic $d: $n barriers, expected 2"; exit 1; }
done
for e in bitonic_both bitonic_neighbour bitonic_mod4 bitonic_late; do
  for d in "" "-D N=64 -D threads=32"; do
    out=$("$tool" compile $f --entry $e $d --target cuda 2>&1)
    rc=$?
    if [ $rc -eq 0 ] || ! echo "$out" | grep -q "threads of one thread range may access the same element of 'v'"; then
      echo "$out" | head -5
      echo "FAILED: the racy variant $e $d was not refused as a race (exit status $rc)"
      exit 1
    fi
    echo "refused as a race: $e $d"
  done
done
# DeepEP notify_dispatch's form: thread tx writes column tx, then under
# `if tx == r` (r a run-time scalar) reads column r: the thread's own.
for rv in 0 3; do
  check $f --entry own_column --target c --check-against own_column_naive --in r=$rv
done
"$tool" compile $f --entry own_column --target cuda >/dev/null || { echo "FAILED: own_column refused"; exit 1; }
for e in own_column_other own_column_shifted; do
  out=$("$tool" compile $f --entry $e --target cuda 2>&1)
  rc=$?
  if [ $rc -eq 0 ] || ! echo "$out" | grep -q "threads of one thread range may access the same element of 'M'"; then
    echo "$out" | head -5
    echo "FAILED: the racy variant $e was not refused as a race (exit status $rc)"
    exit 1
  fi
  echo "refused as a race: $e"
done
echo "sync_exchange: ok"
