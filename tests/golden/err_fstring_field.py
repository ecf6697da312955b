# ARGS: compile FILE --entry kern -D n=64 --target c
# An f-string field is an expression evaluated at compile time; an error in
# it points at the expression inside the string (here an undefined name),
# never leaves the field's text in the string.
import tilelang.language as T


def kern(n):
    name = f"block_{n * 2:04d}_{blocks}"

    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            A[0] = len(name)

    return main
