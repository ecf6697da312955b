# Reducers (T.alloc_reducer, T.reducer_init/update, T.finalize_reducer):
# each kernel against a naive one (tests/run/reducers.sh; the CUDA passes in
# tests/unit/test_interp_examples.c).
import tilelang
import tilelang.language as T


# TileLang's gemv_alloc_reducer (examples/gemv): the legacy form, cleared,
# updated with += in a T.Parallel nest whose inner level is reduced, then
# finalized in place.
@tilelang.jit(out_idx=[2])
def gemv_reducer(M=96, N=200, block_M=32, block_N=64, num_stages=2, threads=128):
    @T.prim_func
    def main(a: T.Tensor((M, N), "float16"), x: T.Tensor((N,), "float16"), o: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as i0_m:
            o_reducer = T.alloc_reducer(block_M, "float32", replication="all")
            T.clear(o_reducer)
            for i0_n in T.Pipelined(T.ceildiv(N, block_N), num_stages=num_stages):
                a_smem = T.alloc_shared((block_M, block_N), "float16")
                T.copy(a[i0_m * block_M, i0_n * block_N], a_smem)
                a_frag = T.alloc_fragment((block_M, block_N), "float16")
                T.copy(a_smem, a_frag)
                x_frag = T.alloc_fragment(block_N, "float16")
                T.copy(x[i0_n * block_N], x_frag)
                for i1_m, i1_n in T.Parallel(block_M, block_N):
                    o_reducer[i1_m] += a_frag[i1_m, i1_n] * x_frag[i1_n]
            T.finalize_reducer(o_reducer)
            T.copy(o_reducer, o[i0_m * block_M])

    return main


@tilelang.jit(out_idx=[2])
def gemv_reducer_naive(M=96, N=200, block_M=32, block_N=64, num_stages=2, threads=128):
    @T.prim_func
    def main(a: T.Tensor((M, N), "float16"), x: T.Tensor((N,), "float16"), o: T.Tensor((M,), "float32")):
        with T.Kernel(M, threads=1) as i:
            acc = T.alloc_var("float32")
            acc = 0.0
            for j in T.serial(N):
                acc += T.cast(a[i, j] * x[j], "float32")
            o[i] = acc

    return main


# Column maxima of a tile with the v2 form: reducer_init with a starting
# value, reducer_update from a nest whose OUTER level is reduced, finalize
# into another fragment.
@tilelang.jit(out_idx=[1])
def col_max(M=70, N=48, block_M=32):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            r = T.alloc_reducer((N,), "float32", op="max")
            out = T.alloc_fragment((N,), "float32")
            t = T.alloc_fragment((block_M, N), "float32")
            T.reducer_init(r, -0.5)
            for k in T.serial(T.ceildiv(M, block_M)):
                T.copy(X[k * block_M, 0], t)
                for i, j in T.Parallel(block_M, N):
                    if k * block_M + i < M:
                        T.reducer_update(r[j], t[i, j])
            T.finalize_reducer(r, out)
            T.copy(out, Y[0])

    return main


@tilelang.jit(out_idx=[1])
def col_max_naive(M=70, N=48, block_M=32):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(N, threads=1) as j:
            m = T.alloc_var("float32")
            m = -0.5
            for i in T.serial(M):
                m = T.max(m, X[i, j])
            Y[j] = m

    return main
