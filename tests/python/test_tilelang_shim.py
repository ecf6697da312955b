"""`python -m tilescale SCRIPT` runs TileLang-style scripts unchanged on the
C target: `import tilelang`, `tilelang.language as T`, tilelang.testing's
runner and asserts, the profiler, @autotune (pass-through and real),
AutoTuner, tilelang.compile of a prim_func built by calling a factory, and
submodules we do not have (tilelang.layout, tvm) as permissive stubs."""
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent('''
    import sys
    import numpy as np
    import tilelang
    import tilelang.language as T
    import tilelang.testing
    from tilelang import tvm as tvm
    from tilelang.autotuner import autotune, AutoTuner
    from tilelang.layout import make_swizzled_layout  # noqa: F401  (a stub)
    from tilelang.profiler import TensorSupplyType

    M0 = 48

    def matmul(M, N, K, block_M, block_N, block_K, dtype=T.float16, accum_dtype="float"):
        @T.prim_func
        def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
            with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
                A_shared = T.alloc_shared((block_M, block_K), dtype)
                B_shared = T.alloc_shared((block_K, block_N), dtype)
                C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
                T.clear(C_local)
                for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                    T.copy(A[by * block_M, k * block_K], A_shared)
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                    T.gemm(A_shared, B_shared, C_local)
                T.copy(C_local, C[by * block_M, bx * block_N])
        return main

    def configs():
        return [{"block_M": bm, "block_N": 16} for bm in (16, 32, 48)]

    @autotune(configs=configs(), warmup=1, rep=2)
    @tilelang.jit(out_idx=[-1], pass_configs={tilelang.PassConfigKey.TL_DISABLE_TMA_LOWER: True})
    def tuned_add(M, N, block_M=None, block_N=None):
        @T.prim_func
        def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
            with T.Kernel(T.ceildiv(M, block_M), threads=32) as bx:
                for i, j in T.Parallel(block_M, N):
                    if bx * block_M + i < M:
                        C[bx * block_M + i, j] = A[bx * block_M + i, j] + B[bx * block_M + i, j]
        return main

    def ref(A, B):
        if not hasattr(A, "astype"):  # torch tensors: the profiler supplies them where torch is installed
            return (A.float() @ B.float()).to(A.dtype)
        return (A.astype(np.float32) @ B.astype(np.float32)).astype(A.dtype)

    def test_compile_prim_func():
        kernel = tilelang.compile(matmul(M0, 32, 64, 16, 16, 16), out_idx=[2], target="cuda" if False else "c")
        a = np.random.randn(M0, 64).astype(np.float16)
        b = np.random.randn(64, 32).astype(np.float16)
        tilelang.testing.torch_assert_close(kernel(a, b), ref(a, b), rtol=2e-2, atol=2e-2)
        profiler = kernel.get_profiler(tensor_supply_type=TensorSupplyType.Normal)
        profiler.assert_allclose(ref, rtol=2e-2, atol=2e-2)
        assert profiler.do_bench(warmup=1, rep=2) > 0
        assert "main" in kernel.get_kernel_source()

    def test_autotune():
        k = tuned_add(40, 24)
        assert k.config["block_M"] in (16, 32, 48), k.config
        a = np.random.randn(40, 24).astype(np.float32)
        tilelang.testing.torch_assert_close(k(a, a), 2 * a)
        k2 = tuned_add(40, 24, block_M=8, block_N=8)   # everything given: no tuning
        tilelang.testing.torch_assert_close(k2(a, a), 2 * a)
        print("best", k.config, k.latency)

    def test_autotuner_class():
        def factory(block_M=16, block_N=16):
            return matmul(32, 32, 32, block_M, block_N, 16)
        res = AutoTuner.from_kernel(kernel=factory, configs=[{"block_M": 16}, {"block_M": 32}]) \\
            .set_compile_args(out_idx=[-1]).set_profile_args(ref_prog=ref).run(warmup=1, rep=2)
        assert res.config["block_M"] in (16, 32) and res.kernel is not None

    @tilelang.testing.requires_cuda
    def test_needs_cuda():  # skipped where no device is usable, run where one is
        import tilescale
        assert tilescale.cuda_available(), "requires_cuda let a test run without a usable device"

    def test_argv():
        assert sys.argv[1:] == ["--flag", "x"], sys.argv

    if __name__ == "__main__":
        tilelang.testing.main()
''')


def _pkg(root):
    """The PYTHONPATH entry for the package under test: the checkout's python/,
    or nothing when the installed package is tested (TILESCALE_TEST_INSTALLED=1)."""
    return "" if os.environ.get("TILESCALE_TEST_INSTALLED") else os.path.join(root, "python")


def run(tmp_path, text, *args, env=None):
    p = tmp_path / "script.py"
    p.write_text(text)
    e = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    e["PYTHONPATH"] = _pkg(root) + os.pathsep + e.get("PYTHONPATH", "")
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "tilescale", str(p)] + list(args), capture_output=True, text=True,
                          env=e, timeout=600)


@pytest.mark.parametrize("tune_max", ["1", "3"])
def test_script_runs_unchanged(tmp_path, tune_max):
    r = run(tmp_path, SCRIPT, "--flag", "x", env={"TILESCALE_AUTOTUNE_MAX": tune_max})
    assert r.returncode == 0, r.stdout + r.stderr
    import tilescale
    if tilescale.cuda_available():
        assert "5 passed, 0 failed, 0 skipped" in r.stdout, r.stdout + r.stderr
    else:
        assert "4 passed, 0 failed, 1 skipped" in r.stdout, r.stdout + r.stderr
        assert "SKIPPED test_needs_cuda" in r.stdout
    if tune_max != "1":  # a real tuning run timed every configuration
        assert "best {" in r.stdout and "} None" not in r.stdout, r.stdout


def test_failing_test_fails_the_run(tmp_path):
    text = SCRIPT.replace("assert sys.argv[1:] == [\"--flag\", \"x\"], sys.argv", "assert False, 'boom'")
    r = run(tmp_path, text)
    assert r.returncode == 1
    assert "FAILED  test_argv" in r.stdout and "boom" in r.stderr


def test_compile_error_in_script_is_reported(tmp_path):
    text = SCRIPT.replace("T.clear(C_local)", "T.clear(C_nope)")
    r = run(tmp_path, text)
    assert r.returncode == 1
    assert "script.py:21:" in r.stderr and "C_nope" in r.stderr, r.stderr  # the diagnostic points into the script


def test_usage_and_missing_script(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    e = dict(os.environ, PYTHONPATH=_pkg(root))
    r = subprocess.run([sys.executable, "-m", "tilescale"], capture_output=True, text=True, env=e)
    assert r.returncode == 2 and "usage" in r.stdout
    r = subprocess.run([sys.executable, "-m", "tilescale", str(tmp_path / "none.py")], capture_output=True,
                       text=True, env=e)
    assert r.returncode == 2 and "no such script" in r.stderr


def test_cli_commands_forwarded(tmp_path, root):
    """python -m tilescale list / cache / --version are the C tool's (its own text and exit status)."""
    e = dict(os.environ, PYTHONPATH=_pkg(root), TILESCALE_CACHE_DIR=str(tmp_path / "kc"))

    def m(*args):
        return subprocess.run([sys.executable, "-m", "tilescale"] + list(args), capture_output=True, text=True,
                              env=e, timeout=120)
    r = m("list", os.path.join(root, "examples", "gemm.py"))
    assert r.returncode == 0, r.stderr
    assert "matmul" in r.stdout and "-D M=" in r.stdout
    r = m("list", str(tmp_path / "none.py"))
    assert r.returncode != 0 and "none.py" in r.stderr
    r = m("cache", "info")
    assert r.returncode == 0, r.stderr
    assert str(tmp_path / "kc") in r.stdout and "kernels: 0" in r.stdout
    r = m("cache", "clean")
    assert r.returncode == 0, r.stderr
    r = m("cache", "frobnicate")
    assert r.returncode != 0
    r = m("--version")
    import tilescale
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("tilescale %s (" % tilescale.__version__)  # the package and its library
    assert lines[1] == "tilescale %s" % tilescale.__version__             # the command line tool's own


def test_pytest_marks_in_scripts(tmp_path):
    """tilelang.testing.main() honours pytest's skip/skipif/parametrize marks and pytest.skip()."""
    text = textwrap.dedent('''
        import pytest
        import tilelang.testing

        @pytest.mark.skipif(True, reason="nope")
        def test_a():
            raise AssertionError

        @pytest.mark.parametrize("x, y", [(1, 2), (3, 4), (5, 7)])
        def test_b(x, y):
            assert y == x + 1

        @pytest.mark.parametrize("z", [5])
        def test_c(z):
            pytest.skip("inside")

        if __name__ == "__main__":
            tilelang.testing.main()
    ''')
    r = run(tmp_path, text)
    assert r.returncode == 1
    for line in ("SKIPPED test_a (nope)", "PASSED  test_b[1-2]", "PASSED  test_b[3-4]", "FAILED  test_b[5-7]",
                 "SKIPPED test_c[5] (inside)", "2 passed, 1 failed, 2 skipped"):
        assert line in r.stdout, r.stdout


def test_named_test_runs_as_pytest_would(tmp_path):
    """$TILESCALE_TEST=NAME on a test_*.py file imports it (its __main__ block,
    which here calls another test by hand as TileLang's GDN tests do, does not
    run) and runs test NAME through tilelang.testing's runner."""
    text = textwrap.dedent('''
        import tilelang.testing

        def test_by_hand():
            print("by hand ran")

        def test_wanted():
            assert __name__ == "test_example_named", __name__

        def test_broken():
            raise AssertionError("broken")

        if __name__ == "__main__":
            test_by_hand()
    ''')
    p = tmp_path / "test_example_named.py"
    p.write_text(text)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    e = dict(os.environ, PYTHONPATH=_pkg(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def go(name):
        return subprocess.run([sys.executable, "-m", "tilescale", str(p)], capture_output=True, text=True,
                              env=dict(e, TILESCALE_TEST=name), timeout=300)
    r = go("test_wanted")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASSED  test_wanted" in r.stdout and "1 passed, 0 failed, 0 skipped" in r.stdout, r.stdout
    assert "by hand ran" not in r.stdout
    r = go("test_broken")
    assert r.returncode == 1 and "FAILED  test_broken" in r.stdout and "broken" in r.stderr, r.stdout + r.stderr
    e.pop("TILESCALE_TEST", None)
    r = subprocess.run([sys.executable, "-m", "tilescale", str(p)], capture_output=True, text=True, env=e, timeout=300)
    assert r.returncode == 0 and "by hand ran" in r.stdout and "PASSED" not in r.stdout, r.stdout + r.stderr


def test_prim_funcs_built_in_python(tmp_path):
    """tilelang.compile of a @T.prim_func at the top level (module constants)
    and of one returned by a plain factory defined inside a function (its
    arguments and a closure value become compile-time values)."""
    text = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts", "prim_funcs.py")).read()
    r = run(tmp_path, text)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr


MAIN_GLOBALS = '''
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def scale(n):
    print("heads", H, "tag", TAG)  # globals set only under __main__, read at call time

    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(n):
                B[i] = A[i] * H

    return main


if __name__ == "__main__":
    import numpy as np
    H, TAG = 3, "x"
    k = scale(16)
    a = np.arange(16, dtype=np.float32)
    np.testing.assert_array_equal(k(a), a * 3)
    print("OK")
'''


def test_globals_set_under_main(tmp_path):
    """A factory may read globals that only the script's __main__ block sets
    (TileLang's NSA examples do): the shim passes their values along."""
    r = run(tmp_path, MAIN_GLOBALS)
    assert r.returncode == 0 and "OK" in r.stdout, r.stdout + r.stderr


SHIM_EXTRAS = textwrap.dedent('''
    import numpy as np
    import tilelang
    import tilelang.language as T
    from tilelang.autotuner import autotune, set_autotune_inputs
    from tilelang.language.fp8 import determine_fp8_type

    @tilelang.jit
    def scale(X, s=2.0, blk=8):
        N = T.const("N")
        X: T.Tensor((N,), "float32")
        Y = T.empty((N,), "float32")
        with T.Kernel(T.ceildiv(N, blk), threads=32) as bx:
            for i in T.Parallel(blk):
                if bx * blk + i < N:
                    Y[bx * blk + i] = X[bx * blk + i] * s
        return Y

    @autotune(configs=[{"blk": 8}, {"blk": 16}], warmup=1, rep=2)
    @tilelang.jit(out_idx=[-1])
    def tuned(N, blk=4):
        @T.prim_func
        def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
            with T.Kernel(T.ceildiv(N, blk), threads=32) as bx:
                for i in T.Parallel(blk):
                    if bx * blk + i < N:
                        Y[bx * blk + i] = X[bx * blk + i] + 1.0
        return main

    if __name__ == "__main__":
        x = np.random.rand(37).astype(np.float32)
        src = scale.get_kernel_source(x, s=3.0)         # tensors and compile-time values
        assert "3" in src and len(src) > 100, src
        assert "kernel main" in scale.get_tir(s=3.0) or "kernel" in scale.get_tir(s=3.0)
        with set_autotune_inputs(x):
            k = tuned.compile(N=37)
        np.testing.assert_allclose(k(x), x + 1.0)
        assert "blk" in str(k.config)
        assert len(tuned.get_kernel_source(N=37)) > 100
        assert determine_fp8_type() == "float8_e4m3" and determine_fp8_type("e5m2") == T.float8_e5m2
        print("OK")
''')


def test_jit_function_sources_and_autotune_inputs(tmp_path):
    """jit_func.get_kernel_source(...) / get_tir(...), set_autotune_inputs, an autotuned
    factory's .compile(...), tilelang.language.fp8.determine_fp8_type (TileLang's example
    tests use each)."""
    r = run(tmp_path, SHIM_EXTRAS)
    assert r.returncode == 0 and "OK" in r.stdout, r.stdout + r.stderr


def test_env_directories_are_paths(tmp_path):
    """tilelang.env's directories are strings a script can join paths under (TileLang's
    minference example builds its extension there); $TILELANG_CACHE_DIR is honoured."""
    text = textwrap.dedent('''
        import os
        import tilelang
        d = os.path.join(tilelang.env.TILELANG_CACHE_DIR, "torch_extensions")
        assert isinstance(tilelang.env.TILELANG_CACHE_DIR, str)
        assert tilelang.env.TILELANG_CACHE_DIR == os.environ["TILELANG_CACHE_DIR"], tilelang.env.TILELANG_CACHE_DIR
        assert tilelang.env.TILELANG_TMP_DIR.startswith(tilelang.env.TILELANG_CACHE_DIR)
        print("env ok", d)
    ''')
    r = run(tmp_path, text, env={"TILELANG_CACHE_DIR": str(tmp_path / "tlcache")})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "env ok" in r.stdout


SPARSE_SCRIPT = textwrap.dedent('''
    import numpy as np
    import tilelang
    import tilelang.language as T
    from tilelang.cuda.intrinsics.sparse_layout import GROUP_CONFIG, get_e_factor, get_e_replicate_factor

    @tilelang.jit(out_idx=[-1])
    def matmul_sp(M, N, K, e_dtype, block_M, block_N, block_K, policy):
        e_factor = get_e_factor(T.float16, e_dtype)

        @T.prim_func
        def main(A_sparse: T.Tensor((M, K // 2), T.float16), E: T.Tensor((M, K // e_factor), e_dtype),
                 B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
            with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
                A_shared = T.alloc_shared((block_M, block_K // 2), T.float16)
                E_shared = T.alloc_shared((block_M, block_K // e_factor), e_dtype)
                B_shared = T.alloc_shared((block_K, block_N), T.float16)
                C_local = T.alloc_fragment((block_M, block_N), T.float32)
                T.clear(C_local)
                for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                    T.copy(A_sparse[by * block_M, k * block_K // 2], A_shared)
                    T.copy(E[by * block_M, k * block_K // e_factor], E_shared)
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                    T.gemm_sp(A_shared, E_shared, B_shared, C_local, transpose_A=False, transpose_E=False,
                              transpose_B=False, policy=policy)
                T.copy(C_local, C[by * block_M, bx * block_N])
        return main

    def compress(a, meta_bits):
        """2:4 compression with natural row-major metadata (TileLang's torch_compress), in NumPy."""
        m, k = a.shape
        g = a.reshape(m, k // 4, 4)
        idx = np.zeros((m, k // 4, 2), np.int64)
        for r in range(m):
            for c in range(k // 4):
                nz = list(np.nonzero(g[r, c])[0]) + [q for q in range(4) if g[r, c, q] == 0]
                idx[r, c] = sorted(nz[:2])
        vals = np.take_along_axis(g, idx, axis=-1).reshape(m, k // 2)
        nib = (idx[..., 0] | (idx[..., 1] << 2)).reshape(m, -1, meta_bits // 4)
        word = sum(nib[..., j] << (4 * j) for j in range(meta_bits // 4))
        return vals, word.astype(np.uint64).astype({8: np.uint8, 16: np.uint16}[meta_bits]).view(
            {8: np.int8, 16: np.int16}[meta_bits])

    assert GROUP_CONFIG[T.float16] == (2, 4) and get_e_replicate_factor(T.int8) == 1
    assert get_e_factor(T.float16, T.int16) == 16 and get_e_factor(T.float32, T.int16) == 8
    rng = np.random.default_rng(7)
    M, N, K = 64, 64, 128
    for e_dtype, bits in ((T.int16, 16), (T.int8, 8)):
        a = rng.standard_normal((M, K // 4, 4)).astype(np.float32)
        np.put_along_axis(a, np.argsort(rng.random((M, K // 4, 4)), axis=-1)[..., :2], 0, axis=-1)
        a = a.reshape(M, K).astype(np.float16)
        b = rng.standard_normal((K, N)).astype(np.float16)
        a_sp, e = compress(a, bits)
        kernel = matmul_sp(M, N, K, e_dtype, 32, 32, 64, T.GemmWarpPolicy.Square)
        c = kernel(a_sp, e, b)
        ref = a.astype(np.float32) @ b.astype(np.float32)
        np.testing.assert_allclose(c, ref, rtol=1e-3, atol=1e-3)
        print("gemm_sp", bits, "ok", float(np.abs(c - ref).max()))
''')


def test_gemm_sp_script(tmp_path):
    """TileLang's sparse GEMM surface: tilelang.cuda.intrinsics.sparse_layout in
    host code and in the factory, T.GemmWarpPolicy passed as a compile-time
    value, T.gemm_sp on 2:4 sparse A with natural metadata (int16 and int8),
    against NumPy's dense product (the C target)."""
    r = run(tmp_path, SPARSE_SCRIPT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "gemm_sp 16 ok" in r.stdout and "gemm_sp 8 ok" in r.stdout, r.stdout + r.stderr
