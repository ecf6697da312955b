# Per-thread registers (T.alloc_local) filled and drained by T.copy / T.clear,
# in a kernel with a 2-D thread binding: the pattern of TileLang's 2:4
# compressor (examples/gemm_sp/sparse_utils.py, _compress_fn).  Each thread
# copies a run of a row into its own array, works on it, and copies its
# results out; T.copy / T.clear of a local buffer are the thread's own loops
# (every thread runs every iteration), never spread over the block.
# compress24 keeps the first two nonzero positions of each group of 4 (any
# input: missing positions taken from the first zeros), their values and a
# 4-bit code (first | second << 2) per group, 4 groups per int16 word.
# swap_pairs / swap_pairs_naive: a tuple assignment `a[0], a[1] = a[1], a[0]`
# reads its whole right side before storing (Python's order).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-2, -1])
def compress24(S=32, D=256, block_M=16, block_K=128, per_thread=32):
    @T.prim_func
    def main(dense: T.Tensor((S, D), T.float16), vals: T.Tensor((S, D // 2), T.float16),
             code: T.Tensor((S, D // 16), T.int16)):
        with T.Kernel(S // block_M, D // block_K, threads=(block_M, block_K // per_thread)) as (bz, bk):
            tm = T.get_thread_binding(0)
            tn = T.get_thread_binding(1)
            row = T.alloc_local([per_thread], T.float16)
            kept = T.alloc_local([per_thread // 2], T.float16)
            word = T.alloc_local([per_thread // 16], T.int16)
            pos = T.alloc_local([4], T.uint8)
            cnt = T.alloc_var(T.int32)
            T.clear(kept)
            T.clear(word)
            base = bk * block_K + tn * per_thread
            T.copy(dense[bz * block_M + tm, base:base + per_thread], row)
            for g in T.unroll(per_thread // 4):
                cnt = 0
                for i in T.unroll(4):  # nonzero positions first, in order
                    if row[g * 4 + i] != 0:
                        pos[cnt] = i
                        cnt = cnt + 1
                for i in T.unroll(4):  # then zero positions
                    if row[g * 4 + i] == 0:
                        pos[cnt] = i
                        cnt = cnt + 1
                if pos[0] > pos[1]:
                    pos[0], pos[1] = pos[1], pos[0]
                for i in T.unroll(2):
                    kept[g * 2 + i] = row[g * 4 + pos[i]]
                    word[g // 4] |= T.shift_left(pos[i].astype(T.int16), 4 * (g % 4) + 2 * i)
            T.copy(kept, vals[bz * block_M + tm, base // 2:base // 2 + per_thread // 2])
            T.copy(word, code[bz * block_M + tm, base // 16:base // 16 + per_thread // 16])

    return main


@tilelang.jit(out_idx=[-1])
def swap_pairs(N=64):
    @T.prim_func
    def main(x: T.Tensor((N, 2), T.float32), y: T.Tensor((N, 2), T.float32)):
        with T.Kernel(N, threads=32) as bx:
            p = T.alloc_local([2], T.float32)
            T.copy(x[bx, 0:2], p)
            p[0], p[1] = p[1], p[0] * 2
            T.copy(p, y[bx, 0:2])

    return main


@tilelang.jit(out_idx=[-1])
def local_reverse(N=128, n=32):
    """A block's run of x reversed and scaled in a thread's registers: every
    element of the local array is read by the thread that wrote another."""
    @T.prim_func
    def main(x: T.Tensor((N,), T.float32), y: T.Tensor((N,), T.float32)):
        with T.Kernel(N // n, threads=128) as bx:
            r = T.alloc_local([n], T.float32)
            s = T.alloc_local([n], T.float32)
            T.clear(s)
            T.copy(x[bx * n:(bx + 1) * n], r)
            for i in T.serial(n - 1):
                s[i + 1] = s[i] + r[n - 1 - i] * 2
            T.copy(s, y[bx * n:(bx + 1) * n])

    return main


@tilelang.jit(out_idx=[-1])
def local_reverse_naive(N=128, n=32):
    @T.prim_func
    def main(x: T.Tensor((N,), T.float32), y: T.Tensor((N,), T.float32)):
        with T.Kernel(N // n, threads=1) as bx:
            y[bx * n] = 0
            for i in T.serial(n - 1):
                y[bx * n + i + 1] = y[bx * n + i] + x[bx * n + n - 1 - i] * 2

    return main


@tilelang.jit(out_idx=[-1])
def swap_pairs_naive(N=64):
    @T.prim_func
    def main(x: T.Tensor((N, 2), T.float32), y: T.Tensor((N, 2), T.float32)):
        with T.Kernel(N, threads=1) as bx:
            y[bx, 0] = x[bx, 1]
            y[bx, 1] = x[bx, 0] * 2

    return main
