# ARGS: compile FILE --entry grouped_rows -D sizes=(3,5) -D scales=[2,[1,3]] -D names=['x,y',z] --target c --emit ir
# -D values that are tuples and lists (nested, strings quoted), as TileLang
# factories take them (a grouped GEMM's batch sizes): sum, len, indexing and
# iteration at compile time.  Expected: 8 rows (3 + 5) in 2 groups, scale
# 2 * (1 + 3) = 8, a quoted string with a comma in it and a bare one.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def grouped_rows(sizes, scales, names, N=4):
    total = sum(sizes)
    groups = len(sizes)
    s = scales[0] * sum(x for x in scales[1])
    assert names[0] == "x,y" and names[1] == "z" and len(names) == 2
    assert isinstance(sizes, tuple) and isinstance(scales, list)

    @T.prim_func
    def main(A: T.Tensor((total, N), "float32"), B: T.Tensor((total, N), "float32")):
        with T.Kernel(groups, threads=32) as g:
            for i, j in T.Parallel(total, N):
                B[i, j] = A[i, j] * s

    return main
