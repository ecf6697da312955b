# ARGS: run FILE --entry add -D M=16 -D N=16 --seed 1 --threads 1
# Issue 9 D: a tiled add without a boundary guard, on a tensor smaller than
# one tile.  Unchecked, it wrote past the tensors (SIGSEGV or heap garbage
# on stdout); the C target checks every access and reports the first one
# outside, naming the kernel, the buffer, the index and the source line.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def add(M, N, bm=32, bn=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm)) as (bx, by):
            for i, j in T.Parallel(bm, bn):
                C[by * bm + i, bx * bn + j] = 2.0 * B[by * bm + i, j % N]

    return main
