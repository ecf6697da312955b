#!/bin/sh
# @tilelang.jit(pass_configs={TL_ENABLE_FAST_MATH: True}) reaches the CUDA
# target: the kernel (every kernel of a chain) is marked fast_math in the IR
# and its float T.exp2 / T.exp print as ts_ex2_ftz / ts_exp_ftz (PTX
# ex2.approx.ftz), float division as ts_fdiv_ftz (rcp.approx.ftz); the
# string key "tl.enable_fast_math" counts the same; a False value, another
# key or no pass_configs keep exp2f / expf and '/'.  No NVRTC needed.
set -u
tool="${TILESCALE:-./build/tilescale}"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
mk() { # mk FILE CONFIG: a two-kernel chain using exp2 and exp, with the given decorator arguments
    cat >"$1" <<PY
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1]$2)
def kern(n):
    @T.prim_func
    def main(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(n):
                Y[i] = T.exp2(X[i])
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(n):
                Y[i] = Y[i] + T.exp(X[i]) / (X[i] * X[i] + 1.0)

    return main
PY
}
mk $d/on.py ', pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True}'
mk $d/str.py ', pass_configs={"tl.enable_fast_math": True, "tl.disable_tma_lower": True}'
mk $d/off.py ', pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: False}'
mk $d/other.py ', pass_configs={tilelang.PassConfigKey.TL_DISABLE_TMA_LOWER: True}'
mk $d/none.py ''
for f in on str; do
    $tool compile $d/$f.py --entry kern -D n=64 --target cuda --emit cuda >$d/$f.cu 2>$d/err || { cat $d/err; fail "$f: compile"; }
    [ "$(grep -c 'ts_ex2_ftz((' $d/$f.cu)" -ge 1 ] || fail "$f: exp2 not printed as ts_ex2_ftz"
    [ "$(grep -c 'ts_exp_ftz((' $d/$f.cu)" -ge 1 ] || fail "$f: exp (second kernel) not printed as ts_exp_ftz"
    [ "$(grep -c 'ts_fdiv_ftz((' $d/$f.cu)" -ge 1 ] || fail "$f: float division not printed as ts_fdiv_ftz"
    grep -qE '(^|[^a-z_])(exp2f|expf)\(\(float\)' $d/$f.cu && fail "$f: exp2f/expf left in a fast-math kernel"
    $tool compile $d/$f.py --entry kern -D n=64 --dump-after simplify >$d/$f.ir || fail "$f: dump"
    [ "$(grep -c '^    fast_math$' $d/$f.ir)" -eq 2 ] || { cat $d/$f.ir; fail "$f: both kernels of the chain marked fast_math"; }
done
for f in off other none; do
    $tool compile $d/$f.py --entry kern -D n=64 --target cuda --emit cuda >$d/$f.cu 2>$d/err || { cat $d/err; fail "$f: compile"; }
    grep -q 'ts_ex2_ftz((\|ts_exp_ftz((\|ts_fdiv_ftz((' $d/$f.cu && fail "$f: fast math used without the pass config"
    grep -qE '(^|[^a-z_])exp2f\(\(float\)' $d/$f.cu || fail "$f: exp2f expected"
    $tool compile $d/$f.py --entry kern -D n=64 --dump-after simplify | grep -q fast_math && fail "$f: marked fast_math"
done
# the C target ignores it and still computes the same values
$tool run $d/on.py --entry kern -D n=64 --target c --check-against kern >/dev/null 2>$d/err || { cat $d/err; fail "C run"; }
echo "ok"
