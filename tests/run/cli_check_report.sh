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
#    a NaN at the same place (it was never written).
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
if python3 -c "import numpy" 2>/dev/null; then
  python3 - "$d" "$w" <<'PY' || fail "worst element differs from NumPy's"
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
echo ok
