# A helper package for tests/golden/ir_package_import.py: `from golden_pkg
# import unpack_u4` runs this file, whose relative import runs bits.py.
from .bits import unpack_u4  # noqa: F401

SCALE = 3
