# ARGS: compile FILE --entry ext_c --target c --emit c
# External CUDA source (T.import_source / T.call_extern) cannot run on the C
# target (nor in the interpreters): the kernel is refused at its first
# T.import_source, with the kernel's name (it compiles for CUDA:
# ir_extern.py, cuda_extern.py).
import tilelang.language as T

SRC = """
__device__ int twice(int x) { return 2 * x; }
"""


def ext_c(M=32):
    @T.prim_func
    def main(A: T.Tensor((M,), "int32")):
        with T.Kernel(1, threads=M) as bx:
            t = T.get_thread_binding()
            T.import_source(SRC)
            A[t] = T.call_extern("int32", "twice", A[t])

    return main
