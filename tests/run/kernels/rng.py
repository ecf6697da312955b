# T.rng_init / T.rng_rand / T.rng_rand_float (cuRAND's Philox4_32_10
# semantics): checked against a Python implementation by tests/run/rng.sh,
# the CUDA passes against the C target in tests/unit/test_interp_examples.c.
import tilelang
import tilelang.language as T


# TileLang's examples/rand/rand_uint.py: one thread per block seeds its
# state at offset bx * blk_M and draws num_per_thread values in order.
# (With more threads, which thread draws for which element is the
# T.Parallel nest's thread mapping, as in TileLang.)
@tilelang.jit(out_idx=[0])
def rand_1d(M=1000, seed=42, threads=1, num_per_thread=128):
    blk_M = num_per_thread * threads

    @T.prim_func
    def main(A: T.Tensor((M,), "uint32")):
        with T.Kernel(T.ceildiv(M, blk_M), threads=threads) as bx:
            tx = T.get_thread_binding()
            T.rng_init(seed, 0, bx * blk_M + tx * num_per_thread)
            for i, j in T.Parallel(threads, num_per_thread):
                offsets = (bx * threads + i) * num_per_thread
                idx = offsets + j
                if idx < M:
                    A[idx] = T.rng_rand()

    return main


# One thread's draws from (seed, seq, off), as uint32 and as uniform floats.
@tilelang.jit(out_idx=[0, 1])
def draws(n=12, seed=7, seq=3, off=5):
    @T.prim_func
    def main(A: T.Tensor((n,), "uint32"), U: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=1) as bx:
            T.rng_init(seed, seq, off)
            for i in T.serial(n):
                A[i] = T.rng_rand()
            for i in T.serial(n):
                U[i] = T.rng_rand_float()

    return main
