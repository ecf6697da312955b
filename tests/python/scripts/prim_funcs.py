# A TileLang-style script for test_tilelang_shim.py: prim_funcs Python itself builds.
import numpy as np
import tilelang
import tilelang.language as T

M, N = 16, 24
dtype = "float32"

@T.prim_func
def top(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
    with T.Kernel(M, threads=32) as i:
        for j in T.Parallel(N):
            B[i, j] = A[i, j] * 2.0

def main():
    scale = 3.0
    def factory(m, n, block=8):
        rows = m  # Python code in the factory body
        @T.prim_func
        def kern(A: T.Tensor((rows, n), "float32"), B: T.Tensor((rows, n), "float32")):
            with T.Kernel(T.ceildiv(rows, block), threads=32) as bx:
                for i, j in T.Parallel(block, n):
                    if bx * block + i < rows:
                        B[bx * block + i, j] = A[bx * block + i, j] * scale
        return kern
    a = np.random.randn(20, 12).astype(np.float32)
    k = tilelang.compile(factory(20, 12), out_idx=[1], target="c")
    np.testing.assert_allclose(k(a), a * 3.0, rtol=1e-6)
    k2 = tilelang.compile(top, out_idx=[1], target="c")
    a2 = np.random.randn(M, N).astype(np.float32)
    np.testing.assert_allclose(k2(a2), a2 * 2.0, rtol=1e-6)
    print("ok")

if __name__ == "__main__":
    main()
