# NCCL (through torch.distributed) as the golden reference and the speed
# baseline of our collectives: one process per rank, started by
# `tilescale launch -n N` (RANK/WORLD_SIZE/LOCAL_RANK come from it; device
# 0 of each process is its own GPU, the launcher rotates
# CUDA_VISIBLE_DEVICES).  Each rank loads the same input our kernel got
# (IN with {rank}), runs the NCCL collective on it, compares the result
# with what our kernel wrote (OURS with {rank}), and times the NCCL call
# with CUDA events; rank 0 prints one line with the slowest rank's time and
# the bus bandwidth (nccl-tests' definitions).
#   python3 bench/dist_nccl.py OP IN OURS [REPS]
#   OP: allreduce | allgather | reduce_scatter | all_to_all
# Exit status 1 when our result differs from NCCL's.
import os
import sys

import numpy as np
import torch
import torch.distributed as dist


def main():
    op, pin, pours = sys.argv[1], sys.argv[2], sys.argv[3]
    reps = int(sys.argv[4]) if len(sys.argv) > 4 else 20
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    rank, n = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", rank=rank, world_size=n)
    x = torch.from_numpy(np.load(pin.replace("{rank}", str(rank)))).cuda()
    ours = torch.from_numpy(np.load(pours.replace("{rank}", str(rank)))).cuda()

    # the output buffer once; each step is one NCCL call (allreduce in place)
    if op == "allreduce":
        y, nbytes, factor = x.clone(), x.numel() * x.element_size(), 2.0 * (n - 1) / n
        step = lambda: dist.all_reduce(y)
    elif op == "allgather":
        y = torch.empty((n * x.shape[0],) + tuple(x.shape[1:]), dtype=x.dtype, device=x.device)
        nbytes, factor = y.numel() * y.element_size(), (n - 1) / n
        step = lambda: dist.all_gather_into_tensor(y, x)
    elif op == "reduce_scatter":
        y = torch.empty((x.shape[0] // n,) + tuple(x.shape[1:]), dtype=x.dtype, device=x.device)
        nbytes, factor = x.numel() * x.element_size(), (n - 1) / n
        step = lambda: dist.reduce_scatter_tensor(y, x)
    elif op == "all_to_all":
        y = torch.empty_like(x)
        nbytes, factor = x.numel() * x.element_size(), (n - 1) / n
        step = lambda: dist.all_to_all_single(y, x)
    else:
        raise SystemExit("unknown op " + op)
    step()
    torch.cuda.synchronize()
    err = (y.float() - ours.float()).abs().max().item() if y.shape == ours.shape else float("inf")
    tol = 1e-3 * max(1.0, y.float().abs().max().item())
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    dist.barrier()
    t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0.record()
    for _ in range(reps):
        step()
    t1.record()
    torch.cuda.synchronize()
    ms = torch.tensor([t0.elapsed_time(t1) / reps], device="cuda")
    bad = torch.tensor([0 if err <= tol else 1], device="cuda")
    dist.all_reduce(ms, op=dist.ReduceOp.MAX)
    dist.all_reduce(bad)
    if rank == 0:
        us = ms.item() * 1e3
        print(f"nccl {op} ranks={n} bytes={nbytes} time={us:.1f}us busbw={nbytes / (us * 1e-6) * factor / 1e9:.1f}GB/s "
              f"ours-vs-nccl={'ok' if bad.item() == 0 else 'MISMATCH'} (rank 0 max err {err:.3g})")
    dist.destroy_process_group()
    sys.exit(1 if bad.item() else 0)


if __name__ == "__main__":
    main()
