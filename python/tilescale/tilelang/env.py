"""tilelang.env: settings objects some scripts read.

The directories are real strings (scripts join paths under them: TileLang's
minference example keeps its torch extension under TILELANG_CACHE_DIR); every
other name is an Any.  TileLang's defaults and variables: ~/.tilelang/cache,
overridden by $TILELANG_CACHE_DIR; the temporary directory under it.
"""
import os

from ._stub import Any

TILELANG_CACHE_DIR = os.environ.get("TILELANG_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".tilelang", "cache"))
TILELANG_TMP_DIR = os.environ.get("TILELANG_TMP_DIR", os.path.join(TILELANG_CACHE_DIR, "tmp"))


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return Any("tilelang.env." + name)
