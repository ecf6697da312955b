"""np_ref.py -- an example kernel against a reference computed in NumPy (issue 9 H).

The run tests also check each example against its *_naive entry, but that
entry goes through this compiler too: a bug in a shared piece (the reduce
lowering, exp2 in the code generator, the cast after a float32 sum) can make
both sides wrong in the same way and the comparison pass.  Here the reference
is float64 NumPy, outside our code entirely; the kernel is run by the CLI on
inputs this script writes (--in) and its outputs read back (--out).

    python3 tests/run/np_ref.py TOOL KIND FILE ENTRY NAME=VALUE... [-- EXTRA CLI ARGS]

KIND picks the reference: add, gemm, splitk, softmax, rms_norm, flash.
Outputs are given as NaN files, so an element the kernel never writes stays
NaN and fails (NaN never passes here).

The inputs are chosen to defeat what uniform data in [-1, 1] hides.  Softmax
and attention subtract the row maximum before exp and the result does not
depend on which value is subtracted, so a wrong maximum (a reduction that
skips the last tile or column, a running max starting at 0 instead of -inf,
a rescale factor left out) passes on small inputs.  So some rows sit at
+1000 (exp overflows unless the true maximum is subtracted), some at -1000
(every exp underflows to 0, giving 0/0, unless it is), some have their
maximum in the last column; attention heads have scores near +360 growing
towards the last key tile (the running maximum must move and rescale) or
near -360.  RMSNorm rows at 1e3 and 1e-3 scale and constant rows.

Tolerances are error bounds, not guesses: a float32 sum of K products is
within K * 2^-24 * sum|a*b| of the exact sum in any order, then rounded once
to float16/bfloat16 (one ulp covers that rounding next to the bound); the
float32 elementwise results are within a few float32 rounding errors; the
attention output also rounds P to float16 before P.V, which is an error of at
most 2^-11 * sum_j P_ij |V_j| / l_i, allowed explicitly.
"""
import math
import os
import subprocess
import sys
import tempfile

import numpy as np


def parse(argv):
    tool, kind, path, entry = argv[1:5]
    rest = argv[5:]
    extra = []
    if "--" in rest:
        i = rest.index("--")
        rest, extra = rest[:i], rest[i + 1:]
    defs = {}
    for a in rest:
        k, v = a.split("=", 1)
        defs[k] = v
    return tool, kind, path, entry, defs, extra


def rng_for(defs):
    seed = int(os.environ.get("TS_TEST_SEED", "0") or 0) or int.from_bytes(os.urandom(4), "little")
    print(f"np_ref: inputs from seed {seed} (TS_TEST_SEED)")
    return np.random.default_rng(seed)


def ulp(x, dt):
    """The spacing of dtype dt's values at |x| (subnormal spacing below the normals)."""
    mant, emin = {np.float16: (10, -14), "bfloat16": (7, -126), np.float32: (23, -126)}[dt]
    x = np.abs(np.asarray(x, dtype=np.float64))
    e = np.floor(np.log2(np.where(x > 0, x, 1.0)))
    e = np.maximum(np.where(x > 0, e, emin), emin)
    return np.exp2(e - mant)


def to_bf16(x):
    """Round float32 values to bfloat16 (nearest even), kept as float32."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.astype(np.uint32).view(np.float32)


def compare(name, got, ref, allow):
    """Every element finite-equal-or-within allow; NaN in got always fails."""
    got = got.astype(np.float64)
    err = np.abs(got - ref)
    bad = ~(err <= allow)  # NaN -> bad
    share = np.where(allow > 0, err / np.where(allow > 0, allow, 1), np.where(err == 0, 0, np.inf))
    share = np.where(np.isnan(got), np.inf, share)
    w = np.unravel_index(int(np.argmax(share)), got.shape)
    print(f"  {name:8s} {str(got.shape):18s} max abs err {np.nanmax(err) if err.size else 0:.3g}  "
          f"worst {tuple(int(i) for i in w)}: got {got[w]:.9g}, ref {ref[w]:.9g}, allowed {allow[w]:.3g}"
          f"  {'FAIL' if bad.any() else 'ok'}")
    if bad.any():
        first = np.argwhere(bad)[0]
        print(f"    {int(bad.sum())} of {bad.size} elements fail; the first at {tuple(int(i) for i in first)}: "
              f"got {got[tuple(first)]:.9g}, ref {ref[tuple(first)]:.9g}, allowed {allow[tuple(first)]:.3g}")
    return not bad.any()


def save(d, name, arr, dtype):
    """Write arr as a .npy of dtype.  bfloat16 (no NumPy dtype): its bits as
    'V2', which the CLI reads as bfloat16 (ml_dtypes' way of saving it)."""
    path = os.path.join(d, name + ".npy")
    if dtype == "bfloat16":
        bits = (to_bf16(arr).view(np.uint32) >> 16).astype(np.uint16)
        np.save(path, bits.view(np.dtype("V2")))
    else:
        np.save(path, arr.astype(dtype))
    return path


def load_bf16(a):
    """A bfloat16 output as the CLI writes it (raw bits, '<u2'), as float32."""
    return (a.astype(np.uint32) << 16).view(np.float32)


def run(tool, path, entry, defs, extra, d, ins, outs):
    cmd = [tool, "run", path, "--entry", entry, "--seed", "1"]
    for k, v in defs.items():
        cmd += ["-D", f"{k}={v}"]
    for name, p in ins.items():
        cmd += ["--in", f"{name}={p}"]
    for name in outs:
        cmd += ["--out", f"{name}={os.path.join(d, name + '.out.npy')}"]
    cmd += extra
    print("np_ref: " + " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout + r.stderr)
        raise SystemExit(f"np_ref: the kernel run failed (exit status {r.returncode})")
    return {name: np.load(os.path.join(d, name + ".out.npy")) for name in outs}


def gemm_allow(a, b, ref, dt):
    """float32 accumulation bound plus one ulp of the output dtype."""
    k = a.shape[1]
    absprod = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    return k * 2.0 ** -24 * absprod + ulp(ref, dt)


def case_add(rng, defs, run_k, d):
    M, N = int(defs["M"]), int(defs["N"])
    dt = np.float16 if defs.get("in_dtype") == "float16" else np.float32
    odt = np.float16 if defs.get("out_dtype") == "float16" else np.float32
    a = rng.uniform(-1, 1, (M, N)).astype(dt)
    b = rng.uniform(-1, 1, (M, N)).astype(dt)
    a[0, :] *= 1e4 if dt == np.float32 else 1e2  # different binades: the sum rounds
    out = run_k({"A": save(d, "A", a, dt), "B": save(d, "B", b, dt), "C": save(d, "C", np.full((M, N), np.nan), odt)},
                ["C"])
    # one correctly rounded addition, as NumPy's in the output dtype
    ref = (a.astype(np.float64) + b.astype(np.float64)).astype(odt).astype(np.float64)
    return compare("C", out["C"], ref, np.zeros_like(ref))


def gemm_inputs(rng, M, N, K, dt):
    a = rng.uniform(-1, 1, (M, K))
    b = rng.uniform(-1, 1, (K, N))
    a[M // 2, :] += 4.0  # a row of larger values: partial sums in a higher binade
    if dt == "bfloat16":
        return to_bf16(a), to_bf16(b)
    return a.astype(dt).astype(np.float32), b.astype(dt).astype(np.float32)


def case_gemm(rng, defs, run_k, d):
    M, N, K = int(defs["M"]), int(defs["N"]), int(defs["K"])
    dt = "bfloat16" if defs.get("dtype") == "bfloat16" else np.float16
    a, b = gemm_inputs(rng, M, N, K, dt)
    out = run_k({"A": save(d, "A", a, dt), "B": save(d, "B", b, dt), "C": save(d, "C", np.full((M, N), np.nan), dt)},
                ["C"])
    got = load_bf16(out["C"]) if dt == "bfloat16" else out["C"]
    exact = a.astype(np.float64) @ b.astype(np.float64)
    return compare("C", got, exact, gemm_allow(a, b, exact, dt))


def case_splitk(rng, defs, run_k, d):
    M, N, K, S = int(defs["M"]), int(defs["N"]), int(defs["K"]), int(defs["splits"])
    dt = np.float16
    a, b = gemm_inputs(rng, M, N, K, dt)
    kps = -(-K // S)
    out = run_k({"A": save(d, "A", a, dt), "B": save(d, "B", b, dt),
                 "Partial": save(d, "Partial", np.full((S, M, N), np.nan), np.float32),
                 "C": save(d, "C", np.full((M, N), np.nan), dt)}, ["Partial", "C"])
    ok = True
    part = np.zeros((S, M, N))
    pallow = np.zeros((S, M, N))
    for s in range(S):
        lo, hi = s * kps, min(K, (s + 1) * kps)
        part[s] = a[:, lo:hi].astype(np.float64) @ b[lo:hi, :].astype(np.float64)
        pallow[s] = gemm_allow(a[:, lo:hi], b[lo:hi, :], part[s], np.float32)
    ok &= compare("Partial", out["Partial"], part, pallow)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    ok &= compare("C", out["C"], exact, gemm_allow(a, b, exact, dt) + S * 2.0 ** -24 * np.abs(part).sum(0))
    return ok


def softmax_inputs(rng, M, N):
    x = rng.uniform(-1, 1, (M, N))
    for i in range(M):
        p = i % 5
        if p == 1:
            x[i] += 1000.0  # exp overflows unless the true maximum is subtracted
        elif p == 2:
            x[i] -= 1000.0  # every exp underflows (0/0) unless it is
        elif p == 3:
            x[i, -1] = 6.0  # the maximum in the last column
        elif p == 4:
            x[i] = x[i] * 30 - 500.0  # wide and negative: most terms underflow
    return x.astype(np.float32)


def case_softmax(rng, defs, run_k, d):
    M, N = int(defs["M"]), int(defs["N"])
    x = softmax_inputs(rng, M, N)
    out = run_k({"X": save(d, "X", x, np.float32), "Y": save(d, "Y", np.full((M, N), np.nan), np.float32)}, ["Y"])
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    # float32: x - max exact, its product with log2(e) and exp2 a few rounding
    # errors relative to |x - max| (up to ~60 here), the sum and the division more
    span = np.abs(x64 - x64.max(axis=1, keepdims=True))
    allow = ref * (8 + 2 * span + N) * 2.0 ** -24 + 1e-30
    return compare("Y", out["Y"], ref, allow)


def case_rms_norm(rng, defs, run_k, d):
    M, N = int(defs["M"]), int(defs["N"])
    a = rng.uniform(-1, 1, (M, N))
    for i in range(M):
        p = i % 4
        if p == 1:
            a[i] *= 1e3
        elif p == 2:
            a[i] *= 1e-3
        elif p == 3:
            a[i] = 0.75  # constant row
    a = a.astype(np.float32)
    out = run_k({"A": save(d, "A", a, np.float32), "B": save(d, "B", np.full((M, N), np.nan), np.float32)}, ["B"])
    a64 = a.astype(np.float64)
    ref = a64 / np.sqrt((a64 * a64).mean(axis=1, keepdims=True) + 1e-12)
    allow = np.abs(ref) * (N + 16) * 2.0 ** -24 + 1e-30
    return compare("B", out["B"], ref, allow)


def flash_inputs(rng, B, S, H, D):
    q = rng.uniform(-1, 1, (B, S, H, D))
    k = rng.uniform(-1, 1, (B, S, H, D))
    v = rng.uniform(-1, 1, (B, S, H, D))
    for b in range(B):
        for h in range(H):
            p = (b * H + h) % 3
            ramp = (2.0 * np.arange(S) / S)[:, None]  # later keys score higher
            if p == 1:  # scores near +360 growing to the last key tile: overflow and a moving maximum
                q[b, :, h] += 8.0
                k[b, :, h] += 8.0 + ramp
            elif p == 2:  # scores near -360: every exp underflows unless the maximum is subtracted
                q[b, :, h] -= 8.0
                k[b, :, h] += 8.0 - ramp
    f = lambda t: t.astype(np.float16)
    return f(q), f(k), f(v)


def case_flash(rng, defs, run_k, d):
    B, S, H, D = (int(defs[n]) for n in ("batch", "seq_len", "heads", "dim"))
    causal = defs.get("is_causal", "False") == "True"
    q, k, v = flash_inputs(rng, B, S, H, D)
    out = run_k({"Q": save(d, "Q", q, np.float16), "K": save(d, "K", k, np.float16), "V": save(d, "V", v, np.float16),
                 "Output": save(d, "Output", np.full(q.shape, np.nan), np.float16)}, ["Output"])
    q64, k64, v64 = (t.astype(np.float64) for t in (q, k, v))
    s = np.einsum("bihd,bjhd->bhij", q64, k64) / math.sqrt(D)
    if causal:
        s = np.where(np.tril(np.ones((S, S), dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    l = p.sum(axis=-1, keepdims=True)
    ref = np.einsum("bhij,bjhd->bihd", p / l, v64)
    # P is rounded to float16 before P.V (relative 2^-11 each: numerator only,
    # l sums the float32 P); the scores carry
    # float32 sums of D products of values up to ~9 (their error times |V|); one
    # float16 ulp for the output's rounding
    pv = np.einsum("bhij,bjhd->bihd", p / l, np.abs(v64))
    sabs = np.einsum("bihd,bjhd->bhij", np.abs(q64), np.abs(k64)) / math.sqrt(D)
    serr = np.einsum("bhij,bjhd->bihd", p / l * (D + 8) * 2.0 ** -24 * sabs, np.abs(v64))
    # the float32 sums over S keys of P.V and of l: (S + 8) rounding errors each
    allow = 2.0 ** -11 * pv + 2 * serr + 2 * (S + 8) * 2.0 ** -24 * pv + 2.0 ** -20 * pv + ulp(ref, np.float16)
    return compare("Output", out["Output"], ref, allow)


CASES = {"add": case_add, "gemm": case_gemm, "splitk": case_splitk, "softmax": case_softmax,
         "rms_norm": case_rms_norm, "flash": case_flash}


def main(argv):
    tool, kind, path, entry, defs, extra = parse(argv)
    rng = rng_for(defs)
    with tempfile.TemporaryDirectory() as d:
        run_k = lambda ins, outs: run(tool, path, entry, defs, extra, d, ins, outs)
        ok = CASES[kind](rng, defs, run_k, d)
    print("np_ref: PASS" if ok else "np_ref: FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
