"""Front-end constructs of issue 8 D that change what a kernel computes,
run on the C target against NumPy: T.Persistent's tile schedule (every tile
of the domain visited exactly once, for domains that do and do not divide
into the waves and groups), comprehensions and helper values feeding a
kernel, and the Python factory code around it."""
import numpy as np
import pytest

import tilescale

SRC = """
import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1])
def visit(M, N, TM, TN, blocks, group, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(blocks, threads=32) as block_id:
            for bx, by in T.Persistent([T.ceildiv(M, TM), T.ceildiv(N, TN)], blocks, block_id, group):
                for i, j in T.Parallel(TM, TN):
                    if bx * TM + i < M and by * TN + j < N:
                        B[bx * TM + i, by * TN + j] = B[bx * TM + i, by * TN + j] + A[bx * TM + i, by * TN + j] + 1
    return main

@tilelang.jit(out_idx=[-1])
def weighted(n, dtype="float32"):
    weights = [float(w) / 2 for w in range(1, 9) if w % 2 == 0]     # [1.0, 2.0, 3.0, 4.0]
    table = {f"w{i}": w for i, w in enumerate(weights)}
    scale = sum(table[k] for k in ("w0", "w3"))                      # 5.0
    @T.prim_func
    def main(A: T.Tensor((n, 4), dtype), B: T.Tensor((n,), dtype)):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(n):
                B[i] = 0
                for j, w in enumerate(weights):  # unrolled at compile time
                    B[i] += A[i, j] * w * scale
    return main
"""


@pytest.mark.parametrize("m,n,tm,tn,blocks,group", [(64, 96, 16, 16, 3, 8), (50, 70, 16, 16, 4, 2),
                                                     (40, 200, 8, 32, 5, 3), (16, 16, 16, 16, 7, 8)])
def test_persistent_visits_every_tile_once(m, n, tm, tn, blocks, group, rng):
    k = tilescale.compile(SRC, "visit", target="c", M=m, N=n, TM=tm, TN=tn, blocks=blocks, group=group)
    a = rng.standard_normal((m, n)).astype(np.float32)
    b = np.zeros((m, n), np.float32)
    k(a, b)
    np.testing.assert_array_equal(b, a + 1)  # each element written once: + a + 1 exactly


def test_comprehension_values_in_a_kernel(rng):
    k = tilescale.compile(SRC, "weighted", target="c", n=37)
    a = rng.standard_normal((37, 4)).astype(np.float32)
    b = np.full(37, np.nan, np.float32)
    k(a, b)
    np.testing.assert_allclose(b, (a * np.array([1.0, 2.0, 3.0, 4.0], np.float32) * 5.0).sum(axis=1), rtol=1e-5)


def test_atomic_addx4(root, rng):
    """T.atomic_addx4 / atomic_addx2 (tests/golden/ir_atomic_addx4.py) on the
    C target: every block's vector added into its row of G."""
    import os
    k = tilescale.compile(os.path.join(root, "tests/golden/ir_atomic_addx4.py"), "kern", target="c", n=16)
    a = rng.standard_normal((16, 8)).astype(np.float32)
    g = rng.standard_normal((4, 8)).astype(np.float32)
    want = g.astype(np.float64).copy()
    for bx in range(16):
        want[bx % 4, :] += a[bx, :]
        want[0, 6:8] += a[bx, 0:2]
    k(a, g)
    np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)
