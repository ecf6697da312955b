# ARGS: compile FILE --entry main --target c --emit c
# A tensor-memory tile stored to element by element under a branch on the
# thread index (per-thread code, no tile op: not a role): refused by pass
# lower_tmem on every target, naming the branch's line.
import tilelang.language as T

@T.prim_func
def main(C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=64) as bx:
        c_tm = T.alloc_tmem([64, 64], "float32")
        c_l = T.alloc_fragment((64, 64), "float32")
        tid = T.get_thread_binding()
        if tid < 32:
            c_tm[tid, 0] = 1.0
        T.copy(c_tm, c_l)
        T.copy(c_l, C)
