"""pytest setup for the Python package's tests.

The tests import the package from the source tree (python/) unless an
installed one is asked for (TILESCALE_TEST_INSTALLED=1); the library comes
from $TILESCALE_LIB (ctest sets it to the build's libtilescale.so) or the
package's own search (_lib.py).  Kernels are compiled into a private cache
directory per session so runs do not interfere.

Random data is seeded (issue 9 H): each test's seed is TS_TEST_SEED (ctest
sets a fixed one; "random" or unset: a fresh one) mixed with the test's
name, printed (pytest shows it for a failing test), and applied to NumPy's
global generator, torch's (where installed) and the `rng` fixture.
"""
import os
import secrets
import sys
import zlib

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if not os.environ.get("TILESCALE_TEST_INSTALLED"):
    sys.path.insert(0, os.path.join(ROOT, "python"))


@pytest.fixture(scope="session", autouse=True)
def _cache_dir(tmp_path_factory):
    if "TILESCALE_CACHE_DIR" not in os.environ:
        os.environ["TILESCALE_CACHE_DIR"] = str(tmp_path_factory.mktemp("kcache"))
    yield


@pytest.fixture
def root():
    return ROOT


_BASE = os.environ.get("TS_TEST_SEED", "")
_BASE = int(_BASE, 0) if _BASE and _BASE != "random" else secrets.randbits(32)


@pytest.fixture(autouse=True)
def test_seed(request):
    seed = (_BASE ^ zlib.crc32(request.node.nodeid.encode())) % 2**32
    print(f"seed {seed} (base TS_TEST_SEED={_BASE} repeats this test)")
    try:
        import numpy as np
        np.random.seed(seed)
    except ImportError:
        pass
    try:
        import torch
        torch.manual_seed(seed)
    except ImportError:
        pass
    return seed


@pytest.fixture
def rng(test_seed):
    import numpy as np
    return np.random.default_rng(test_seed)
