# ARGS: compile FILE --entry sink_rows -D heads=1
# An element store provably outside a fragment is a compile-time error
# (pass check_bounds), named by buffer, index and extent: TileLang's
# attention-sink backward examples allocate sinks = T.alloc_fragment([heads])
# and write sinks[i] for every row i of the tile, so with heads = 1 every
# row but the first lands outside (the generated CUDA computed garbage).
import tilelang.language as T


def sink_rows(heads, block_M=64):
    @T.prim_func
    def main(Sinks: T.Tensor((heads,), "float32"), Out: T.Tensor((heads, block_M), "float32")):
        with T.Kernel(heads, threads=128) as by:
            sinks = T.alloc_fragment([heads], "float32")
            for i in T.Parallel(block_M):
                sinks[i] = Sinks[by]
            for i in T.Parallel(block_M):
                Out[by, i] = sinks[0] * i

    return main
