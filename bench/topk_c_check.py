#!/usr/bin/env python3
"""topk_c_check.py — TileLang's deepseek_v32 topk_selector (T.atomic_add(...,
return_prev=True), pass_configs' TL_DISABLE_THREAD_STORAGE_SYNC, 1024 threads
with named barriers) on the C target through the Python package and NumPy:
random rows, one with a start/end window, the values selected against
NumPy's sort (the order of the indices is the kernel's own; ties aside, the
selected values must be the row's largest).  Needs .tl-examples
(bash bench/tilelang_examples.sh fetch) and NumPy; exits 77 without them.

    PYTHONPATH=python python3 bench/topk_c_check.py [batch seq_len topk]   # default 3 8192 256
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, ".tl-examples", "deepseek_v32", "topk_selector.py")


def main():
    try:
        import numpy as np
    except ImportError:
        print("skipped: NumPy missing")
        return 77
    if not os.path.exists(SRC):
        print("skipped: .tl-examples missing (bash bench/tilelang_examples.sh fetch)")
        return 77
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import tilescale
    batch, seq_len, topk = (int(a) for a in sys.argv[1:4]) if len(sys.argv) >= 4 else (3, 8192, 256)
    k = tilescale.compile(SRC, "tl_topk_impl", target=os.environ.get("TOPK_TARGET", "c"), topk=topk)
    rng = np.random.default_rng(int(os.environ.get("TS_TEST_SEED", "1")))
    x = rng.standard_normal((batch, seq_len)).astype(np.float32)
    idx = np.full((batch, topk), -7, dtype=np.int32)  # poisoned
    starts = np.zeros(batch, np.int32)
    ends = np.full(batch, seq_len, np.int32)
    starts[-1], ends[-1] = 3, seq_len // 2
    k(x, idx, starts, ends)
    bad = 0
    for b in range(batch):
        lo, hi = starts[b], ends[b]
        want = np.sort(x[b, lo:hi])[::-1][:topk]
        got = idx[b]
        if len(set(got.tolist())) != topk or got.min() < lo or got.max() >= hi:
            print(f"row {b}: indices not {topk} distinct ones in [{lo}, {hi})")
            bad += 1
            continue
        if not np.array_equal(np.sort(x[b, got])[::-1], want):
            print(f"row {b}: the selected values are not the {topk} largest")
            bad += 1
    print(f"topk_selector {batch}x{seq_len} topk={topk}: " + ("PASS" if not bad else f"FAIL ({bad} rows)"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
