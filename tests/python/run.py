"""ctest's entry to the Python package tests: pytest on tests/python with
this build's library (TILESCALE_LIB, set by tests/CMakeLists.txt).  Exits
77 (reported as skipped, not passed) when pytest or NumPy is missing;
.ci/run installs them into a virtual environment first."""
import os
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print("skipped: %s (pip install pytest numpy)" % e)
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", here] + sys.argv[1:]))
