# ARGS: compile FILE --entry kern -D P=4 --target cuda --multinode --dump-after lower_comm
# ENV: TILESCALE_CUDA_ARCH=sm_90
# Several nodes on CUDA: the transport to a rank of another node is NCCL's
# GIN, which lacks the warp variants (T.put_warp).  Pass lower_comm refuses it where it sets the op's
# xport (op/comm.c: ts_comm_gin_lacks), so --dump-after lower_comm fails too;
# the printer only asserts (issue 5 part 0).
import tilelang.language as T


def kern(P):
    @T.prim_func
    def main(X: T.Tensor((64,), "float32"), Y: T.Tensor((P, 64), "float32"), sig: T.Tensor((P,), "int32"),
             cnt: T.Tensor((1,), "int32"), bar: T.Tensor((P,), "int32")):
        with T.Kernel(1, threads=32) as (bx):
            me = T.get_rank()
            peer = (me + 1) % P
            v = T.alloc_var("int32")
            T.put_warp(src=T.address_of(X[0]), dst=T.address_of(Y[me, 0]), size=64, dst_pe=peer)
    return main
