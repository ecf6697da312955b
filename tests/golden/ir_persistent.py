# ARGS: compile FILE --entry kern -D M=50 -D N=70 --target c --emit ir
# T.Persistent(domain, wave_size, index, group_size): a persistent kernel's
# tile loop: wave w takes tile w * wave_size + index of the domain padded to
# groups of group_size along its last extent; tiles past the last extent
# are skipped (issue 8 D; run against NumPy in tests/python/test_frontend_run.py).
import tilelang.language as T


def kern(M, N, TM=16, TN=16, blocks=4, group=2):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32")):
        with T.Kernel(blocks, threads=32) as block_id:
            for bx, by in T.Persistent([T.ceildiv(M, TM), T.ceildiv(N, TN)], blocks, block_id, group):
                for i, j in T.Parallel(TM, TN):
                    if bx * TM + i < M and by * TN + j < N:
                        A[bx * TM + i, by * TN + j] = A[bx * TM + i, by * TN + j] + 1

    return main
