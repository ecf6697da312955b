#!/bin/sh
# Views of another dtype (T.view(buf, shape=, dtype=)) on the C target
# against naive kernels that glue the bits by hand, on random inputs with
# NaN patterns of bfloat16 and float32 forced in (the uint16 outputs are
# compared exactly: a NaN's payload must survive); then the errors: a store
# through a narrower view, a view whose bits do not add up.  The CUDA
# passes run the same kernels in tests/unit/test_interp_examples.c and
# tests/unit/test_view_bits.c (exact bits in both interpreters); NVRTC
# compiles them in tests/unit/test_cuda_nvrtc.c.
. tests/run/lib.sh
f=tests/run/kernels/view_dtype.py
check $f --entry bits_copy --target c --check-against bits_copy_naive
check $f --entry bits_copy --target c -D M=96 -D N=32 --check-against bits_copy_naive
check $f --entry narrow_read --target c --check-against narrow_read_naive
check $f --entry narrow_read --target c -D M=5 -D N=7 --check-against narrow_read_naive
check $f --entry scratch_reuse --target c --check-against scratch_reuse_naive
check $f --entry scratch_reuse --target c -D M=96 -D N=32 --check-against scratch_reuse_naive
for e in bits_copy narrow_read scratch_reuse; do
  "$tool" compile $f --entry $e --target cuda --emit cuda >/dev/null || { echo "FAILED: CUDA source of $e"; exit 1; }
done
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
cat >"$t/bad.py" <<'PY'
import tilelang.language as T


@T.prim_func
def narrow_store(A: T.Tensor((8, 8), "float32")):
    with T.Kernel(1, threads=32) as bx:
        s = T.alloc_shared((8, 8), "float32")
        h = T.view(s, shape=[8, 16], dtype="bfloat16")
        for i, j in T.Parallel(8, 16):
            h[i, j] = 1.0
        T.copy(s, A)


@T.prim_func
def bad_bits(A: T.Tensor((8, 8), "float32")):
    with T.Kernel(1, threads=32) as bx:
        s = T.alloc_shared((8, 8), "bfloat16")
        w = T.view(s, shape=[8, 8], dtype="float32")
        T.copy(w, A)
PY
expect_err() {
  out=$("$tool" compile "$t/bad.py" --entry "$1" --target c --emit c 2>&1)
  echo "$out" | grep -q "$2" || { echo "FAILED: $1: want '$2', got:"; echo "$out"; exit 1; }
}
expect_err narrow_store "bad.py:10:13: error: a store through the bfloat16 view"
expect_err bad_bits "a view of 64 float32 elements over 's', which has 64 bfloat16 elements"
echo "view_dtype: ok"
