"""rng_ref.py -- T.rng_init/T.rng_rand/T.rng_rand_float against Philox4x32-10
written here in Python, independent of the compiler (its IR-level generator,
src/elab/builtins.c).

    python3 tests/run/rng_ref.py TOOL

Philox4x32-10 (Salmon et al., SC'11) with cuRAND's curand_init(seed,
subsequence, offset) seeding: key = seed's two words, counter words 2-3 =
subsequence, words 0-1 = offset // 4, first draw at offset % 4.  The
known-answer vector of counter 0 / key 0 (Random123's kat_vectors) pins the
block function itself.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

M32 = 0xFFFFFFFF


def block(ctr, key):
    x = list(ctr)
    k0, k1 = key
    for _ in range(10):
        p0 = 0xD2511F53 * x[0]
        p1 = 0xCD9E8D57 * x[2]
        x = [((p1 >> 32) ^ x[1] ^ k0) & M32, p1 & M32, ((p0 >> 32) ^ x[3] ^ k1) & M32, p0 & M32]
        k0 = (k0 + 0x9E3779B9) & M32
        k1 = (k1 + 0xBB67AE85) & M32
    return x


class Philox:
    def __init__(self, seed, seq, off):
        self.key = (seed & M32, (seed >> 32) & M32)
        c = ((seq & 0xFFFFFFFFFFFFFFFF) << 64) | (off // 4)
        self.ctr = c
        self.pos = off % 4
        self.out = block(self.words(), self.key)

    def words(self):
        return [(self.ctr >> (32 * i)) & M32 for i in range(4)]

    def rand(self):
        r = self.out[self.pos]
        self.pos += 1
        if self.pos == 4:
            self.ctr = (self.ctr + 1) & ((1 << 128) - 1)
            self.out = block(self.words(), self.key)
            self.pos = 0
        return r


def run(tool, entry, defs, outs):
    with tempfile.TemporaryDirectory() as d:
        cmd = [tool, "run", "tests/run/kernels/rng.py", "--entry", entry, "--target", "c"]
        for k, v in defs.items():
            cmd += ["-D", "%s=%s" % (k, v)]
        for o in outs:
            cmd += ["--out", "%s=%s" % (o, os.path.join(d, o + ".npy"))]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            sys.exit("rng_ref: FAIL: %s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
        return [np.load(os.path.join(d, o + ".npy")) for o in outs]


def main():
    tool = sys.argv[1]
    assert block([0, 0, 0, 0], (0, 0)) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    bad = 0
    for seed, seq, off, n in [(7, 3, 5, 12), (0, 0, 0, 9), (2**40 + 5, 2**33 + 1, 2**35 + 3, 10)]:
        a, u = run(tool, "draws", {"n": n, "seed": seed, "seq": seq, "off": off}, ["A", "U"])
        g = Philox(seed, seq, off)
        want = [g.rand() for _ in range(2 * n)]
        if [int(x) for x in a] != want[:n]:
            print("rng_ref: draws seed=%d seq=%d off=%d: got %s want %s" % (seed, seq, off, list(a), want[:n]))
            bad += 1
        wu = np.float32(np.array(want[n:], dtype=np.float32) * np.float32(2.0**-32) + np.float32(2.0**-33))
        if not np.array_equal(u, wu):
            print("rng_ref: uniform seed=%d: got %s want %s" % (seed, u, wu))
            bad += 1
    for M, threads, npt in [(1000, 1, 128), (130, 1, 32)]:
        (a,) = run(tool, "rand_1d", {"M": M, "seed": 42, "threads": threads, "num_per_thread": npt}, ["A"])
        want = []
        for start in range(0, M, npt):
            g = Philox(42, 0, start)
            want += [g.rand() for _ in range(npt)]
        if [int(x) for x in a] != want[:M]:
            print("rng_ref: rand_1d M=%d threads=%d: mismatch" % (M, threads))
            bad += 1
    print("rng_ref: FAIL" if bad else "rng_ref: PASS")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
