"""tilelang.testing: the asserts, skips and the test runner TileLang's
example tests use.

main() runs every test_* function of the calling script (the way
`python test_example_x.py` runs in TileLang, where it calls pytest; -k
NAME keeps those whose name contains NAME, $TILESCALE_TEST=NAME exactly
that one) and prints one line per test; run_tests(globals) does the same
for a module's globals (`python -m tilescale` with $TILESCALE_TEST set
imports a test file as pytest would, not as __main__, and calls it, so
files whose __main__ block runs one test by hand are run test by test); skips come from the requires_* decorators,
which look at what libtilescale can do here (a CUDA device and its
compute capability).  The process exits non-zero if any test failed.
"""
import functools
import os
import random
import sys
import traceback

from ..profiler import assert_close


class SkipTest(Exception):
    """Raised by a test (or a requires_* decorator) to skip it."""


def _cuda_cc():
    """(major, minor) of the CUDA device, or None."""
    try:
        import torch
        if torch.cuda.is_available():
            return torch.cuda.get_device_capability()
    except ImportError:
        pass
    from .._kernel import cuda_available
    return (0, 0) if cuda_available() else None


def _requires(cond_fn, why):
    def deco(f):
        @functools.wraps(f)
        def wrapper(*a, **k):
            if not cond_fn():
                raise SkipTest(why)
            return f(*a, **k)
        return wrapper
    return deco


def _maybe_bare(deco_factory, *args):
    # usable as @requires_cuda and @requires_cuda()
    if len(args) == 1 and callable(args[0]):
        return deco_factory()(args[0])
    return deco_factory(*args)


def requires_cuda(*args):
    return _maybe_bare(lambda: _requires(lambda: _cuda_cc() is not None, "needs CUDA"), *args)


def requires_cuda_compute_version(major, minor=0, mode="ge"):
    def ok():
        cc = _cuda_cc()
        if cc is None:
            return False
        want = (major, minor)
        return {"ge": cc >= want, "gt": cc > want, "eq": cc == want, "le": cc <= want, "lt": cc < want}[mode]
    return _requires(ok, "needs compute capability %s %d.%d" % (mode, major, minor))


def requires_cuda_compute_version_ge(major, minor=0):
    return requires_cuda_compute_version(major, minor, "ge")


def requires_cuda_compute_version_gt(major, minor=0):
    return requires_cuda_compute_version(major, minor, "gt")


def requires_cuda_compute_version_eq(major, minor=0):
    return requires_cuda_compute_version(major, minor, "eq")


def requires_cuda_compute_version_le(major, minor=0):
    return requires_cuda_compute_version(major, minor, "le")


def requires_cuda_compute_version_lt(major, minor=0):
    return requires_cuda_compute_version(major, minor, "lt")


def requires_package(*names):
    def ok():
        import importlib.util
        return all(importlib.util.find_spec(n) is not None for n in names)
    return _requires(ok, "needs %s" % ", ".join(names))


def requires_rocm(*args):
    return _maybe_bare(lambda: _requires(lambda: False, "needs ROCm"), *args)


def requires_metal(*args):
    return _maybe_bare(lambda: _requires(lambda: False, "needs Metal"), *args)


def set_random_seed(seed=42):
    random.seed(seed)
    try:
        import numpy as np
        np.random.seed(seed)
    except ImportError:
        pass
    try:
        import torch
        torch.manual_seed(seed)
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(seed)
    except ImportError:
        pass


def torch_assert_close(tensor_a, tensor_b, rtol=1e-2, atol=1e-3, max_mismatched_ratio=0.001, verbose=False,
                       equal_nan=True, check_device=True, check_dtype=False, base_name="LHS", compare_name="RHS"):
    assert_close(tensor_a, tensor_b, rtol=rtol, atol=atol, max_mismatched_ratio=max_mismatched_ratio,
                 name="%s vs %s" % (base_name, compare_name))


def assert_allclose(a, b, rtol=1e-7, atol=0.0, **_kw):
    assert_close(a, b, rtol=rtol, atol=atol)


def _cases(name, f):
    """(label, call) for each run of test f: pytest's skip/skipif marks skip
    it, parametrize marks run it once per set of values."""
    marks = list(getattr(f, "pytestmark", []) or [])
    for m in marks:
        cond = m.args[0] if m.args else m.kwargs.get("condition", True)
        if m.name == "skip" or (m.name == "skipif" and cond):
            reason = m.kwargs.get("reason", "skipped by a pytest mark")

            def skip(reason=reason):
                raise SkipTest(reason)
            return [(name, skip)]
    runs = [({}, "")]
    for m in marks:
        if m.name != "parametrize" or len(m.args) < 2:
            continue
        names = m.args[0]
        names = [x.strip() for x in names.split(",")] if isinstance(names, str) else list(names)
        new = []
        for kw, lab in runs:
            for vals in m.args[1]:
                vals = getattr(vals, "values", vals)  # pytest.param(...)
                vals = (vals,) if len(names) == 1 else tuple(vals)
                k2 = dict(kw)
                k2.update(zip(names, vals))
                new.append((k2, lab + ("-" if lab else "") + "-".join(str(v) for v in vals)))
        runs = new
    return [(name + ("[%s]" % lab if lab else ""), (lambda kw=kw: f(**kw))) for kw, lab in runs]


def main(*_args, **_kw):
    """Run the calling script's test_* functions; exit 1 if one failed."""
    run_tests(sys._getframe(1).f_globals)


def run_tests(g):
    """Run the test_* functions defined in the module globals g (those of
    -k NAME / $TILESCALE_TEST only); exit 1 if one failed."""
    tests = [(n, f) for n, f in g.items() if n.startswith("test") and callable(f)
             and getattr(f, "__module__", g.get("__name__")) == g.get("__name__")]
    argv = sys.argv[1:]
    if "-k" in argv and argv.index("-k") + 1 < len(argv):  # -k NAME: only tests whose name contains NAME
        pick = argv[argv.index("-k") + 1]
        tests = [(n, f) for n, f in tests if pick in n]
    only = os.environ.get("TILESCALE_TEST")  # exactly this test (bench/tilelang_examples.sh runs them one by one)
    if only:
        tests = [(n, f) for n, f in tests if n == only]
    passed = failed = skipped = 0
    for n, f in tests:
        for label, call in _cases(n, f):
            try:
                call()
                passed += 1
                print("PASSED  %s" % label, flush=True)
            except SkipTest as e:
                skipped += 1
                print("SKIPPED %s (%s)" % (label, e), flush=True)
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as e:  # pytest's outcomes derive from BaseException
                if type(e).__name__ == "Skipped":  # pytest.skip() inside a test
                    skipped += 1
                    print("SKIPPED %s (%s)" % (label, e), flush=True)
                    continue
                failed += 1
                print("FAILED  %s" % label, flush=True)
                traceback.print_exc()
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped), flush=True)
    if failed:
        sys.exit(1)


def process_func(func, *args, **kwargs):
    """Run one regression function and print what it returns (a latency)."""
    r = func(*args, **kwargs)
    print("%s: %s" % (getattr(func, "__qualname__", func), r), flush=True)
    return r


def regression(*_args, **_kw):
    """Run the calling script's regression_* functions."""
    g = sys._getframe(1).f_globals
    for n, f in list(g.items()):
        if n.startswith("regression_") and callable(f):
            f()
