# The NCCL (+ cuBLAS) side of bench/dist_multi_gpu.sh, in one process
# group so NCCL starts once: all-gather and all-to-all at 64 KiB and 64 MiB
# (bus bandwidth as nccl-tests defines it), AG-GEMM as all_gather then
# matmul, GEMM-RS as matmul then reduce_scatter, each timed with CUDA
# events (slowest rank).  Rank 0 prints the table with our figures, which
# the shell script passes as NAME=MS arguments (milliseconds per
# collective; "-" when ours did not run), and the ratio NCCL time / ours.
# Started by `tilescale launch -n P -- python3 bench/dist_multi_nccl.py ...`
# (device 0 of each process is its own GPU).
import os
import sys

import torch
import torch.distributed as dist


def timed(fn, reps):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    dist.barrier()
    t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0.record()
    for _ in range(reps):
        fn()
    t1.record()
    torch.cuda.synchronize()
    ms = torch.tensor([t0.elapsed_time(t1) / reps], device="cuda")
    dist.all_reduce(ms, op=dist.ReduceOp.MAX)
    return ms.item()


def main():
    ours = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29541")
    rank, n = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", rank=rank, world_size=n)
    rows = []  # (case, bytes for busbw or None, busbw factor, nccl ms, our key)
    for size, tag in ((64 << 10, "64KiB"), (64 << 20, "64MiB")):
        reps = 200 if size < (1 << 20) else 20
        per = size // 4 // n
        x = torch.randn(per, device="cuda")
        y = torch.empty(per * n, device="cuda")
        rows.append(("all-gather " + tag, size, (n - 1) / n,
                     timed(lambda: dist.all_gather_into_tensor(y, x), reps), "ag_" + tag))
        xa = torch.randn(per * n, device="cuda")
        ya = torch.empty_like(xa)
        rows.append(("all-to-all " + tag, size, (n - 1) / n,
                     timed(lambda: dist.all_to_all_single(ya, xa), reps), "a2a_" + tag))
    M, N, K = int(ours.get("M", 512)), int(ours.get("N", 1024)), int(ours.get("K", 4096))
    a = torch.randn(M, K, device="cuda").half()
    b = torch.randn(K, N, device="cuda").half()
    af = torch.empty(n * M, K, device="cuda").half()

    def ag_gemm():
        dist.all_gather_into_tensor(af, a)
        return af @ b

    rows.append((f"AG-GEMM {n * M}x{N}x{K}", None, 0, timed(ag_gemm, 20), "ag_gemm"))
    rows.append((f"  cuBLAS GEMM alone", None, 0, timed(lambda: af @ b, 20), ""))
    ar = torch.randn(n * M, K, device="cuda").half()
    r = torch.empty(M, N, device="cuda")

    def gemm_rs():
        dist.reduce_scatter_tensor(r, (ar @ b).float())

    rows.append((f"GEMM-RS {n * M}x{N}x{K}", None, 0, timed(gemm_rs, 20), "gemm_rs"))
    if rank == 0:
        print(f"{'case':<26} {'NCCL us':>9} {'NCCL GB/s':>10} {'ours us':>9} {'ours GB/s':>10} {'NCCL/ours':>9}")
        for case, nbytes, f, ms, key in rows:
            o = ours.get(key, "")
            try:
                o_ms = float(o)
            except ValueError:
                o_ms = None

            def us(t):
                return f"{t * 1e3:9.1f}" if t else f"{'-' if key else '':>9}"

            def bw(t):
                return f"{nbytes / (t * 1e-3) * f / 1e9:10.1f}" if nbytes and t else f"{'':>10}"

            ratio = f"{100 * ms / o_ms:8.0f}%" if o_ms else ""
            print(f"{case:<26} {us(ms)} {bw(ms)} {us(o_ms)} {bw(o_ms)} {ratio}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
