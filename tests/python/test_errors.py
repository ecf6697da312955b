"""Bad inputs raise exceptions carrying the library's diagnostic, never
crash: compile errors (syntax, missing entry, missing or unknown
compile-time value, bad file), and launch errors (wrong dtype, rank,
extents, argument count, objects that are not arrays, unsupported
dtypes, unaddressable strides, wrong devices), after each of which the
kernel still runs correctly."""
import os

import numpy as np
import pytest

import tilescale

SRC = """
import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1])
def add(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(M, threads=32) as i:
            for j in T.Parallel(N):
                C[i, j] = A[i, j] + B[i, j]
    return main
"""


@pytest.fixture(scope="module")
def k():
    return tilescale.compile(SRC, "add", target="c", M=8, N=12)


def ok(k, rng):
    a = rng.standard_normal((8, 12), dtype=np.float32)
    b = rng.standard_normal((8, 12), dtype=np.float32)
    np.testing.assert_array_equal(k(a, b), a + b)


def test_compile_errors(root):
    with pytest.raises(tilescale.CompileError) as e:
        tilescale.compile(SRC, "nope", M=1, N=1)
    assert e.value.status_name == "TS_ERR_NAME"
    assert "no function 'nope'" in str(e.value) and "add" in str(e.value)
    with pytest.raises(tilescale.CompileError) as e:
        tilescale.compile(SRC, "add", M=4)
    assert e.value.status_name == "TS_ERR_PARAM" and "N" in str(e.value)
    with pytest.raises(tilescale.CompileError) as e:
        tilescale.compile(SRC, "add", M=4, N=4, Q=1)
    assert "Q" in str(e.value)
    with pytest.raises(tilescale.CompileError) as e:
        tilescale.compile(SRC.replace("C[i, j] =", "C[i, j] = = "), "add", M=4, N=4)
    assert e.value.status_name == "TS_ERR_SYNTAX"
    assert "<source>:11:" in str(e.value) and "^" in str(e.value)  # file:line:col, caret
    with pytest.raises(tilescale.CompileError) as e:
        tilescale.compile(os.path.join(root, "no/such/file.py"), "add")
    assert e.value.status_name == "TS_ERR_IO"
    with pytest.raises(TypeError):
        tilescale.compile(SRC, None)
    with pytest.raises(TypeError):
        tilescale.compile(SRC, "add", M=object(), N=2)
    with pytest.raises(ValueError):
        tilescale.compile(SRC, "add", target="tpu", M=2, N=2)


def test_compile_warning(root):
    """The compiler's warnings become tilescale.CompileWarning (the library's
    `file:line:col: warning:` text); a kernel without any gives none."""
    path = os.path.join(root, "tests/golden/ir_layout_conflict.py")
    with pytest.warns(tilescale.CompileWarning) as rec:
        tilescale.compile(path, "twoacc", target="cuda", options={"skip_build": 1}, M=64, N=64, K=32)
    msgs = [str(r.message) for r in rec if issubclass(r.category, tilescale.CompileWarning)]
    assert len(msgs) == 1
    assert "ir_layout_conflict.py:23:15: warning: fragment Cl needs two layouts" in msgs[0]
    assert "(at " in msgs[0] and "ir_layout_conflict.py:22:15)" in msgs[0] and "^" in msgs[0]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", tilescale.CompileWarning)
        tilescale.compile(SRC, "add", target="cuda", options={"skip_build": 1}, M=8, N=12)


def test_cuda_target_without_a_device(rng):
    if tilescale.cuda_available():
        pytest.skip("a CUDA device is usable here")
    try:
        k = tilescale.compile(SRC, "add", target="cuda", M=8, N=12)
    except tilescale.CompileError as e:  # no NVRTC on this machine
        assert e.status_name == "TS_ERR_BUILD"
        return
    assert "__global__" in k.get_kernel_source() and k.shared_memory == 0
    a = rng.standard_normal((8, 12), dtype=np.float32)
    with pytest.raises(tilescale.RuntimeLaunchError) as e:
        k(a, a)  # host arrays on the CUDA target: no driver here
    assert "CUDA" in str(e.value)


def test_launch_errors(k, rng):
    a = rng.standard_normal((8, 12), dtype=np.float32)
    cases = [
        ((a.astype(np.float64), a), tilescale.DTypeError, "dtype float64, expected float32"),
        ((a.astype(np.int32), a), TypeError, "dtype int32"),
        ((a[:4], a), tilescale.ShapeError, "shape[0] is 4, expected 8"),
        ((a.reshape(96), a), ValueError, "1 dimension"),
        ((a.reshape(2, 4, 12), a), tilescale.ShapeError, "3 dimensions"),
        ((a,), tilescale.ArgumentError, "expects 2"),
        ((a, a, a, a), TypeError, "expects 2"),
        ((a, [[1.0] * 12] * 8), tilescale.ArgumentError, "NumPy array"),
        ((a, None), tilescale.ArgumentError, "NoneType"),
        ((a, a.astype(np.complex64)), tilescale.ArgumentError, "complex64"),
    ]
    for args, exc, text in cases:
        with pytest.raises(exc) as e:
            k(*args)
        assert text in str(e.value), (text, str(e.value))
        assert isinstance(e.value, tilescale.TileScaleError)
        ok(k, rng)  # the kernel still works after every error


def test_unaddressable_strides(k, rng):
    rec = np.zeros((8, 12), dtype=[("x", "<f4"), ("y", "u1")])  # element stride 5 bytes
    with pytest.raises(tilescale.ArgumentError):
        k(rec["x"], rec["x"])
    ok(k, rng)


def test_output_shape_errors(k, rng):
    a = rng.standard_normal((8, 12), dtype=np.float32)
    with pytest.raises(tilescale.ShapeError):
        k(a, a, np.empty((8, 11), np.float32))
    ok(k, rng)


def test_random_garbage_never_crashes(k, rng):
    junk = [0, 1.5, "x", b"y", (), {}, np.float32(1), np.zeros(()), np.zeros((0, 12), np.float32),
            np.zeros((8, 12), np.float16), np.zeros((12, 8), np.float32).T, object()]
    for _ in range(200):
        n = int(rng.integers(0, 4))
        args = [junk[int(rng.integers(0, len(junk)))] for _ in range(n)]
        try:
            k(*args)
        except tilescale.TileScaleError:
            pass
    ok(k, rng)


class _Broken:
    """Objects that claim an array protocol but break it."""

    def __init__(self, which):
        if which == "ai":
            self.__array_interface__ = {"shape": (8, 12)}  # no data, no typestr
        elif which == "cai":
            self.__cuda_array_interface__ = {"typestr": "<f4", "shape": "x", "data": (0, False)}
        else:
            self.__dlpack_device__ = lambda: (1, 0)
            self.__dlpack__ = lambda stream=None: "not a capsule"


def test_broken_array_protocols(k, rng):
    a = rng.standard_normal((8, 12), dtype=np.float32)
    for which in ("ai", "cai", "dlpack"):
        with pytest.raises(tilescale.ArgumentError):
            k(_Broken(which), a)
    ok(k, rng)


OOB = """
import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1])
def shift(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=1) as bx:
            for i in T.serial(N):
                B[i + 1] = A[i]
    return main
"""


def test_out_of_bounds_access_is_an_exception(rng):
    k = tilescale.compile(OOB, "shift", target="c", N=16, options={"check_bounds": 1})
    with pytest.raises(tilescale.RuntimeLaunchError) as e:
        k(rng.standard_normal(16, dtype=np.float32))
    assert "B" in str(e.value) and "16" in str(e.value), str(e.value)


def test_widened_fragment_warning(root, rng):
    """A fragment indexed by a T.Parallel loop's own variable past its
    declared extent (TileLang's attention-sink `sinks[i]`) is widened to the
    loop's extent with a CompileWarning at the access, and computes what
    TileLang computes there: each row's own value (against NumPy)."""
    path = os.path.join(root, "tests/run/kernels/widen_frag.py")
    with pytest.warns(tilescale.CompileWarning) as rec:
        k = tilescale.compile(path, "sink_rows", target="c", heads=3, block_M=16, N=8)
    msgs = [str(r.message) for r in rec if issubclass(r.category, tilescale.CompileWarning)]
    assert len(msgs) == 1
    assert "widen_frag.py:32:17: warning: fragment 'sinks' is declared [3]" in msgs[0]
    assert "over [16]: it is widened to [16]" in msgs[0] and "^" in msgs[0]
    x = rng.standard_normal((3, 16, 8)).astype(np.float32)
    s = rng.standard_normal(3).astype(np.float32)
    out, l = k(x, s)
    sinks = s[:, None] + 0.5 * np.arange(16, dtype=np.float32)[None, :]
    l_ref = x.sum(axis=2) + np.exp2(sinks * 0.125)
    np.testing.assert_allclose(l, l_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out, x * sinks[:, :, None] + l_ref[:, :, None], rtol=1e-5, atol=1e-5)
