# Runs the kernels of TileScale's DeepEP intranode port (github.com/tile-ai/
# tilescale, examples/distributed/deepseek_deepep/intranode) that compile
# here, unchanged, on the C target, against references written from DeepEP's
# documented semantics (buffer.py's docstrings; example_intranode.py compares
# them with DeepEP's own results).  Not a CI test (the files are not in this
# tree); tests/tools/tilescale_compat.sh calls it.
#   python3 tilescale_deepep_check.py INTRANODE_DIR TOOL
# Now: get_dispatch_layout_kernel (tokens per rank, tokens per expert, which
# ranks each token goes to), topk_idx drawn as gen_inputs does (top-k of
# random scores: distinct experts) with some entries -1 ("no selection"),
# for several world sizes and token counts (a partial last round of its 256
# threads, more than 8 ranks' worth of rank blocks); cached_notify_dispatch_
# kernel on sim ranks (2, 4, 8) clearing its buffers.  The dispatch/combine
# kernels need warp shuffles first (doc/DISTRIBUTED.md, part F).
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

src, tool = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="tilescale_deepep.")
rng = np.random.default_rng(7)
failures = 0
for T, K, E, R in [(100, 2, 8, 2), (300, 4, 16, 4), (257, 8, 64, 8), (64, 4, 32, 16)]:
    scores = rng.random((T, E)) + 1
    topk = np.argsort(-scores, axis=1)[:, :K].astype(np.int64)
    topk[rng.random((T, K)) < 0.1] = -1
    np.save(f"{tmp}/topk.npy", topk)
    # outputs poisoned: counts -7, every token in every rank (the kernel must write each False)
    np.save(f"{tmp}/p_rank.npy", np.full(R, -7, np.int32))
    np.save(f"{tmp}/p_expert.npy", np.full(E, -7, np.int32))
    np.save(f"{tmp}/p_in.npy", np.ones((T, R), bool))
    cmd = [tool, "run", os.path.join(src, "get_dispatch_layout.py"), "--entry", "get_dispatch_layout_kernel",
           "-D", f"num_topk={K}", "-D", f"num_experts={E}", "-D", f"num_ranks={R}", "--shape", f"num_tokens={T}",
           "--in", f"topk_idx={tmp}/topk.npy", "--in", f"num_tokens_per_rank={tmp}/p_rank.npy",
           "--in", f"num_tokens_per_expert={tmp}/p_expert.npy", "--in", f"is_token_in_rank={tmp}/p_in.npy"]
    for o in ("num_tokens_per_rank", "num_tokens_per_expert", "is_token_in_rank"):
        cmd += ["--out", f"{o}={tmp}/{o}.npy"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        print(p.stdout + p.stderr)
        failures += 1
        continue
    per_rank_e = E // R
    in_rank = np.zeros((T, R), bool)
    per_expert = np.zeros(E, np.int64)
    for t in range(T):
        for e in topk[t]:
            if e >= 0:
                per_expert[e] += 1
                in_rank[t, e // per_rank_e] = True
    got = {o: np.load(f"{tmp}/{o}.npy") for o in ("num_tokens_per_rank", "num_tokens_per_expert", "is_token_in_rank")}
    ok = (np.array_equal(got["num_tokens_per_expert"], per_expert) and
          np.array_equal(got["num_tokens_per_rank"], in_rank.sum(0)) and
          np.array_equal(got["is_token_in_rank"].astype(bool), in_rank))
    print(f"  get_dispatch_layout tokens={T} topk={K} experts={E} ranks={R}: {'ok' if ok else 'FAILS'}")
    failures += not ok
# cached_notify_dispatch_kernel on sim ranks: a block barrier, every rank's
# four channel buffers cleared (poisoned first), a second barrier
for R, C in [(2, 3), (4, 2), (8, 4)]:
    names = ("channel_start_offset", "channel_end_offset", "channel_head_idx", "channel_tail_idx")
    cmd = [tool, "run", os.path.join(src, "dispatch.py"), "--entry", "cached_notify_dispatch_kernel", "--ranks", str(R),
           "-D", f"num_ranks={R}", "-D", f"num_channels={C}"]
    for r in range(R):
        for n in names:
            np.save(f"{tmp}/{n}{r}.npy", rng.integers(1, 100, (C, R)).astype(np.int32))
    for n in names:
        cmd += ["--in", f"{n}={tmp}/{n}{{rank}}.npy", "--out", f"{n}={tmp}/{n}{{rank}}.npy"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    ok = p.returncode == 0 and all(not np.load(f"{tmp}/{n}{r}.npy").any() for r in range(R) for n in names)
    if p.returncode:
        print(p.stdout + p.stderr)
    print(f"  cached_notify_dispatch ranks={R} channels={C}: {'ok' if ok else 'FAILS'}")
    failures += not ok
shutil.rmtree(tmp)
print("deepep layout, cached notify: " + ("PASS" if not failures else f"FAIL ({failures})"))
sys.exit(1 if failures else 0)
