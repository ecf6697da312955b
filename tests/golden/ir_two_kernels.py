# ARGS: compile FILE --entry kern -D n=64 --dump-after simplify
# A prim_func with two T.Kernel blocks is a chain of two kernels launched in
# order on the same parameters; names bound in the first do not exist in the
# second.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1, 2])
def kern(n, block=32):
    @T.prim_func
    def main(X: T.Tensor((n,), "float32"), Part: T.Tensor((n // block,), "float32"), Y: T.Tensor((1,), "float32")):
        with T.Kernel(n // block) as bx:
            t = T.alloc_fragment((block,), "float32")
            s = T.alloc_fragment((1,), "float32")
            T.copy(X[bx * block], t)
            T.reduce_sum(t, s, dim=0)
            Part[bx] = s[0]
        with T.Kernel(1) as bx:
            acc = T.alloc_var("float32")
            acc = 0.0
            for i in T.serial(n // block):
                acc += Part[i]
            Y[0] = acc

    return main
