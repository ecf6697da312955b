# ARGS: compile FILE --entry add_marked -D n=96 --target c --emit ir
# TileLang's IKET instrumentation (tilelang.tools.cuda.iket) records named
# ranges and marks for a profiler; here it does nothing, and the kernel is the
# one without it: `with T.Kernel(...) as bx, iket.range(...)` is the T.Kernel,
# iket.mark(..., payload=iket.payload(...)) no statement at all.
import tilelang
import tilelang.language as T
from tilelang.tools.cuda import iket


def add_marked(n, threads=32):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), C: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, threads), threads=threads) as bx, iket.range("block"):
            iket.mark("enter", payload=iket.payload(bx, dtype="int32"))
            for i in T.Parallel(threads):
                if bx * threads + i < n:
                    iket.mark("store")
                    C[bx * threads + i] = A[bx * threads + i] + 1.0

    return main
