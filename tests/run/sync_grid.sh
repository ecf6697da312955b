#!/bin/sh
# T.sync_grid() (tests/run/kernels/sync_grid.py): a grid barrier at the top
# level of the body becomes the boundary of two launches (pass split_grid):
# the C target against a naive kernel, on several shapes; the CUDA source
# holds two kernels, the second with the shared tile declared before the
# barrier but used after it; --dump-after split_grid shows the cut; then the
# refusals: a barrier in a loop, block-local state used on both sides, a
# value read before and used after.  bench/cov7_gpu_check.sh runs it on a GPU.
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
cat >"$t/bad.py" <<'PY'
import tilelang.language as T


@T.prim_func
def in_loop(X: T.Tensor((64,), "float32")):
    with T.Kernel(4, threads=32) as b:
        for k in T.serial(2):
            X[b] = X[b] + 1.0
            T.sync_grid()


@T.prim_func
def crossing(X: T.Tensor((64,), "float32")):
    with T.Kernel(4, threads=32) as b:
        s = T.alloc_shared([16], "float32")
        T.copy(X[b * 16 : b * 16 + 16], s)
        T.sync_grid()
        T.copy(s, X[(3 - b) * 16 : (3 - b) * 16 + 16])


@T.prim_func
def read_before(X: T.Tensor((64,), "float32")):
    with T.Kernel(4, threads=32) as b:
        v = X[b]
        T.sync_grid()
        X[b + 1] = v
PY
expect_err() {
  out=$("$tool" compile "$t/bad.py" --entry "$1" --target c --emit c 2>&1)
  echo "$out" | grep -q "$2" || { echo "FAILED: $1: want '$2', got:"; echo "$out"; exit 1; }
}
expect_err in_loop "bad.py:9:15: error: T.sync_grid() inside a loop or a branch"
expect_err crossing "bad.py:17:11: error: T.sync_grid(): 's' (shared, declared at line 15) is used on both sides"
expect_err read_before "bad.py:25:11: error: T.sync_grid(): 'v' (line 24) reads memory before the grid barrier"
echo "sync_grid: ok"
