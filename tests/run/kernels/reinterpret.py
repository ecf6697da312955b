# T.reinterpret and TVM's tirx.const / reinterpret / Select / Cast (the
# kernels of tests/unit/test_reinterpret.c, which checks them bit for bit on
# the C target): here for tests/unit/test_interp_examples.c (the CUDA passes
# in the thread-level interpreter against the C target's) and for
# `tilescale compile --target cuda` (bench/gpu_covlang.sh runs them on a GPU).
import tilelang
import tilelang.language as T
@tilelang.jit
def bits(n, blk=64):
    @T.prim_func
    def main(X: T.Tensor((n,), "float32"), H: T.Tensor((n,), "float16"), B: T.Tensor((n,), "bfloat16"),
             I: T.Tensor((n,), "int8"), U: T.Tensor((n,), "uint32"), V: T.Tensor((n,), "int16"),
             XU: T.Tensor((n,), "uint32"), HU: T.Tensor((n,), "uint16"), BU: T.Tensor((n,), "int16"),
             IU: T.Tensor((n,), "uint8"), UF: T.Tensor((n,), "float32"), VH: T.Tensor((n,), "float16"),
             VB: T.Tensor((n,), "bfloat16"), K: T.Tensor((n,), "uint32")):
        with T.Kernel(T.ceildiv(n, blk), threads=64) as bx:
            for i in T.Parallel(blk):
                j = bx * blk + i
                if j < n:
                    XU[j] = T.reinterpret(X[j], T.uint32)
                    HU[j] = T.reinterpret(H[j], "uint16")
                    BU[j] = T.reinterpret(B[j], dtype=T.int16)
                    IU[j] = T.reinterpret(I[j] + T.int8(1), T.uint8)
                    UF[j] = T.reinterpret(U[j], T.float32) * 2.0
                    VH[j] = T.reinterpret(V[j], T.float16)
                    VB[j] = T.reinterpret(V[j], T.bfloat16)
                    x = X[j]
                    u = T.reinterpret(x, T.uint32)
                    K[j] = T.if_then_else(x < 0, ~u & T.cast(0xFFFFFFFF, T.uint32),
                                          u | T.cast(0x80000000, T.uint32))
    return main


from tvm import tirx
def u8_to_i8(nbit, val, pos, dtype):
    assert val.dtype == T.uint8
    mask = tirx.const((1 << nbit) - 1, T.uint8)
    i4 = (val >> (pos.astype(T.uint8) * tirx.const(nbit, T.uint8))) & mask
    i8_shifted = tirx.reinterpret(T.int8, i4 << tirx.const(4, T.uint8))
    return i8_shifted >> tirx.const(4, T.int8)
def u8_to_f16(nbit, val, pos, dtype):
    mask = tirx.const((1 << nbit) - 1, T.uint16)
    f4 = (val >> (pos.astype(T.uint16) * tirx.const(nbit, T.uint16))) & mask
    s = f4 >> tirx.const(3, T.uint16)
    e_f4 = (f4 & tirx.const(6, T.uint16)) >> tirx.const(1, T.uint16)
    e_f16 = e_f4 + tirx.const(14, T.uint16)
    m_f16 = f4 & tirx.const(1, T.uint16)
    return tirx.reinterpret(T.float16, ((e_f16 | (s << tirx.const(5, T.uint16))) << tirx.const(10, T.uint16)
                                        | m_f16 << tirx.const(9, T.uint16)).astype(T.uint16))
@tilelang.jit
def unpack(R, C):
    @T.prim_func
    def main(Q: T.Tensor((R, C // 2), "uint8"), O: T.Tensor((R, C), "int8"), F: T.Tensor((R, C), "float16"),
             S: T.Tensor((R, C), "float32")):
        with T.Kernel(R, threads=32) as bx:
            for j in T.Parallel(C):
                O[bx, j] = u8_to_i8(4, Q[bx, j // 2], j % 2, dtype=T.int8)
                F[bx, j] = u8_to_f16(4, Q[bx, j // 2], j % 2, dtype=T.float16)
                S[bx, j] = tirx.Select(j % 3 == 0, tirx.const(1.5), tirx.Cast(T.float32, j))
    return main
