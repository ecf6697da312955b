# ARGS: compile FILE --entry bw --target c --emit c
# A bitwise operator on floating-point values is a type error of the
# elaborator, at the operator (session 11: the printers' shared expression
# emitter refused it while printing; TVM refuses it too).
import tilelang.language as T


def bw():
    @T.prim_func
    def main(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            B[0] = B[1] & B[2]
            A[0] = A[1] & A[2]

    return main
