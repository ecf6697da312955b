"""The tiered CUDA build from Python: Kernel.tier / get_tier() and
Kernel.wait_full() (ours: TileLang has no such API), and timing that waits
for the full tier.

Without a GPU the CUDA form still compiles (NVRTC; the module is loaded at
the first launch), so the tier states are checked here wherever NVRTC is
present (skipped otherwise): a large GEMM (128x256x128 tiles, 256 threads:
pass tier_plan's "large") built with tiered=ON starts on the quick tier and
wait_full() swaps the full one in; tiered=QUICK has the quick tier alone
(wait_full() is False with a CompileWarning); tiered=OFF and the C target
run the full build.  That calls move from the quick to the full tier by
themselves (the prepared launch) needs a GPU: bench/tier_gpu_check.sh.
"""
import os
import warnings

import pytest

import tilescale
from tilescale import profiler

BIG = dict(M=256, N=256, K=384, block_M=128, block_N=256, block_K=128, num_stages=2, threads=256)
ON, OFF, QUICK = 1, 2, 3  # TsCompileOptions.tiered: TS_TIERED_ON, _OFF, _QUICK


def _gemm(root, cache, tiered, target="cuda"):
    try:
        return tilescale.compile(os.path.join(root, "examples", "gemm.py"), "matmul", target=target,
                                 options={"cache_dir": str(cache), "tiered": tiered}, **BIG)
    except tilescale.CompileError as e:
        if target == "cuda" and e.status_name == "TS_ERR_BUILD" and "nvrtc" in str(e).lower():
            pytest.skip("no NVRTC: %s" % str(e).strip().splitlines()[0])
        raise


@pytest.fixture
def sm90(monkeypatch):
    # 128x256x128 double-buffered tiles need sm_90's shared memory, whatever GPU (if any) is here
    monkeypatch.setenv("TILESCALE_CUDA_ARCH", "sm_90")
    monkeypatch.delenv("TILESCALE_TIERED", raising=False)


def test_quick_then_full(root, tmp_path, sm90):
    k = _gemm(root, tmp_path, ON)
    assert k.tier == "quick" and k.get_tier() == "quick"
    assert "--Ofast-compile" not in k.get_kernel_source()  # the kernel's source is the full tier's
    assert k.wait_full() is True
    assert k.tier == "full"
    assert k.wait_full() is True  # again: nothing to wait for
    cubins = [f for f in os.listdir(tmp_path) if f.endswith(".cubin")]
    assert len(cubins) == 2  # both tiers in the cache
    # the next compile finds the full tier in the cache: no quick tier
    k2 = _gemm(root, tmp_path, ON)
    assert k2.tier == "full"


def test_quick_only_off_and_c(root, tmp_path, sm90):
    k = _gemm(root, tmp_path / "q", QUICK)
    assert k.tier == "quick_only"
    with pytest.warns(tilescale.CompileWarning, match="quick tier alone"):
        assert k.wait_full() is False
    assert k.tier == "quick_only"
    k = _gemm(root, tmp_path / "off", OFF)
    assert k.tier == "full"
    k = _gemm(root, tmp_path / "c", ON, target="c")
    assert k.tier == "full"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert k.wait_full() is True


class _Timed:
    """A callable that records whether its full tier was waited for before it was called."""

    def __init__(self):
        self.waited = False
        self.calls_before_wait = 0

    def wait_full(self):
        self.waited = True
        return True

    def __call__(self):
        if not self.waited:
            self.calls_before_wait += 1

    def run(self):
        self()


def test_do_bench_waits_for_the_full_tier():
    f = _Timed()
    assert tilescale.do_bench(f, warmup=1, rep=2) > 0
    assert f.waited and f.calls_before_wait == 0
    g = _Timed()
    assert profiler.do_bench(g.run, warmup=1, rep=2) > 0  # a method of such an object
    assert g.waited and g.calls_before_wait == 0
    assert profiler.do_bench(lambda: None, warmup=1, rep=2) > 0  # anything else as before
