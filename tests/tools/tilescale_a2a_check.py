# Checks TileScale's example_all_to_all.py (run unchanged on sim ranks) for
# what its result determines.  Not a CI test (the example is not in this
# tree); tests/tools/tilescale_compat.sh calls it.
#
# The example's host code (lines 111-124) draws every rank's expert choices
# with an unseeded random.sample, so each rank has its own splits, and the
# kernel's block `peer` of every source rank puts that source's rows for
# peer's experts at row 0 of data_dst on peer (line 38-39: the destination
# is always data_dst[0, 0]).  So on rank d, row t is written by every source
# s with n_s(d) > t (n_s(d): the rows s holds for d's experts), in whatever
# order the puts land: a row that one source covers is that source's row; a
# row no source covers keeps what data_dst held (the host never fills it); a
# row several sources cover is, element by element, one of theirs (puts
# are not atomic per row).  signal[s] on every rank ends 99 (set by s).  This
# script draws splits the host's way (distinct experts per token, bincount,
# cumsum), random data, runs the kernel and checks exactly that.
#   python3 tilescale_a2a_check.py EXAMPLE TOOL P TOKEN_NUM TOPK HIDDEN EXPERT_NUM SEED
import os
import subprocess
import sys
import tempfile

import numpy as np

ex, tool = sys.argv[1], sys.argv[2]
P, T, K, H, G, seed = (int(a) for a in sys.argv[3:9])
E = G // P
rng = np.random.default_rng(seed)
d = tempfile.mkdtemp(prefix="tilescale_a2a.")
src, cum, init = [], [], []
for r in range(P):
    idx = np.stack([rng.choice(G, K, replace=False) for _ in range(T)])
    c = np.zeros(G + 1, np.int32)
    c[1:] = np.cumsum(np.bincount(idx.reshape(-1), minlength=G))
    cum.append(c)
    src.append(rng.standard_normal((T * K, H)).astype(np.float16))
    init.append(rng.standard_normal((T * K, H)).astype(np.float16))
    np.save(f"{d}/src{r}.npy", src[r])
    np.save(f"{d}/cum{r}.npy", c)
    np.save(f"{d}/dst{r}.npy", init[r])
cmd = [tool, "run", ex, "--entry", "all_to_all", "--ranks", str(P), "-D", f"PE_num={P}",
       "-D", f"TOKEN_NUM={T}", "-D", f"TOPK={K}", "-D", f"HIDDEN={H}", "-D", f"EXPERT_NUM={G}",
       "--in", f"data_src={d}/src{{rank}}.npy", "--in", f"splits_cumsum={d}/cum{{rank}}.npy",
       "--in", f"data_dst={d}/dst{{rank}}.npy", "--out", f"data_dst={d}/out{{rank}}.npy",
       "--out", f"signal={d}/sig{{rank}}.npy"]
p = subprocess.run(cmd, capture_output=True, text=True)
if p.returncode != 0:
    print(p.stdout + p.stderr)
    print("FAIL (the run failed)")
    sys.exit(1)
bad = 0
counts = {"one source": 0, "no source": 0, "several sources": 0}
for r in range(P):
    out = np.load(f"{d}/out{r}.npy")
    sig = np.load(f"{d}/sig{r}.npy")
    if not (sig == 99).all():
        print(f"rank {r}: signal {sig.tolist()}, expected 99 everywhere")
        bad += 1
    for t in range(T * K):
        cands = [src[s][cum[s][r * E] + t] for s in range(P) if cum[s][(r + 1) * E] - cum[s][r * E] > t]
        if not cands:
            counts["no source"] += 1
            ok = np.array_equal(out[t], init[r][t])
        elif len(cands) == 1:
            counts["one source"] += 1
            ok = np.array_equal(out[t], cands[0])
        else:
            counts["several sources"] += 1
            ok = np.logical_or.reduce([out[t] == c for c in cands]).all()
        if not ok:
            if bad < 5:
                print(f"rank {r} row {t}: not what {len(cands)} source(s) could give")
            bad += 1
for r in range(P):
    for f in ("src", "cum", "dst", "out", "sig"):
        os.remove(f"{d}/{f}{r}.npy")
os.rmdir(d)
print(f"all_to_all P={P}: rows checked by kind: {counts}")
print("PASS" if bad == 0 else f"FAIL ({bad})")
sys.exit(1 if bad else 0)
