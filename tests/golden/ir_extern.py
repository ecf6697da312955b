# ARGS: compile FILE --entry ext_demo --target cuda --emit ir
# ENV: TILESCALE_CUDA_ARCH=sm_90
# External CUDA source (session 10): T.import_source records the text on the
# kernel once (imported twice here: `import` in the dump, once), T.call_extern
# is an extern.call node with its arguments' dtypes, T.access_ptr and
# T.address_of are extern.addr nodes of a local element (the local buffers
# get align 16), a call with dtype "handle" or alone on its line is a
# statement, one with an int32 dtype a value.  cuda_extern.py pins the CUDA
# text of the same kernel; test_cuda_nvrtc compiles and checks it.
import tilelang.language as T

SRC = """
// two small device functions of our own (not TileLang's)
__device__ int mix3(int a, int b) { return a * 3 + b; }
template <typename T1, typename T2>
__device__ void add_pairs(const T1 *x, T2 *y, const int n) {
  for (int i = 0; i < n; i++) y[i] = x[2 * i] + x[2 * i + 1];
}
"""


def ext_demo(M=64):
    @T.prim_func
    def main(A: T.Tensor((M, 8), "int32"), B: T.Tensor((M, 4), "int32"), C: T.Tensor((M,), "int32")):
        with T.Kernel(1, threads=M) as bx:
            T.import_source(SRC)
            T.import_source(SRC)
            T.import_source(None)
            a = T.alloc_local((8,), "int32")
            b = T.alloc_local((4,), "int32")
            t = T.get_thread_binding()
            for i in T.vectorized(8):
                a[i] = A[t, i]
            T.call_extern("handle", "add_pairs", T.access_ptr(a, "r"), T.access_ptr(b, "w"), 2)
            T.call_extern("add_pairs", T.address_of(a[4]), T.access_ptr(b, "w", offset=2), 2, dtype="int32")
            for i in T.vectorized(4):
                B[t, i] = b[i]
            C[t] = T.call_extern("int32", "mix3", a[0], b[0] + bx)

    return main
