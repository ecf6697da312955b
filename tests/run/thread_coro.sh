#!/bin/sh
# Threads of one block waiting for each other on the C target (block-thread
# coroutines, target/c/threads_c.c; tests/run/thread_coro.py says what each
# kernel does): a producer/consumer pair, groups with run-time named
# barrier ids, a shared-memory spin, a warp shuffle and T.thread_return,
# against serial references; a wait nobody ends fails with the wait's
# timeout error (rank, buffer, value) instead of hanging.
. tests/run/lib.sh
f=tests/run/thread_coro.py
check $f --entry pc --check-against pc_ref
check $f --entry groups --check-against groups_ref
check $f --entry groups -D G=3 --check-against groups_ref
check $f --entry staged --check-against staged_ref
out=$(TILESCALE_WAIT_TIMEOUT=1 timeout 60 "$tool" run $f --entry stuck 2>&1)
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || { echo "FAILED: a stuck wait did not fail (rc $rc): $out"; exit 1; }
echo "$out" | grep -q "rank 0: T.wait: timed out after 1000 ms waiting for F\[element 2\]" ||
  { echo "FAILED: $out"; exit 1; }
# the same kernels compile for CUDA: a run-time barrier id, return, the shuffle
out=$("$tool" compile $f --entry groups --target cuda --emit cuda 2>&1) || { echo "FAILED: $out"; exit 1; }
for want in "ts_bar_sync_any((int)(" "return;" "ts_warp_shfl("; do
  echo "$out" | grep -qF "$want" || { echo "FAILED: no '$want' in the CUDA source"; exit 1; }
done
echo "thread_coro: ok"
