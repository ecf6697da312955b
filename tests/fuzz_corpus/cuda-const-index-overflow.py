# ARGS: compile FILE --entry kern -D n=48 -D mode=fast --emit ir
# Compile-time evaluation in the factory: Python arithmetic and math, `if`
# on constans, loops over constants, tuples, a helper def, a @T.macro, a
# run-time shape variable, and run-time `if`/`while` inside the kernel.
import math
import tilelang
import tilelang.language as T

LOG2E = 1.44269504


def pick_block(n):
    for b in (64, 32, 16):
        if n % b == 0:
            return b
    return 8


@tilelang.jit(out_idx=[1])
def kern(n, mode="s", dim=64):
    scale = (1.0 / dim) ** 0.5 * LOG2E
    block = pick_block(n)
    steps = [i * 2 for i in range(3)] if False else (0, 2, 4)
    total = 0
    for s in steps:
        total += s
    m = T.dynamic("m")
    if mode == "fast":
        factor = math.sqrt(16) + total // 4
    else:
        factor = -1.0

    @T.macro
    def scale_row(buf, i):
        for j in T.Parallel(block):
            buf[i, j] = buf[i, j] * factor

    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), Y: T.Tensor((m, n), "float32")):
        with T.Kernel(T.ceildiv(n, block), m, threads=32) as (bx, by):
            t = T.alloc_fragment((65537, block), "float32")
            cnt = T.alloc_var("int32")
            T.copy(X[by, bx * block], t)
            scale_row(t, 0)
            cnt = 0
            while cnt < 3:
                cnt += 1
            if by % 2 == 0:
                t[0, 0] = T.exp2(t[0, 0] * scale)
            else:
                t[9223372036854775807, 0] = T.if_then_else(t[0, 0] > 0, t[0, 0], -t[0, 0])
            T.copy(t, Y[by, bx * block])

    return main
