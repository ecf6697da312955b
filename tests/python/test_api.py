"""The tilescale package on the C target with NumPy arrays: compile from a
file, from source text, from a function; @tilescale.jit (factory and eager
style); results against NumPy references on fresh random data with outputs
poisoned first; kernel queries; strided arrays; scalars; profile."""
import os
import sys

import numpy as np
import pytest

import tilescale

ADD = """
import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1])
def add(M, N, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, 16), threads=64) as bx:
            for i, j in T.Parallel(16, N):
                if bx * 16 + i < M:
                    C[bx * 16 + i, j] = A[bx * 16 + i, j] + B[bx * 16 + i, j]
    return main

@tilelang.jit(out_idx=[-1])
def axpb(N):
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), a: T.float32, b: T.int32, Y: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=1) as bx:
            for i in T.serial(N):
                Y[i] = X[i] * a + b
    return main

@tilelang.jit(out_idx=[-1])
def rowsum(dtype="float32"):
    n = T.dynamic("n")
    m = T.dynamic("m")
    @T.prim_func
    def main(A: T.Tensor((n, m), dtype), S: T.Tensor((n,), dtype)):
        with T.Kernel(n, threads=1) as i:
            acc = T.alloc_var(dtype)
            acc = 0
            for j in T.serial(m):
                acc += A[i, j]
            S[i] = acc
    return main
"""


def poison(shape, dtype):
    out = np.empty(shape, dtype=dtype)
    out[...] = np.nan
    return out


def test_compile_file_and_run(root, rng):
    k = tilescale.compile(os.path.join(root, "examples/elementwise_add.py"), "elementwise_add", target="c",
                          M=100, N=200)
    assert k.target == "c"
    assert [p.name for p in k.params] == ["A", "B", "C"]
    assert k.out_idx == [2]
    assert k.params[0].shape == (100, 200) and k.params[0].dtype == "float32"
    assert k.grid == (4, 4, 1) and k.threads == 128
    a = rng.standard_normal((100, 200), dtype=np.float32)
    b = rng.standard_normal((100, 200), dtype=np.float32)
    c = k(a, b)
    assert c.shape == (100, 200) and c.dtype == np.float32
    np.testing.assert_array_equal(c, a + b)
    # all arguments given: written in place (poisoned first)
    c2 = poison((100, 200), np.float32)
    k(a, b, c2)
    np.testing.assert_array_equal(c2, a + b)
    src = k.get_kernel_source()
    assert "elem_add" in src


def test_gemm_float16(root, rng):
    k = tilescale.compile(os.path.join(root, "examples/gemm.py"), "matmul", target="c", M=64, N=48, K=80,
                          block_M=32, block_N=16, block_K=16)
    a = rng.standard_normal((64, 80)).astype(np.float16)
    b = rng.standard_normal((80, 48)).astype(np.float16)
    c = k(a, b)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=2e-2, atol=2e-2)


def test_source_text_scalars_and_dynamic(rng):
    k = tilescale.compile(ADD, "axpb", N=37)
    x = rng.standard_normal(37, dtype=np.float32)
    np.testing.assert_allclose(k(x, 1.5, 3), x * np.float32(1.5) + 3, rtol=1e-6)
    np.testing.assert_allclose(k(x, np.float32(-2.0), np.int64(7)), x * -2 + 7, rtol=1e-6)
    # a float for an int parameter is refused by the launcher
    with pytest.raises(tilescale.DTypeError):
        k(x, 1.0, 2.5)
    r = tilescale.compile(ADD, "rowsum")
    assert r.params[0].shape == ("n", "m")
    for n, m in ((5, 9), (17, 3)):
        a = rng.standard_normal((n, m), dtype=np.float32)
        s = r(a)  # the output's extent n is bound from A
        assert s.shape == (n,)
        np.testing.assert_allclose(s, a.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_strided_arrays(rng):
    k = tilescale.compile(ADD, "add", M=33, N=20)
    big = rng.standard_normal((20, 66), dtype=np.float32)
    a = big.T[::2]                     # (33, 20), strides (2, 66) elements
    b = rng.standard_normal((33, 40), dtype=np.float32)[:, ::-2]  # negative strides
    assert not a.flags.c_contiguous and not b.flags.c_contiguous
    c = poison((33, 40), np.float32)[:, ::2]
    k(a, b, c)
    np.testing.assert_array_equal(c, a + b)
    np.testing.assert_array_equal(k(a, b), a + b)


def test_compile_function_and_jit(rng):
    import tilescale.tilelang as tilelang
    T = tilelang.language

    @tilescale.jit(out_idx=[-1])
    def scale(N, s=2.0):
        @T.prim_func
        def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
            with T.Kernel(1, threads=32) as i:
                for j in T.Parallel(N):
                    B[j] = A[j] * s
        return main

    a = rng.standard_normal(50, dtype=np.float32)
    k1 = scale(50)
    assert scale(50) is k1  # cached per set of values
    np.testing.assert_allclose(k1(a), a * 2, rtol=1e-6)
    np.testing.assert_allclose(scale(50, s=-0.5)(a), a * -0.5, rtol=1e-6)
    k2 = tilescale.compile(scale.func, N=50, s=3.0)
    np.testing.assert_allclose(k2(a), a * 3, rtol=1e-6)


def test_eager_jit(root, rng):
    import importlib.util
    import sys
    from tilescale.tilelang import _stub
    _stub.install()
    spec = importlib.util.spec_from_file_location("ts_gemm_example", os.path.join(root, "examples/gemm.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.matmul_eager.target = "c"  # NumPy arrays: the C target, GPU or not
    a = rng.standard_normal((32, 48)).astype(np.float16)
    b = rng.standard_normal((48, 16)).astype(np.float16)
    c = mod.matmul_eager(a, b, 16, 16, 16)
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32), rtol=2e-2,
                               atol=2e-2)
    sys.modules.pop("ts_gemm_example", None)


def test_kernel_chain(root, rng):
    k = tilescale.compile(os.path.join(root, "examples/splitk_gemm.py"), "splitk_gemm", M=32, N=32, K=64,
                          splits=2)
    assert k.get_kernel_source().count("Generated by TileScale") >= 2


def test_profile_and_profiler(rng):
    k = tilescale.compile(ADD, "add", M=64, N=32)
    t = k.profile(warmup=1, rep=5)
    assert t > 0
    a = rng.standard_normal((64, 32), dtype=np.float32)
    assert k.do_bench(a, a, warmup=1, rep=5) > 0
    prof = k.get_profiler()
    prof.assert_allclose(lambda x, y: x + y)
    with pytest.raises(AssertionError):
        prof.assert_allclose(lambda x, y: x - y + 1)
    assert tilescale.do_bench(lambda: k(a, a), warmup=1, rep=3) > 0


def test_options_and_ir():
    k = tilescale.compile(ADD, "add", M=16, N=16, options={"timing": 1, "num_threads": 1})
    assert "parse" in tilescale._lib.kernel_timing(k._default().k).decode()
    assert "add" in k.get_ir() or k.get_ir()


def test_call_patterns_reuse_records(rng):
    """Launch records are reused between calls (only what changed is
    rewritten): any sequence of contiguous / strided / allocated-output /
    wrong-rank calls must give the same results as fresh ones."""
    k = tilescale.compile(ADD, "add", M=24, N=20)
    r = tilescale.compile(ADD, "rowsum")

    def views():
        a = rng.standard_normal((24, 20), dtype=np.float32)
        yield a, a
        big = rng.standard_normal((48, 60), dtype=np.float32)
        yield big[::2, 10:30], big[::2, 10:30].copy()
        t = rng.standard_normal((20, 24), dtype=np.float32).T
        yield t, t.copy()

    for _ in range(30):
        mode = int(rng.integers(0, 4))
        (a, a_ref), (b, b_ref) = [list(views())[int(rng.integers(0, 3))] for _ in range(2)]
        if mode == 0:
            np.testing.assert_array_equal(k(a, b), a_ref + b_ref)
        elif mode == 1:
            c = poison((24, 40), np.float32)[:, ::2] if rng.integers(0, 2) else poison((24, 20), np.float32)
            k(a, b, c)
            np.testing.assert_array_equal(c, a_ref + b_ref)
        elif mode == 2:
            with pytest.raises(tilescale.ShapeError):
                k(a.reshape(-1) if a.flags.c_contiguous else a[0], b)
        else:
            n, m = int(rng.integers(1, 9)), int(rng.integers(1, 9))
            x = rng.standard_normal((n, m), dtype=np.float32)
            np.testing.assert_allclose(r(x), x.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_plot_layouts(root, tmp_path):
    """kernel.plot_layouts: SVG pictures of the CUDA target's fragment
    layouts (drawn without NVRTC too) and of shared-memory swizzles."""
    k = tilescale.compile(os.path.join(root, "examples/gemm.py"), "matmul", target="c", M=128, N=128, K=64,
                          block_M=64, block_N=64, block_K=32)
    files = k.plot_layouts(tmp_path / "p", target="cuda")
    names = sorted(os.path.basename(f) for f in files)
    assert "main_C_local.svg" in names and "main_A_shared.svg" in names, names
    text = open(os.path.join(tmp_path, "p", "main_C_local.svg")).read()
    assert text.startswith("<?xml") and text.rstrip().endswith("</svg>") and "mma_c" in text
    with pytest.raises(tilescale.TileScaleError) as e:
        k.plot_layouts("/proc/no/such/dir", target="cuda")
    assert e.value.status_name == "TS_ERR_IO"


class _DLPackOnly:
    """An array known only through DLPack (as a JAX or CuPy array is)."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


class _InterfaceOnly:
    """An array known only through the array interface."""

    def __init__(self, a, cuda=False):
        self._a = a
        ai = dict(a.__array_interface__)
        if cuda:
            self.__cuda_array_interface__ = ai
        else:
            self.__array_interface__ = ai


def test_other_array_protocols(rng):
    k = tilescale.compile(ADD, "add", target="c", M=24, N=20)
    a = rng.standard_normal((24, 20), dtype=np.float32)
    b = rng.standard_normal((48, 20), dtype=np.float32)[::2]  # strided
    np.testing.assert_array_equal(k(_DLPackOnly(a), _DLPackOnly(b)), a + b)
    np.testing.assert_array_equal(k(_InterfaceOnly(a), _InterfaceOnly(b)), a + b)
    c = poison((24, 20), np.float32)
    k(_DLPackOnly(a), b, _InterfaceOnly(c))
    np.testing.assert_array_equal(c, a + b)
    with pytest.raises(tilescale.DTypeError):
        k(_DLPackOnly(a.astype(np.float64)), b)
    # CUDA memory (CUDA array interface) for a kernel compiled for the C target: refused before any launch
    with pytest.raises(tilescale.DeviceError):
        k(_InterfaceOnly(a, cuda=True), _InterfaceOnly(b, cuda=True))
    with pytest.raises(tilescale.DeviceError):
        k(a, _InterfaceOnly(b, cuda=True))


def test_ctypes_mirrors_match_the_header():
    """The ctypes structs in _lib.py have the sizes of include/tilescale.h's
    (a field added to the header must be added to the mirror too)."""
    assert tilescale._lib.abi_mismatches() == []
    for name in (b"TsTensor", b"TsDefine", b"TsCompileOptions", b"TsParamInfo"):
        assert tilescale._lib.abi_sizeof(name) > 0
    assert tilescale._lib.abi_sizeof(b"nothing") == 0


SEQ = """
import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1])
def grouped_scale(sizes, scales, N=16):
    total = sum(sizes)
    groups = [(g, sum(sizes[:g]), sizes[g], scales[g]) for g in range(len(sizes))]

    @T.prim_func
    def main(A: T.Tensor((total, N), "float32"), B: T.Tensor((total, N), "float32")):
        with T.Kernel(len(sizes), threads=32) as bx:
            for g, off, n, s in groups:  # a list: unrolled at compile time
                if bx == g:
                    for i, j in T.Parallel(n, N):
                        B[off + i, j] = A[off + i, j] * s
    return main
"""


@pytest.mark.parametrize("sizes, scales", [([3, 5, 2], (2.0, -1.0, 0.5)), ((4,), [3.0])])
def test_sequence_parameters(rng, sizes, scales):
    """Tuples and lists as compile-time values (TileLang's grouped GEMM takes its batch sizes so)."""
    k = tilescale.compile(SEQ, "grouped_scale", target="c", sizes=sizes, scales=scales)
    total = sum(sizes)
    a = rng.standard_normal((total, 16)).astype(np.float32)
    want = np.concatenate([a[sum(sizes[:g]):sum(sizes[:g]) + n] * s for g, (n, s) in enumerate(zip(sizes, scales))])
    np.testing.assert_allclose(k(a), want, rtol=1e-6)
    with pytest.raises(TypeError):
        tilescale.compile(SEQ, "grouped_scale", target="c", sizes=[3, object()], scales=[1.0, 1.0])


COMPUTED_OUT = """
import tilelang
import tilelang.language as T

@tilelang.jit
def every_kth(X, k=8, blk=4):
    M, N = T.const("M, N")
    X: T.Tensor((M, N), "float32")
    Y = T.empty((M, T.ceildiv(N, k)), "float32")
    with T.Kernel(T.ceildiv(M, blk), threads=32) as bx:
        for i, j in T.Parallel(blk, T.ceildiv(N, k)):
            if bx * blk + i < M:
                Y[bx * blk + i, j] = X[bx * blk + i, j * k]
    return Y
"""


@pytest.mark.parametrize("shape", [(10, 20), (3, 8), (7, 1)])
def test_output_extent_computed_from_inputs(rng, shape):
    """An output whose extent is an expression of the inputs' (T.ceildiv(N, k), TileLang's
    per-token cast examples) is allocated: the extent's text (ts_kernel_param_extent)
    evaluated with the input extents."""
    k = tilescale.compile(COMPUTED_OUT, "every_kth", target="c")
    assert k.params[1].shape[1] not in ("?", "N")
    x = rng.standard_normal(shape).astype(np.float32)
    y = k(x)
    assert y.shape == (shape[0], -(-shape[1] // 8))
    np.testing.assert_array_equal(y, x[:, ::8])


def test_tfloat32_is_float32_storage(tmp_path):
    """T.tfloat32 (TileLang's tensor-core float32) is float32 storage here, its gemm in full float32."""
    src = """
import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1])
def mm(M, N, K):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.tfloat32), B: T.Tensor((K, N), T.tfloat32), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=32) as bx:
            A_s = T.alloc_shared((M, K), T.tfloat32)
            B_s = T.alloc_shared((K, N), T.tfloat32)
            C_l = T.alloc_fragment((M, N), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.clear(C_l)
            T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C)
    return main
"""
    k = tilescale.compile(src, "mm", target="c", M=16, N=8, K=24)
    assert [p.dtype for p in k.params] == ["float32"] * 3
    rng = np.random.default_rng(11)
    a = rng.standard_normal((16, 24)).astype(np.float32)
    b = rng.standard_normal((24, 8)).astype(np.float32)
    c = k(a, b)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)


def test_cli_found_beside_the_interpreter(tmp_path, monkeypatch):
    """`venv/bin/python -m tilescale list ...` without activating the venv: the
    command line tool is found in the interpreter's scripts directory, where
    `pip install .` puts it, though it is not on PATH."""
    import sysconfig
    from tilescale import __main__ as main_mod, _lib
    exe = tmp_path / "tilescale"
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    real = sysconfig.get_path
    monkeypatch.setattr(_lib, "path", str(tmp_path / "elsewhere" / "libtilescale.so"))
    monkeypatch.setattr(sysconfig, "get_path", lambda name, *a, **k: str(tmp_path) if name == "scripts" else real(name, *a, **k))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "elsewhere" / "python"))
    monkeypatch.setenv("PATH", "")
    assert main_mod.cli_path() == str(exe)
    exe.unlink()
    with pytest.raises(SystemExit, match="command line tool was not found"):
        main_mod.cli_path()


def test_get_tir_of_a_kernel_cuda_cannot_launch():
    """jit_func.get_tir(...) of a kernel whose grid CUDA refuses (70000 blocks in y): as
    TileLang, which builds the TIR without launching, the IR comes back (the C
    target's, not built); compiling it for CUDA gives a CompileWarning naming the
    grid (da2b1ef: a launch of it is refused, tests/run/cuda_limits.sh)."""
    import tilescale.tilelang as tilelang
    T = tilelang.language

    @tilescale.jit(target="cuda")
    def big(M):
        @T.prim_func
        def main(A: T.Tensor((M, 4), "float32")):
            with T.Kernel(1, M, threads=32) as (bx, by):
                for j in T.Parallel(4):
                    A[by, j] = A[by, j] + 1.0
        return main

    with pytest.warns(tilescale.CompileWarning, match="a grid of 70000 blocks in y is more than CUDA allows"):
        try:
            big.compile(M=70000)
        except tilescale.CompileError as e:  # no NVRTC here: the build fails after the warning
            assert e.status_name == "TS_ERR_BUILD", str(e)
    ir = big.get_tir(M=70000)
    assert "kernel main" in ir and "70000" in ir
