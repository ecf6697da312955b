# ARGS: compile FILE --entry kern -D n=48 -D dtype=float16 --target c --emit ir
# Python a factory runs at compile time (issue 8 D): comprehensions (list,
# generator, dict, nested clauses with conditions), str methods and
# f-strings (any expression, !r, fill/align/width/precision specs) on dtypes
# and numbers, isinstance, int.bit_length, x.astype(dt), tvm.DataType(...).bits, a -D string equal to its dtype ("float16" ==
# T.float16), and TVM's lowercase T.parallel loop.  Each result lands in the
# IR as a constant or an extent, so the .out pins it.
import tvm
import tilelang.language as T


def kern(n, dtype):
    assert dtype in [T.float16, T.bfloat16], "dtype must be a 16-bit float"
    sizes = [b * 2 for b in range(1, 5) if b != 3]            # [2, 4, 8]
    total = sum(s for s in sizes)                              # 14
    pairs = [(i, j) for i in range(3) for j in range(i)]       # 3 pairs
    widths = {name: len(name) for name in ("ab", "cde")}       # {'ab': 2, 'cde': 3}
    bits = tvm.DataType(dtype).bits                            # 16
    digits = int("".join(c for c in dtype if c.isdigit()))     # 16
    half = 0.5
    tag = f"{dtype}_{n:04d}_{bits:b}_{half:.2f}".upper()       # FLOAT16_0048_10000_0.50
    tag2 = f"{n * 2 + len(sizes)!r:>6}|{ {'a': 1}['a'] }|{dtype!r}"    # "    99|1|'float16'"
    parts = "a, b ,c".replace(" ", "").split(",")              # ['a', 'b', 'c']
    ok = tag.startswith("FLOAT16") and isinstance(n, int) and not isinstance(n, (str, float))
    shift = n.bit_length()                                     # 6

    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((total + len(pairs) + widths["cde"],), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.parallel(4, 8):
                B[i] = A[i].astype("float32") * digits + bits
            B[0] = len(tag) + len(parts) * 100 + shift * 1000
            B[1] = 1 if ok else -1
            B[2] = len(str(0.5)) + len(f"{sizes}") + len(tag2) * 100

    return main
