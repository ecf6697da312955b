"""sparse_mla_inputs.py DIR B S SKV H DQK TOPK Q_START SEED -- inputs for deepseek_v32's
sparse MLA forward and its naive reference (tests/run/kernels/sparse_mla_ref.py),
written as .npy without NumPy: Q [B, S, H, DQK] and KV [B, SKV, 1, DQK] bfloat16
(descr '<V2', the bits) uniform in [-1, 1); Indices [B, S, 1, TOPK] int32, each
query's row a random selection of distinct rows of [0, SKV) (some beyond its causal
limit Q_START + s, which the kernels mask; the first always within it);
q_start_index_s [1] int32 = Q_START."""
import random
import struct
import sys


def save(path, descr, shape, fmt, vals):
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else ""))
    hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode("latin1"))
        f.write(struct.pack("<%d%s" % (len(vals), fmt), *vals))


def bf16(x):
    b = struct.unpack("<I", struct.pack("<f", x))[0]
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF


def main(argv):
    d, B, S, SKV, H, DQK, TOPK, QS, seed = argv[1], *map(int, argv[2:10])
    rng = random.Random(seed)
    save(d + "/q.npy", "<V2", (B, S, H, DQK), "H", [bf16(rng.uniform(-1, 1)) for _ in range(B * S * H * DQK)])
    save(d + "/kv.npy", "<V2", (B, SKV, 1, DQK), "H", [bf16(rng.uniform(-1, 1)) for _ in range(B * SKV * DQK)])
    idx = []
    for b in range(B):
        for s in range(S):
            row = rng.sample(range(SKV), TOPK)
            lim = min(QS + s, SKV - 1)
            if row[0] > lim:
                row[0] = rng.randrange(0, lim + 1)
                while row[0] in row[1:]:
                    row[0] = rng.randrange(0, lim + 1)
            idx += row
    save(d + "/idx.npy", "<i4", (B, S, 1, TOPK), "i", idx)
    save(d + "/qs.npy", "<i4", (1,), "i", [QS])


if __name__ == "__main__":
    main(sys.argv)
