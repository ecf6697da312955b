#!/bin/sh
# T.atomic_add(..., return_prev=True) and pass_configs'
# TL_DISABLE_THREAD_STORAGE_SYNC (tests/run/kernels/atomic_prev.py): bucket
# slots taken from shared and global counters by many threads, on the C
# target against a serial count (exact: each slot below a bucket's count
# marked once); the CUDA source and, where NVRTC is present, its PTX; then
# the same kernel without the pass config is refused (insert_sync cannot
# prove the slots apart), and return_prev of a whole buffer is refused.
# bench/cov7_gpu_check.sh runs them on a GPU.
. tests/run/lib.sh
f=tests/run/kernels/atomic_prev.py
for e in bucket_slots bucket_slots_global; do
  check $f --entry $e --target c --check-against bucket_slots_naive
  check $f --entry $e --target c -D N=1000 -D NB=5 --check-against bucket_slots_naive
  "$tool" compile $f --entry $e --target cuda --emit cuda >/dev/null || { echo "FAILED: CUDA source of $e"; exit 1; }
done
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
if "$tool" compile $f --entry bucket_slots --target cuda --emit ptx >"$t/p.ptx" 2>"$t/err"; then
  grep -q 'atom' "$t/p.ptx" || { echo "FAILED: no atomic in the PTX"; exit 1; }
elif ! grep -q "NVRTC not found" "$t/err"; then
  cat "$t/err"; echo "FAILED: PTX of bucket_slots"; exit 1
fi
# without the pass config: refused, naming the buffer
sed 's/, pass_configs=cfg)/)/' $f >"$t/nocfg.py"
out=$("$tool" compile "$t/nocfg.py" --entry bucket_slots --target cuda --emit cuda 2>&1)
echo "$out" | grep -q "threads of one thread range may access the same element of 's_marks'" ||
  { echo "FAILED: without the pass config, want a refusal; got:"; echo "$out"; exit 1; }
cat >"$t/bad.py" <<'PY'
import tilelang.language as T


@T.prim_func
def whole(A: T.Tensor((8,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        s = T.alloc_shared((8,), "int32")
        p = T.atomic_add(s, A, return_prev=True)
        A[0] = p
PY
out=$("$tool" compile "$t/bad.py" --entry whole --target c --emit c 2>&1)
echo "$out" | grep -q "bad.py:8:15: error: T.atomic_add(): return_prev=True takes one buffer element" ||
  { echo "FAILED: want the whole-buffer refusal; got:"; echo "$out"; exit 1; }
echo "atomic_prev: ok"
