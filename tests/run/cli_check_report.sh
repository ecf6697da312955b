#!/bin/sh
# Issue 9 F: the --check-against report prints the rule it applies
# (numpy.allclose's |got - ref| <= atol + rtol * |ref|) and, per tensor,
# the tolerances and the worst element (index, got, expected, error,
# allowance), so that no "ok" appears without its reason:
#  - the worst element printed is the one NumPy finds (outputs of both
#    entries saved with --out and compared outside our code);
#  - a tolerance too tight fails with exit status 1, naming the first
#    failing element and how many fail;
#  - where a large relative error passes because |ref| is tiny, the line
#    says so;
#  - a NaN left in a poisoned output fails even where the reference left
#    a NaN at the same place (it was never written);
#  - float16 tensors are checked in ulps by default (issue 9 H): the rule
#    is printed, the max ulp error is the one NumPy counts, a float16-
#    accumulating GEMM that rtol 1e-2 let through fails, --ulp N sets the
#    bound and cannot be combined with --rtol.
set -u
tool="${TILESCALE:-./build/tilescale}"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
fa="examples/flash_attention.py -D batch=1 -D heads=2 -D seq_len=64 -D dim=32 -D is_causal=True"

"$tool" run $fa --entry flashattn --check-against attention_naive --seed 11 --rtol 0 \
  --out Q=$d/q.npy --out K=$d/k.npy --out V=$d/v.npy --out Output=$d/o.npy >$d/out 2>&1 ||
  { cat $d/out; fail "flash attention check"; }
cat $d/out
grep -q '^  rule: |got - ref| <= atol + rtol \* |ref| for every element (numpy.allclose)' $d/out || fail "no rule line"
grep -q '^  Output .* atol 0.01 rtol 0  max abs err [0-9.e-]*  max rel err [0-9.e-]*  ok$' $d/out || fail "Output line"
grep -q '^    largest rel err at \[.*passes because |ref| is small (atol)$' $d/out || fail "no reason for the rel err"
w=$(sed -n 's/^    worst element \[\([0-9, ]*\)\]: got \([^,]*\), expected \([^,]*\), error \([^,]*\), allowed \([^ ]*\) .*/\1|\2|\3|\4|\5/p' $d/out | tail -1)
[ -n "$w" ] || fail "no worst element line for Output"
# the reference's output, on the same inputs, outside the check
"$tool" run $fa --entry attention_naive --in Q=$d/q.npy --in K=$d/k.npy --in V=$d/v.npy --out Output=$d/r.npy >/dev/null ||
  fail "reference run"
if "${TS_PYTHON:-python3}" -c "import numpy" 2>/dev/null; then
  "${TS_PYTHON:-python3}" - "$d" "$w" <<'PY' || fail "worst element differs from NumPy's"
import sys, numpy as np
d, w = sys.argv[1], sys.argv[2].split("|")
got = np.load(d + "/o.npy").astype(np.float64)
ref = np.load(d + "/r.npy").astype(np.float64)
atol, rtol = 0.01, 0.0
share = np.abs(got - ref) / (atol + rtol * np.abs(ref))
idx = np.unravel_index(np.argmax(share), got.shape)
printed = tuple(int(x) for x in w[0].split(","))
err = abs(got[idx] - ref[idx])
print("numpy: worst", idx, got[idx], ref[idx], err, "printed", printed, w[1:])
assert printed == tuple(int(i) for i in idx), (printed, idx)
assert abs(float(w[1]) - got[idx]) <= 1e-6 * max(1, abs(got[idx])) and abs(float(w[2]) - ref[idx]) <= 1e-6 * max(1, abs(ref[idx]))
assert abs(float(w[3]) - err) <= 1e-2 * err + 1e-12
assert np.allclose(got, ref, rtol=rtol, atol=atol)
PY
fi

# too tight: FAIL, exit status 1
"$tool" run $fa --entry flashattn --check-against attention_naive --seed 11 --atol 1e-7 --rtol 0 >$d/out 2>&1
[ $? -eq 1 ] || { cat $d/out; fail "a too tight tolerance did not fail with status 1"; }
grep -q '^  Output .* MISMATCH$' $d/out || fail "no MISMATCH"
grep -q '^    worst element \[.*: FAILS$' $d/out || fail "worst element not marked FAILS"
grep -q '^    [0-9]* of 4096 elements fail; the first at \[0, [0-9]*, [0-9]*, [0-9]*\]: got' $d/out || fail "count and first failure"
grep -q '^FAIL$' $d/out || fail "no FAIL line"

# distributed runs print the same report, per rank, and fail the same way
dg="examples/distributed/allgather.py --entry allgather --ranks 2 -D PE_num=2 -D M=16 -D N=48 --check-against allgather_ref"
"$tool" run $dg --seed 2 >$d/out 2>&1 || { cat $d/out; fail "distributed check"; }
grep -q '^  rule: |got - ref| <= atol + rtol' $d/out || fail "distributed: no rule line"
grep -q '^  B rank 1 .* atol 0.02 rtol 0.02  max abs err 0  max rel err 0  ok$' $d/out || { cat $d/out; fail "distributed: B rank 1"; }
# an all-gather moves data without arithmetic: exact, so zero tolerances pass
"$tool" run $dg --seed 2 --atol 0 --rtol 0 >$d/out 2>&1 || { cat $d/out; fail "distributed exact check"; }

# NaN left in a poisoned output: both entries skip the last element
cat >$d/skip.py <<'PY'
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def skip(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1) as bx:
            for i in T.serial(n - 1):
                B[i] = A[i] * 2.0

    return main


@tilelang.jit(out_idx=[1])
def skip_ref(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1) as bx:
            for i in T.serial(n - 1):
                B[i] = A[i] + A[i]

    return main
PY
"$tool" run $d/skip.py --entry skip -D n=16 --check-against skip_ref --seed 3 >$d/out 2>&1
[ $? -eq 1 ] || { cat $d/out; fail "a NaN left in a poisoned output passed"; }
grep -q 'worst element \[15\]: got nan, expected nan.*NaN left in a poisoned output' $d/out || { cat $d/out; fail "NaN message"; }

# float16 by default: at most 4 ulps apart, or within atol 1e-3
"$tool" run $fa --entry flashattn --check-against attention_naive --seed 11 >$d/out 2>&1 || { cat $d/out; fail "default float16 check"; }
grep -q '^  rule for float16 (default; with --rtol, the rule above): at most 4 ulps apart' $d/out || { cat $d/out; fail "no ulp rule line"; }
grep -q '^  Output .* ulp 4 or atol [0-9.e-]*  max abs err [0-9.e-]*  max ulp err [0-9]*  max rel err [0-9.e-]*  ok$' $d/out ||
  { cat $d/out; fail "Output line under the ulp rule"; }
grep -q '^    worst element \[.*, error [0-9.e-]* = [0-4] ulp, allowed 4 ulp or atol [0-9.e-]* (rms |ref| [0-9.e-]*)$' $d/out ||
  { cat $d/out; fail "worst element in ulps"; }
u=$(sed -n 's/^  Output .* max ulp err \([0-9]*\) .*/\1/p' $d/out)
a=$(sed -n 's/^  Output .* ulp 4 or atol \([0-9.e-]*\) .*/\1/p' $d/out)
if "${TS_PYTHON:-python3}" -c "import numpy" 2>/dev/null; then
  "${TS_PYTHON:-python3}" - "$d" "$u" "$a" <<'PY' || fail "max ulp err or the floor differs from NumPy's"
import math, sys, numpy as np
d, printed, atol = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
def ordered(a):  # float16 bits as sign-magnitude integers: neighbours differ by 1
    b = a.astype(np.float16).view(np.int16).astype(np.int64)
    return np.where(b < 0, -(b & 0x7FFF), b)
got, ref = np.load(d + "/o.npy"), np.load(d + "/r.npy")
u = np.abs(ordered(got) - ordered(ref))
print("numpy: max ulp err", u.max(), "printed", printed)
assert u.max() == printed
# the floor: max(1e-3, 4 float16 ulps at the root mean square of ref)
r64 = ref.astype(np.float64)
rms = math.sqrt(np.mean(r64 * r64))
floor = max(1e-3, 4 * 2.0 ** (max(math.floor(math.log2(rms)), -14) - 10))
print("numpy: floor", floor, "printed", atol)
assert abs(floor - atol) <= 1e-3 * floor
# every element within 4 ulps or the floor: the rule the line says it applied
assert np.all((u <= 4) | (np.abs(got.astype(np.float64) - r64) <= floor))
PY
fi
# a GEMM accumulating in float16 fails the default rule; rtol = atol = 1e-2 (the old default) passed it
cat >$d/acc.py <<'PY'
import tilelang
import tilelang.language as T


def make(M, N, K, acc):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(M, threads=1) as i:
            s = T.alloc_var(acc)
            for j in T.serial(N):
                s = 0.0
                for k in T.serial(K):
                    s += T.cast(A[i, k], acc) * T.cast(B[k, j], acc)
                C[i, j] = s

    return main


@tilelang.jit(out_idx=[-1])
def mm16(M, N, K):
    return make(M, N, K, "float16")


@tilelang.jit(out_idx=[-1])
def mm32(M, N, K):
    return make(M, N, K, "float32")
PY
acc="$d/acc.py --entry mm16 --check-against mm32 -D M=32 -D N=32 -D K=64 --seed 1"
"$tool" run $acc >$d/out 2>&1
[ $? -eq 1 ] || { cat $d/out; fail "a float16-accumulating gemm passed the default float16 rule"; }
grep -q '^    worst element \[.*= [0-9]* ulp, allowed 4 ulp or atol [0-9.e-]* (rms |ref| [0-9.e-]*): FAILS$' $d/out || { cat $d/out; fail "float16 accumulation: worst element"; }
"$tool" run $acc --rtol 1e-2 --atol 1e-2 >$d/out 2>&1 || { cat $d/out; fail "the old default rtol should let this one through (else the case shows nothing)"; }
"$tool" run $acc --ulp 100000 --atol 0 >$d/out 2>&1 || { cat $d/out; fail "--ulp 100000 should pass"; }
grep -q '^  rule (--ulp 100000): at most 100000 ulps of the dtype apart' $d/out || { cat $d/out; fail "--ulp rule line"; }
"$tool" run $acc --ulp 4 --rtol 1e-2 >$d/out 2>&1
[ $? -eq 2 ] && grep -q 'error: --ulp and --rtol cannot be combined' $d/out || { cat $d/out; fail "--ulp with --rtol"; }
"$tool" run $acc --ulp -1 >$d/out 2>&1
[ $? -eq 2 ] && grep -q 'error: --ulp expects an integer from 0' $d/out || { cat $d/out; fail "--ulp -1"; }
echo ok
