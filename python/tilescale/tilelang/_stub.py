"""Permissive stand-ins for the parts of TileLang (and TVM) that a script
touches in Python but that only matter to a Python-hosted compiler.

In a TileLang script most of `T.*` appears only inside kernel bodies,
which our C compiler reads as text and Python never runs.  But Python does
evaluate some of it: the annotations of a @T.prim_func's parameters
(`A: T.Tensor((M, K), dtype)`) when the def statement runs, decorators
(@T.macro), module-level `T.symbolic("m")`, pass_configs keys, imports of
submodules such as tilelang.layout or tilelang.intrinsics.  Anything is an
acceptable value there, so those names resolve to Any: an object that
accepts every attribute access, call, index and arithmetic and yields
another Any.  Used as a decorator on a function it returns the function
unchanged.

StubModule is a module whose unknown attributes are Any, and install()
puts a meta-path finder in front of the import system so that
`import tilelang.whatever` (and `import tvm...` when no real TVM is
installed) loads our module of that name when there is one
(tilescale/tilelang/whatever.py) and a StubModule otherwise.
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types


class Any:
    """Accepts everything; see the essay."""

    __slots__ = ("_name",)

    def __init__(self, name="?"):
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return Any("%s.%s" % (self._name, attr))

    def __setattr__(self, attr, value):
        pass

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]) and hasattr(args[0], "__code__"):
            return args[0]  # used as a decorator
        return Any(self._name + "()")

    def __getitem__(self, key):
        return Any(self._name + "[]")

    def __setitem__(self, key, value):
        pass

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __bool__(self):
        return True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return "<tilelang shim: %s>" % self._name

    def __hash__(self):
        return hash(self._name)

    def __eq__(self, other):
        return isinstance(other, Any) and other._name == self._name

    def __index__(self):
        return 0

    def __int__(self):
        return 0

    def __float__(self):
        return 0.0


def _binop(name):
    def f(self, *other):
        return Any("(%s %s)" % (self._name, name))
    return f


for _op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift", "rshift",
            "matmul", "lt", "le", "gt", "ge"):
    setattr(Any, "__%s__" % _op, _binop(_op))
    setattr(Any, "__r%s__" % _op, _binop(_op))
for _op in ("neg", "pos", "invert", "abs"):
    setattr(Any, "__%s__" % _op, _binop(_op))


class StubModule(types.ModuleType):
    """A module whose unknown attributes are Any."""

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        sub = sys.modules.get(self.__name__ + "." + attr)
        if sub is not None:
            return sub
        return Any("%s.%s" % (self.__name__, attr))


# TileLang module names that live elsewhere in the shim.
_ALIASES = {"tilelang.language.dtypes": "tilescale.tilelang.language",
            "tilelang.language.v2.dtypes": "tilescale.tilelang.language",
            "tilelang.language.fp8": "tilescale.tilelang.fp8"}


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """tilelang.X -> tilescale.tilelang.X or a StubModule; tvm.X -> StubModule."""

    def __init__(self, stub_tvm):
        self.stub_tvm = stub_tvm

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.split(".")[0]
        if top == "tilelang" or (top == "tvm" and self.stub_tvm):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        name = spec.name
        if name.split(".")[0] == "tilelang":
            real = _ALIASES.get(name) or "tilescale.tilelang" + name[len("tilelang"):]
            try:
                if importlib.util.find_spec(real) is not None:
                    return importlib.import_module(real)
            except ImportError:
                pass
        m = StubModule(name)
        m.__path__ = []
        return m

    def exec_module(self, module):
        pass


def install():
    """Make `import tilelang` (and its submodules, and tvm when absent) load the shim."""
    for f in sys.meta_path:
        if isinstance(f, _Finder):
            return
    try:
        stub_tvm = importlib.util.find_spec("tvm") is None
    except (ImportError, ValueError):
        stub_tvm = True
    for name in list(sys.modules):
        if name == "tilelang" or name.startswith("tilelang."):
            del sys.modules[name]
    sys.meta_path.insert(0, _Finder(stub_tvm))
    import tilescale.tilelang as shim
    sys.modules["tilelang"] = shim
    for sub in ("language", "testing", "profiler", "autotuner", "cache", "env"):
        mod = importlib.import_module("tilescale.tilelang." + sub)
        sys.modules["tilelang." + sub] = mod
