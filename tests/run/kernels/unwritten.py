# Two entries that both leave the last row of their output unwritten (the
# loop stops one row short): `tilescale run --check-against` must fail on
# the NaN poison left there, although the reference has NaN in the same
# places (tests/run/nan_poison_fails.sh).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def short_copy(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(M - 1, threads=1) as i:
            for j in range(N):
                C[i, j] = A[i, j] * 2.0

    return main


@tilelang.jit(out_idx=[-1])
def short_copy_ref(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(M - 1, threads=1) as i:
            for j in range(N):
                C[i, j] = A[i, j] + A[i, j]

    return main


@tilelang.jit(out_idx=[-1])
def full_copy(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(M, threads=1) as i:
            for j in range(N):
                C[i, j] = A[i, j] * 2.0

    return main
