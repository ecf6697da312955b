"""pytest setup for the Python package's tests.

The tests import the package from the source tree (python/) unless an
installed one is asked for (TILESCALE_TEST_INSTALLED=1); the library comes
from $TILESCALE_LIB (ctest sets it to the build's libtilescale.so) or the
package's own search (_lib.py).  Kernels are compiled into a private cache
directory per session so runs do not interfere.
"""
import os
import sys

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


@pytest.fixture
def rng():
    import numpy as np
    return np.random.default_rng()
