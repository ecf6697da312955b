#!/bin/sh
# Bad usage of distributed primitives on sim ranks gives a clear error (the
# rank, the primitive, the buffer, the value) and a non-zero exit, never a
# hang: waits give up after --timeout seconds.
. tests/run/lib.sh
expect_error() {
  want="$1"; shift
  out=$(timeout 60 "$tool" run "$@" 2>&1)
  rc=$?
  echo "$out"
  if [ $rc -eq 0 ] || [ $rc -eq 124 ] || ! echo "$out" | grep -qF "$want"; then
    echo "FAILED (rc $rc, wanted '$want'): tilescale run $*"
    exit 1
  fi
}
f=tests/run/dist_bad.py
expect_error "rank 0: T.wait: timed out after 300 ms waiting for sig[element 1] (byte 260 of rank 0's heap) to be == 1; it is 0" \
  $f --entry lonely_wait -D P=2 --ranks 2 --timeout 0.3
expect_error "T.barrier_all: timed out after 300 ms: 4 of the 6 blocks of all ranks arrived" \
  $f --entry partial_barrier -D P=3 --ranks 3 --timeout 0.3
expect_error "T.barrier_blocks: timed out after 300 ms waiting for rank 1" \
  $f --entry partial_barrier_blocks -D P=4 --ranks 4 --timeout 0.3
expect_error "is out of range (3 ranks) for 'x'" \
  $f --entry bad_peer -D P=3 --ranks 3
expect_error "T.get: 512 bytes at byte 0 of 'x' are outside it (256 bytes)" \
  $f --entry get_past_end -D N=64 --ranks 2
