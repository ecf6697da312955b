#!/bin/sh
# T.gemm_sp (doc/LANGUAGE.md "2:4 sparse GEMM"): TileLang's sparse GEMM kernel
# (pipelined) on the C target against a naive kernel that decodes the
# metadata by hand, on random inputs (random metadata too: both decode any
# word the same way); int16, int8 and int32 metadata, B transposed, partial
# grids.  The CUDA passes run it in tests/unit/test_interp_examples.c, a
# TileLang-style script with NumPy-compressed A in tests/python.
. tests/run/lib.sh
f=tests/run/kernels/gemm_sp.py
tol="--rtol 1e-3 --atol 1e-3"
check $f --entry gemm_sp --target c -D M=128 -D N=64 -D K=128 --check-against gemm_sp_naive $tol
check $f --entry gemm_sp --target c -D M=64 -D N=64 -D K=128 -D e_dtype=int8 --check-against gemm_sp_naive $tol
check $f --entry gemm_sp --target c -D M=64 -D N=96 -D K=256 -D e_dtype=int32 -D trans_b=True --check-against gemm_sp_naive $tol
check $f --entry gemm_sp --target c -D M=96 -D N=80 -D K=192 -D block_M=64 -D block_N=32 --check-against gemm_sp_naive $tol
# the compressor's pattern (T.copy / T.clear of per-thread registers, a tuple swap) on the C
# target; tests/unit/test_interp_examples.c runs both on the CUDA passes too
check tests/run/kernels/local_copy.py --entry swap_pairs --target c --check-against swap_pairs_naive
check tests/run/kernels/local_copy.py --entry local_reverse --target c --check-against local_reverse_naive
# refusals name the construct
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cat >"$d/bad.py" <<'PY'
import tilelang.language as T


def bad(how="transpose"):
    @T.prim_func
    def main(A: T.Tensor((64, 32), "float32"), E: T.Tensor((64, 4), "int16"), B: T.Tensor((64, 64), "float16"),
             C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            As = T.alloc_shared((64, 32), "float16")
            Af = T.alloc_shared((64, 32), "float32")
            Es = T.alloc_shared((64, 4), "int16")
            Eb = T.alloc_shared((64, 3), "int16")
            Bs = T.alloc_shared((64, 64), "float16")
            Cl = T.alloc_fragment((64, 64), "float32")
            if how == "transpose":
                T.gemm_sp(As, Es, Bs, Cl, transpose_A=True)
            elif how == "fp32":
                T.gemm_sp(Af, Es, Bs, Cl)
            else:
                T.gemm_sp(As, Eb, Bs, Cl)
            T.copy(Cl, C)

    return main
PY
for spec in "transpose:transpose_A / transpose_E are not supported" "fp32:A_sparse of float32: only 16-bit and 8-bit operands" \
            "shape:E is \[64, 3\] but A_sparse \[64, 32\] needs \[64, 4\] of int16"; do
  how=${spec%%:*}; want=${spec#*:}
  if "$tool" compile "$d/bad.py" --entry bad -D how=$how --target c >/dev/null 2>"$d/err"; then
    echo "FAILED: how=$how compiled"; exit 1
  fi
  grep -q "bad.py:[0-9]*:[0-9]*: error: T.gemm_sp(): $want" "$d/err" || { cat "$d/err"; echo "FAILED: how=$how"; exit 1; }
done
echo "gemm_sp: ok"
