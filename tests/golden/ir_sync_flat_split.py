# ARGS: compile FILE --entry flat_split --target cuda --emit ir --dump-after insert_sync
# ENV: TILESCALE_CUDA_ARCH=sm_90
# insert_sync on per-thread accesses that split a flat index into rows
# themselves, `S[(i * 512 + tx * 4 + v) // 128, (tx * 4 + v) % 128]` (the form
# of TileLang's dequantization macros; simplify drops i * 512 from the
# modulo): compared between threads by the flat offset, two threads never
# meet inside the loop, so it needs no barrier; the loop stores D with another
# thread mapping (v * threads + tx) than the copy out reads it, so a barrier
# stays between them (and one after the copy in).  Before session 10 such a
# loop was an internal error ("no fixed point").
import tilelang.language as T


def flat_split(N=128, K=128, threads=128):
    @T.prim_func
    def main(A: T.Tensor((N, K), "int32"), C: T.Tensor((N, K), "int32")):
        with T.Kernel(1, threads=threads) as bx:
            S = T.alloc_shared((N, K), "int32")
            D = T.alloc_shared((N, K), "int32")
            T.copy(A, S)
            tx = T.get_thread_binding()
            l = T.alloc_local((4,), "int32")
            for i in T.serial(N * K // threads // 4):
                for v in T.vectorized(4):
                    idx = i * threads * 4 + tx * 4 + v
                    l[v] = S[idx // K, idx % K]
                for v in T.unroll(4):
                    jdx = i * threads * 4 + v * threads + tx
                    D[jdx // K, jdx % K] = l[v] * 3 + 1
            T.copy(D, C)

    return main
