# ARGS: compile FILE --entry sink_rows -D heads=1
# An element store provably outside a fragment is a compile-time error
# (pass check_bounds), named by buffer, index and extent.  TileLang's
# attention-sink backward examples write `sinks[i]` for every row i of
# T.Parallel(block_M) into `sinks = T.alloc_fragment([heads])`: indexed at
# the loop's own variable, the fragment takes the loop's layout in TileLang
# and is widened to the loop's extent here (pass widen_fragments, with a
# warning; tests/run/widen_fragments.sh).  Any other index past the extent
# (here i + 1, a row below: no loop layout covers it) stays an error.
import tilelang.language as T


def sink_rows(heads, block_M=64):
    @T.prim_func
    def main(Sinks: T.Tensor((heads,), "float32"), Out: T.Tensor((heads, block_M), "float32")):
        with T.Kernel(heads, threads=128) as by:
            sinks = T.alloc_fragment([heads], "float32")
            for i in T.Parallel(block_M):
                sinks[i + 1] = Sinks[by]
            for i in T.Parallel(block_M):
                Out[by, i] = sinks[0] * i

    return main
