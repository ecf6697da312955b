"""Explicit thread programming (issue 8 D): T.get_thread_binding and
T.thread_binding kernels run on the CUDA target against torch (on the
device; skipped without one), and on the C target against NumPy.  The uniform-context stores whose place
depends on the thread (B_shared[tn, tk] = ... in a serial loop) are each
thread's own: thread 0 alone storing them (the CUDA printer's rule for
uniform stores) would leave the other rows unwritten."""
import pytest

import tilescale

SRC = """
import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1])
def gemv(N, K, BLOCK_N=32, BLOCK_K=16):
    @T.prim_func
    def main(A: T.Tensor((K,), "float32"), B: T.Tensor((N, K), "float32"), C: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, BLOCK_N), threads=BLOCK_N) as bn:
            tn = T.get_thread_binding(0)
            A_shared = T.alloc_shared((BLOCK_K,), "float32")
            B_shared = T.alloc_shared((BLOCK_N, BLOCK_K), "float32")
            acc = T.alloc_local((1,), "float32")
            acc[0] = 0
            for bk in T.serial(T.ceildiv(K, BLOCK_K)):
                for tk in T.serial(BLOCK_K):
                    A_shared[tk] = A[bk * BLOCK_K + tk]
                    B_shared[tn, tk] = B[bn * BLOCK_N + tn, bk * BLOCK_K + tk]
                for tk in T.serial(BLOCK_K):
                    acc[0] += A_shared[tk] * B_shared[tn, tk]
            C[bn * BLOCK_N + tn] = acc[0]
    return main

@tilelang.jit(out_idx=[-1])
def splitk(N, K, BLOCK_N=16, BLOCK_K=8):
    @T.prim_func
    def main(A: T.Tensor((K,), "float32"), B: T.Tensor((N, K), "float32"), C: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, BLOCK_N), threads=(BLOCK_N, BLOCK_K)) as bn:
            tn = T.get_thread_binding(0)
            tk = T.thread_binding(0, BLOCK_K, thread="threadIdx.y")
            part = T.alloc_shared((BLOCK_N, BLOCK_K), "float32")
            acc = T.alloc_local((1,), "float32")
            acc[0] = 0
            for bk in T.serial(K // BLOCK_K):
                acc[0] += A[bk * BLOCK_K + tk] * B[bn * BLOCK_N + tn, bk * BLOCK_K + tk]
            part[tn, tk] = acc[0]
            T.sync_threads()
            if tk == 0:
                for j in T.serial(1, BLOCK_K):
                    acc[0] += part[tn, j]
                C[bn * BLOCK_N + tn] = acc[0]
    return main
"""


@pytest.mark.parametrize("entry,n,k", [("gemv", 96, 80), ("splitk", 64, 48)])
def test_c_target_runs_thread_level_code(entry, n, k):
    """The C target runs thread-level code too (thread ranges as loops over
    the block's threads, a01db74): against NumPy on fresh random data."""
    np = pytest.importorskip("numpy")
    kern = tilescale.compile(SRC, entry, target="c", N=n, K=k)
    rng = np.random.default_rng(5)
    a = rng.standard_normal(k).astype(np.float32)
    b = rng.standard_normal((n, k)).astype(np.float32)
    c = np.full(n, np.nan, np.float32)
    kern(a, b, c)
    np.testing.assert_allclose(c, b.astype(np.float64) @ a, rtol=1e-4, atol=1e-4)


def _cuda():
    torch = pytest.importorskip("torch")
    if not (torch.cuda.is_available() and tilescale.cuda_available()):
        pytest.skip("needs a GPU")
    return torch


@pytest.mark.parametrize("entry,n,k", [("gemv", 96, 80), ("splitk", 64, 48)])
def test_cuda_thread_binding(entry, n, k):
    torch = _cuda()
    kern = tilescale.compile(SRC, entry, target="cuda", N=n, K=k)
    a = torch.randn(k, device="cuda")
    b = torch.randn(n, k, device="cuda")
    c = torch.full((n,), float("nan"), device="cuda")
    kern(a, b, c)
    torch.testing.assert_close(c, b @ a, rtol=1e-4, atol=1e-4)
