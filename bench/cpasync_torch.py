"""cpasync_torch.py -- session 10's explicit cp.async kernels (tests/run/kernels/
cp_async.py) on the GPU through the Python package, against torch on fresh random
data: the warp-specialized GEMM whose producer copies rows with T.ptx_cp_async and
hands them over with T.cp_async_barrier_noinc (C = A @ B^T, float16, several tile
and copy widths, partial tiles), and the gathered rows committed and waited for by
groups (Y[b, i] = 2 * X[Idx[b, S-1-i], ::-1], out-of-range rows zero).  One PASS /
FAIL line per check.  Run by bench/cpasync_gpu_check.sh:

    PYTHONPATH=python TILESCALE_LIB=build-gpu/libtilescale.so python3 bench/cpasync_torch.py
"""
import os
import sys

import torch

import tilescale

F = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "run", "kernels", "cp_async.py")
fails = 0


def report(label, ok, detail=""):
    global fails
    print(("PASS " if ok else "FAIL ") + label + ("" if ok else ": " + detail))
    fails += 0 if ok else 1


def gemm(M, N, K, **kw):
    k = tilescale.compile(F, "ws_cp_async", M=M, N=N, K=K, **kw)
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(N, K, device="cuda", dtype=torch.float16)
    c = k(a, b)
    ref = (a.float() @ b.float().t())
    err = (c.float() - ref).abs().max().item()
    tol = 2e-2 * ref.abs().max().item() + 1e-2
    report("ws_cp_async %dx%dx%d %s vs torch.matmul" % (M, N, K, kw), err <= tol and not torch.isnan(c).any().item(),
           "max err %g (tol %g)" % (err, tol))


def gather(R, D, S, G, vec, dtype):
    k = tilescale.compile(F, "gather_groups", R=R, D=D, S=S, G=G, vec=vec, dtype=dtype)
    tdt = getattr(torch, dtype)
    x = torch.randn(R, D, device="cuda", dtype=tdt)
    idx = torch.randint(-R // 8, R + R // 8, (G, S), device="cuda", dtype=torch.int32)
    y = k(x, idx)
    rows = idx.flip(1).long()
    ok = (rows >= 0) & (rows < R)
    ref = torch.where(ok[..., None], 2 * x[rows.clamp(0, R - 1)].flip(-1), torch.zeros((), dtype=tdt, device="cuda"))
    same = torch.equal(y, ref)
    report("gather_groups R=%d D=%d S=%d G=%d vec=%d %s vs torch indexing" % (R, D, S, G, vec, dtype), same,
           "%d elements differ" % (y != ref).sum().item())


torch.manual_seed(10)
gemm(512, 512, 512)
gemm(1024, 768, 2048, block_M=128, block_N=128, block_K=64)
gemm(200, 136, 160, block_K=32, vec=4)
gemm(64, 96, 96, block_K=16, vec=2)
gather(4096, 64, 32, 64, 4, "float32")
gather(1000, 128, 64, 33, 8, "float16")
gather(300, 64, 32, 5, 1, "float32")
print("cpasync_torch: %d failed" % fails)
sys.exit(1 if fails else 0)
