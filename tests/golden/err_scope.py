# ARGS: compile FILE --entry kern -D n=4
# A Python name assigned under a run-time condition has no single value
# after it; using it there is an error (not the last branch's value).
import tilelang.language as T


def kern(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(2) as bx:
            if bx > 0:
                v = 3.0
            else:
                v = 4.0
            A[0] = v

    return main
