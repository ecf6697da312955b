# ARGS: compile FILE --entry scale -D N=64 -D factor=2.0 -D blocks=4
# Eager style: a -D value must name a parameter or a T.const shape.
import tilelang
import tilelang.language as T


@tilelang.jit
def scale(X, factor):
    N = T.const("N")
    X: T.Tensor((N,), "float32")
    Y = T.empty((N,), "float32")
    with T.Kernel(1) as bx:
        for i in T.Parallel(N):
            Y[i] = X[i] * factor
    return Y
