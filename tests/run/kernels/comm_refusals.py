# Communication primitives refused by a pass rather than a printer (issue
# 5 part 0); the goldens tests/golden/err_put_*.py and err_xport_*.py pin
# the messages (NCCL GIN's refusals: gin_refusals.py, err_gin_*.py).
#   - every target: a put of elements of another size (op/comm.c, at
#     lower_tile_ops);
#   - several nodes on the C target: the world's proxy adds to 32- and
#     64-bit words only (lower_comm);
#   - CUDA: a put of a swizzled tile (verify_lowered).
import tilelang.language as T


def kern(P, what):
    @T.prim_func
    def main(X: T.Tensor((64,), "float32"), H: T.Tensor((P, 64), "float16"), c16: T.Tensor((1,), "int16")):
        with T.Kernel(1, threads=32) as (bx):
            me = T.get_rank()
            peer = (me + 1) % P
            if what == "put_sizes":
                T.put_block(src=T.address_of(X[0]), dst=T.address_of(H[me, 0]), size=64, dst_pe=peer)
            elif what == "atom_add_int16":
                T.atom_add(c16[0], 1, peer=peer)

    return main


def swz(P):
    # A_s is a tensor-core operand: layout_inference swizzles it, and a
    # put's range needs plain row-major addresses
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32"),
             D: T.Tensor((P, 64, 64), "float16")):
        with T.Kernel(1, threads=128) as (bx):
            me = T.get_rank()
            A_s = T.alloc_shared((64, 64), "float16")
            B_s = T.alloc_shared((64, 64), "float16")
            C_l = T.alloc_fragment((64, 64), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.clear(C_l)
            T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C)
            T.put_block(src=T.address_of(A_s[0, 0]), dst=T.address_of(D[me, 0, 0]), size=64 * 64,
                        dst_pe=(me + 1) % P)

    return main


def barrier_par(P):
    # CUDA: a block-wide barrier in per-thread code (verify_lowered; the
    # CUDA printer refused it before session 11); T.st there is fine
    @T.prim_func
    def main(X: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=32) as (bx):
            peer = (T.get_rank() + 1) % P
            for i in T.Parallel(64):
                T.st(X[i], 1.0, dst_pe=peer)
                T.barrier_all()

    return main
