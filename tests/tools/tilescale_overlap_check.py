# Runs the tile kernels of TileScale's overlapped examples (github.com/tile-ai/
# tilescale, examples/distributed), whose collectives are host code (torch
# copies on the copy engine), with this script doing the host's collective
# in numpy between the kernel runs, and checks the result against the host's
# own torch reference written in numpy.  Not a CI test (the examples are not
# in this tree); tests/tools/tilescale_compat.sh calls it.
#   python3 tilescale_overlap_check.py EXAMPLES_DIR TOOL WHICH P
# WHICH:
#   gemm_rs  example_gemm_rs_overlapped.py: gemm_kernel on every rank (its own
#            -D local_rank), the per-segment counters and flags it sets, the
#            host's scatter (reduce_scatter.py intra_node_scatter: rank d's
#            scatter buffer gets rows d of every rank's C), then
#            kernel_ring_reduce_tma of reduce_scatter.py on every rank; checked
#            against torch_gemm_rs (matmul per rank, reduce_scatter_tensor).
#   ag_gemm  example_allgather_gemm_overlapped.py: set_signal_kernel, the
#            host's pull all-gather of A with its flags (signal_target 1),
#            gemm_kernel on every rank; checked against all_gather + matmul.
#            gemm_kernel asks driver.get_num_sms() (the SM count, for its
#            persistent variant only); where the C target does not answer it,
#            it runs from a copy with that one call replaced by 132 (said so).
#   sp_attn  example_sp_ag_attention_intra_node.py's fused path
#            (sp_ag_attention_intra_node.py): barrier_all_blocks_sys_kernel
#            on sim ranks, the host's K/V all-gather (cp_engine_producer_kv_
#            all_gather), flashattn (zig-zag and not, causal and not) on every
#            rank; checked against TorchSequenceParallelAttn.
#   sp_attn_ws  the same with flashattn's warp-specialized variant
#            (enable_specialized=True: mbarriers, a producer and a consumer
#            role).
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

exdir, tool, which, P = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
tmp = tempfile.mkdtemp(prefix="tilescale_overlap.")
rng = np.random.default_rng(1234 + P)
failures = 0


def run(path, entry, defs, ins, outs, extra=()):
    """tilescale run on the C target; ins/outs: name -> array / file stem."""
    cmd = [tool, "run", path, "--entry", entry]
    for k, v in defs.items():
        cmd += ["-D", f"{k}={v}"]
    for k, v in ins.items():
        if isinstance(v, np.ndarray):
            f = os.path.join(tmp, f"in_{k}.npy")
            np.save(f, v)
            cmd += ["--in", f"{k}={f}"]
        else:
            cmd += ["--in", f"{k}={v}"]
    for k in outs:
        cmd += ["--out", f"{k}={os.path.join(tmp, 'out_' + k + '.npy')}"]
    cmd += list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print(" ".join(cmd))
        print((p.stdout + p.stderr)[-2000:])
        raise SystemExit("FAIL (a kernel run failed)")
    return {k: np.load(os.path.join(tmp, "out_" + k + ".npy")) for k in outs}


def check(what, got, ref, atol=1e-2, rtol=1e-2):
    global failures
    got = got.astype(np.float32)
    ref = ref.astype(np.float32)
    ok = np.isfinite(got).all() and np.allclose(got, ref, atol=atol, rtol=rtol)
    err = np.abs(got - ref).max()
    print(f"  {what}: max |got - ref| {err:.3g}: {'ok' if ok else 'FAILS'}")
    if not ok:
        failures += 1


def f16(shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float16)


def gemm_rs():
    M, N, K = 256, 128, 256
    bm, bn, bk = 64, 64, 64
    Mp, KL = M // P, K // P
    ex = os.path.join(exdir, "example_gemm_rs_overlapped.py")
    A = [f16((M, KL), 0.1) for _ in range(P)]
    B = [f16((KL, N), 0.1) for _ in range(P)]
    C = []
    for r in range(P):
        o = run(ex, "gemm_kernel",
                dict(M=M, N=N, K=K, local_rank=r, num_local_rank=P, block_M=bm, block_N=bn, block_K=bk, threads=128),
                dict(A=A[r], B=B[r], scatter_signal_buf=np.zeros(P, np.uint32),
                     counter_signal_buf=np.zeros(P, np.uint32), C=f16((M, N))),
                ["C", "scatter_signal_buf", "counter_signal_buf"])
        C.append(o["C"])
        # every segment (a rank's rows) counted all its tiles, the last one set its flag
        tiles = (N // bn) * (Mp // bm if Mp >= bm else 1)
        if not ((o["counter_signal_buf"] == tiles).all() and (o["scatter_signal_buf"] == 1).all()):
            print(f"  rank {r}: counters {o['counter_signal_buf'].tolist()} (expected {tiles}), "
                  f"flags {o['scatter_signal_buf'].tolist()} (expected 1)")
            global failures
            failures += 1
    rs = os.path.join(exdir, "reduce_scatter.py")
    full = [(A[r].astype(np.float32) @ B[r].astype(np.float32)).astype(np.float16) for r in range(P)]
    for d in range(P):
        check(f"rank {d} C (gemm_kernel) = A @ B", C[d], full[d])
        buf = np.concatenate([C[s][d * Mp:(d + 1) * Mp] for s in range(P)])  # intra_node_scatter
        o = run(rs, "kernel_ring_reduce_tma",
                dict(M_per_rank=Mp, N=N, block_M=64, block_N=64, begin_idx=d, num_splits=P, threads=128),
                dict(C=buf, output=f16((Mp, N))), ["output"])
        ref = sum(full[s][d * Mp:(d + 1) * Mp].astype(np.float32) for s in range(P))  # torch_gemm_rs
        check(f"rank {d} reduce-scattered output", o["output"], ref)


def ag_gemm():
    M, N, K = 256, 256, 128
    bm, bn, bk = 64, 64, 64
    Mp, NL = M // P, N // P
    src = os.path.join(exdir, "example_allgather_gemm_overlapped.py")
    ex = src
    probe = subprocess.run([tool, "compile", src, "--entry", "gemm_kernel", "--target", "c", "--emit", "ir"] +
                           [a for k, v in dict(M=M, N=N, K=K, local_rank=0, num_local_rank=P, block_M=bm, block_N=bn,
                                               block_K=bk, threads=128).items() for a in ("-D", f"{k}={v}")],
                           capture_output=True, text=True)
    if probe.returncode != 0 and "get_num_sms" in probe.stderr:
        ex = os.path.join(tmp, "example_allgather_gemm_overlapped.py")
        text = open(src).read()
        assert text.count("driver.get_num_sms()") == 1
        open(ex, "w").write(text.replace("driver.get_num_sms()", "132"))
        print("  (gemm_kernel from a copy with driver.get_num_sms() replaced by 132: the C target does not answer it)")
    A = [f16((Mp, K)) for _ in range(P)]
    B = [f16((K, NL)) for _ in range(P)]
    gathered = np.concatenate(A)
    for r in range(P):
        o = run(src, "set_signal_kernel", dict(local_rank=r, num_local_ranks=P, threads=128),
                dict(signal_buffer=np.full(P, 7, np.uint32)), ["signal_buffer"])
        sig = o["signal_buffer"]
        if sig.tolist() != [1 if i == r else 0 for i in range(P)]:
            print(f"  rank {r}: set_signal_kernel gave {sig.tolist()}")
            global failures
            failures += 1
        # cp_engine_producer_all_gather_full_mesh_pull: the other ranks' rows, each flag := 1
        sig[:] = 1
        ag = np.array(A[r].repeat(P, 0))  # poisoned with this rank's rows, then filled
        for s in range(P):
            ag[s * Mp:(s + 1) * Mp] = A[s]
        o = run(ex, "gemm_kernel",
                dict(M=M, N=N, K=K, local_rank=r, num_local_rank=P, block_M=bm, block_N=bn, block_K=bk, threads=128),
                dict(A=ag, B=B[r], signal_buffer=sig, C=f16((M, NL))), ["C"])
        check(f"rank {r} C = all_gather(A) @ B", o["C"], gathered.astype(np.float32) @ B[r].astype(np.float32))


def sp_attn(zigzag, causal, spec=False):
    Hq, Hkv, D = 2, 1, 64
    seqlens_q, seqlens_k = [256 * P, 512 * P], [512 * P, 1024 * P]  # zig-zag halves of 128 rows
    bsz = len(seqlens_q)
    cu_q = np.concatenate([[0], np.cumsum(seqlens_q)]).astype(np.int32) // P
    cu_k = np.concatenate([[0], np.cumsum(seqlens_k)]).astype(np.int32)
    max_k = max(seqlens_k)
    q = [f16((cu_q[-1], Hq, D), 0.5) for _ in range(P)]
    k = [f16((cu_k[-1] // P, Hkv, D), 0.5) for _ in range(P)]
    v = [f16((cu_k[-1] // P, Hkv, D), 0.5) for _ in range(P)]
    lib = os.path.join(exdir, "sp_ag_attention_intra_node.py")
    if zigzag and causal:  # the barrier kernel the host runs after its copies, on sim ranks
        run(lib, "barrier_all_blocks_sys_kernel", dict(num_local_rank=P), {}, [], ["--ranks", str(P)])
    for r in range(P):
        # cp_engine_producer_kv_all_gather: batch i's keys at cu_k[i], shard s at + s * len/P
        agk = f16((bsz * max_k, Hkv, D))
        agv = f16((bsz * max_k, Hkv, D))
        for i in range(bsz):
            sl = (cu_k[i + 1] - cu_k[i]) // P
            for s in range(P):
                agk[cu_k[i] + s * sl:cu_k[i] + (s + 1) * sl] = k[s][cu_k[i] // P:cu_k[i] // P + sl]
                agv[cu_k[i] + s * sl:cu_k[i] + (s + 1) * sl] = v[s][cu_k[i] // P:cu_k[i] // P + sl]
        o = run(lib, "flashattn",
                dict(batch_size=bsz, groups=Hq // Hkv, UQ=cu_q[-1], UKV=bsz * max_k, heads=Hq, dim=D,
                     is_causal=causal, enable_zig_zag=zigzag, enable_specialized=spec, rank=r, num_ranks=P,
                     block_M=128, block_N=128, num_stages=2, threads=256),
                dict(Q_unpad=q[r], K_unpad=agk, V_unpad=agv, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
                     max_seqlen_q=max(seqlens_q) // P, Output_unpad=f16((cu_q[-1], Hq, D))),
                ["Output_unpad"])
        ref = np.zeros((cu_q[-1], Hq, D), np.float32)
        for i in range(bsz):  # TorchSequenceParallelAttn.forward
            qs = q[r][cu_q[i]:cu_q[i + 1]].astype(np.float32)
            ql = qs.shape[0] * P
            sl = (cu_k[i + 1] - cu_k[i]) // P
            shards_k = [k[s][cu_k[i] // P:cu_k[i] // P + sl].astype(np.float32) for s in range(P)]
            shards_v = [v[s][cu_k[i] // P:cu_k[i] // P + sl].astype(np.float32) for s in range(P)]
            kl = sl * P
            if zigzag:
                h, hk = qs.shape[0] // 2, sl // 2
                K_ = np.concatenate([x[:hk] for x in shards_k] + [x[hk:] for x in shards_k[::-1]])
                V_ = np.concatenate([x[:hk] for x in shards_v] + [x[hk:] for x in shards_v[::-1]])
                parts = [(qs[:h], h * r), (qs[h:], ql - h * (r + 1))]
            else:
                K_, V_ = np.concatenate(shards_k), np.concatenate(shards_v)
                parts = [(qs, r * qs.shape[0])]
            rows = []
            for qq, off in parts:
                off += kl - ql
                for hd in range(Hq):
                    s = qq[:, hd] @ K_[:, hd // (Hq // Hkv)].T / np.sqrt(D)
                    if causal:  # _gen_mask: key j visible to row i iff j <= offset + i
                        s = np.where(np.arange(kl)[None, :] <= off + np.arange(qq.shape[0])[:, None], s, -np.inf)
                    pr = np.exp(s - s.max(1, keepdims=True))
                    pr /= pr.sum(1, keepdims=True)
                    ref_rows = pr @ V_[:, hd // (Hq // Hkv)]
                    rows.append((qq.shape[0], hd, ref_rows))
            base = cu_q[i]
            for hd in range(Hq):
                pos = base
                for n, h2, rr in rows:
                    if h2 == hd:
                        ref[pos:pos + n, hd] = rr
                        pos += n
        check(f"rank {r} flashattn zig_zag={zigzag} causal={causal}{' specialized' if spec else ''}", o["Output_unpad"], ref)


if which == "gemm_rs":
    gemm_rs()
elif which == "ag_gemm":
    ag_gemm()
elif which == "sp_attn":
    for zz in (False, True):
        for c in (False, True):
            sp_attn(zz, c)
elif which == "sp_attn_ws":  # the warp-specialized variant (T.alloc_barrier: mbarriers, producer/consumer roles)
    for zz in (False, True):
        for c in (False, True):
            sp_attn(zz, c, True)
else:
    raise SystemExit(f"unknown {which}")
shutil.rmtree(tmp)
print(f"{which} P={P}: " + ("PASS" if failures == 0 else f"FAIL ({failures})"))
sys.exit(1 if failures else 0)
