# ENV: TILESCALE_CUDA_ARCH=sm_90 TILESCALE_CUDA_MINBLOCKS=2
# ARGS: compile FILE --entry k --target cuda --dump-after arch_hints
# The blocks per SM a CUDA kernel is compiled for (__launch_bounds__'s
# second argument) are the IR's decision: pass arch_hints copies the
# target's number (TILESCALE_CUDA_MINBLOCKS) into IrKernel.min_blocks where
# no pass (ws_role_regs) chose one, and the CUDA printer prints
# k->min_blocks only (the listing's `min_blocks 2` line).
import tilelang.language as T


def k():
    @T.prim_func
    def main(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
        with T.Kernel(2, threads=128) as bx:
            for i in T.Parallel(128):
                B[bx * 128 + i] = A[bx * 128 + i] * 2.0

    return main
