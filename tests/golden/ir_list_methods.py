# ARGS: compile FILE --entry kern --emit ir
# Host code building a list before the kernel (TileLang's grouped GEMM
# computes its tile offsets so): append, extend, pop change the list in
# place; the kernel sees the final values as constants.
import tilelang.language as T


def kern(sizes=(5, 9, 13), block=4):
    offs = [0]
    alias = offs
    for s in sizes[:-1]:
        offs.append(offs[-1] + (s + block - 1) // block)
    alias.extend([100, 200])
    last = offs.pop()
    offs.pop(0)

    @T.prim_func
    def main(O: T.Tensor((8,), "int32")):
        with T.Kernel(1) as bx:
            for i in T.serial(len(offs)):
                O[i] = T.int32(offs[0]) + i * T.int32(last)

    return main
