#!/bin/sh
# T.sync_grid() (tests/run/kernels/sync_grid.py): a grid barrier at the top
# level of the body becomes the boundary of two launches (pass split_grid):
# the C target against a naive kernel, on several shapes; the CUDA source
# holds two kernels, the second with the shared tile declared before the
# barrier but used after it; --dump-after split_grid shows the cut.  Then the
# cooperative form (a barrier in a loop, block-local state used on both
# sides, a value read before and used after): one kernel with grid barriers,
# run on the C target (blocks as coroutines).  bench/cov7_gpu_check.sh and
# bench/blockcoll_gpu_check.sh run them on a GPU.
. tests/run/lib.sh
f=tests/run/kernels/sync_grid.py
check $f --entry centre --target c --check-against centre_naive
check $f --entry centre --target c -D N=77 -D nblocks=5 --check-against centre_naive
check $f --entry centre --target c -D N=4096 -D nblocks=64 --check-against centre_naive
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
"$tool" compile $f --entry centre --target cuda --emit cuda >"$t/c.cu" || { echo "FAILED: CUDA source"; exit 1; }
[ "$(grep -c '__global__ void' "$t/c.cu")" = 2 ] || { echo "FAILED: want two CUDA kernels"; exit 1; }
grep -q "kernel 'main': 32 threads, 32 bytes of dynamic shared memory" "$t/c.cu" || { echo "FAILED: the second kernel lacks the shared tile"; exit 1; }
if "$tool" compile $f --entry centre --target cuda --emit ptx >"$t/c.ptx" 2>"$t/err"; then
  [ "$(grep -c '\.entry' "$t/c.ptx")" = 2 ] || { echo "FAILED: want two PTX entries"; exit 1; }
elif ! grep -q "NVRTC not found" "$t/err"; then
  cat "$t/err"; echo "FAILED: PTX"; exit 1
fi
"$tool" compile $f --entry centre --target c --emit ir --dump-after split_grid >"$t/ir" 2>&1 || { cat "$t/ir"; echo "FAILED: --dump-after split_grid"; exit 1; }
if grep -q "sync_grid" "$t/ir"; then echo "FAILED: sync_grid left in the IR after split_grid"; cat "$t/ir"; exit 1; fi
# Cooperative kernels (one launch, grid barriers; split_grid decides):
# state crossing the barrier, a value read before it and used after, the
# barrier in a loop; each against a naive kernel, several grids.
check $f --entry mirror --target c --check-against mirror_naive
check $f --entry mirror --target c -D nblocks=7 -D per=5 --check-against mirror_naive
check $f --entry shift --target c --check-against shift_naive
check $f --entry shift --target c -D nblocks=9 -D rounds=4 --check-against shift_naive
for e in mirror shift; do
  "$tool" compile $f --entry $e --target c --emit ir --dump-after split_grid >"$t/ir" 2>&1 || { cat "$t/ir"; echo "FAILED: $e: --dump-after split_grid"; exit 1; }
  grep -q "cooperative grid_workspace 64" "$t/ir" || { cat "$t/ir"; echo "FAILED: $e: not cooperative"; exit 1; }
  grep -q "eval sync_grid()" "$t/ir" || { cat "$t/ir"; echo "FAILED: $e: the barrier left the body"; exit 1; }
  "$tool" compile $f --entry $e --target cuda --emit cuda >"$t/c.cu" || { echo "FAILED: $e: CUDA source"; exit 1; }
  [ "$(grep -c '__global__ void' "$t/c.cu")" = 1 ] || { echo "FAILED: $e: want one CUDA kernel"; exit 1; }
  grep -q "ts_grid_sync(ts_grid_ws);" "$t/c.cu" || { echo "FAILED: $e: no grid barrier in the CUDA source"; exit 1; }
done
# a grid barrier some blocks skip (a branch on data): on the C target the
# wait times out with a message naming the barrier and the arrivals
cat >"$t/skip.py" <<'PY'
import tilelang.language as T


@T.prim_func
def skip(X: T.Tensor((8,), "float32")):
    with T.Kernel(4, threads=32) as b:
        if b != 2:
            T.sync_grid()
        X[b + 4] = X[b]
PY
out=$(TILESCALE_WAIT_TIMEOUT=1 "$tool" run "$t/skip.py" --entry skip --target c 2>&1)
echo "$out" | grep -q "kernel 'skip': T.sync_grid (line 8): timed out after 1000 ms: 3 of the 4 blocks arrived" ||
  { echo "$out"; echo "FAILED: a skipped grid barrier must time out with a message"; exit 1; }
echo "sync_grid: ok"
