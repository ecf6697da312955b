#!/usr/bin/env python3
"""py_frontend_coverage.py — how many of TileLang's example kernels our C
front end compiles unchanged (issue 8 part D), and why the others do not.

    python3 bench/py_frontend_coverage.py [EXAMPLES_DIR] [--cli build/tilescale] [--target cuda]
                                          [--md FILE] [--list] [-j N] [--only REGEX]

EXAMPLES_DIR defaults to .tl-examples (bench/tilelang_examples.sh fetch puts
TileLang's examples/ there).  Nothing of TileLang is imported or run: the
example files are read with Python's own ast module only to find the
kernels and the values they are called with; the compiling is done by
`tilescale compile FILE --entry NAME -D ... --target cuda --emit cuda` (the
whole compiler down to generated CUDA source, without NVRTC), one process
per kernel so that a crash is counted as one, not the end of the run.

What counts as one kernel function: a def whose own body holds a
@T.prim_func def or a `with T.Kernel(...)` block (TileLang's lazy factory
and its eager @tilelang.jit style), wherever it is defined, plus a
@T.prim_func at the top level of a file.  A factory defined inside another
function is compiled the way `python -m tilescale` compiles it
(python/tilescale/_source.py): its own text after the file's import lines
and the simple values it takes from the enclosing function, with its line
numbers kept.

The compile-time values (the factory's parameters without defaults) are the
ones the file itself calls it with, found statically: the arguments of a
call of the factory, evaluated from literals, module constants, the
calling function's defaults and earlier constant assignments, argparse
defaults (`args.m`), and, one level up, the arguments the calling function
is itself called with.  What cannot be found that way is guessed from the
parameter's name (dtype -> float16, block_* -> 64, ...), as
tests/tools/corpus_compile.c does; such kernels are marked "guessed" in
--list.  Parameters that are tensors in the eager style (annotated
T.Tensor/T.Buffer in the signature or the body) get no value.

Each failure is classified by its first error line: the construct named
(`T.alloc_tmem`, a host library call, a method...), or the message with
its specifics removed.  Constructs that need hardware paths this compiler
does not build (Hopper/Blackwell tensor-memory, TMA, mbarrier,
warp-specialization, 4-bit floats...) are "by design" and counted apart:
the coverage figure is given over all kernels and over the kernels that do
not need them.
"""
import argparse
import ast
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ---- finding kernels ----------------------------------------------------------------------------


def _is_prim_func_deco(d):
    if isinstance(d, ast.Call):
        d = d.func
    return (isinstance(d, ast.Attribute) and d.attr == "prim_func") or (isinstance(d, ast.Name) and d.id == "prim_func")


def _own_nodes(fn):
    """Nodes of a function's body, not descending into nested defs/classes/lambdas."""
    stack = list(fn.body)
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(n))


def _is_kernel_block(n):
    if not isinstance(n, ast.With):
        return False
    for it in n.items:
        e = it.context_expr
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "Kernel":
            return True
    return False


def _is_factory(fn):
    if any(_is_prim_func_deco(d) for d in fn.decorator_list):
        return False
    for n in _own_nodes(fn):
        if isinstance(n, ast.FunctionDef) and any(_is_prim_func_deco(d) for d in n.decorator_list):
            return True
        if _is_kernel_block(n):
            return True
    return False


class Kernel:
    """One kernel function: file, name, the def node, its chain of enclosing defs."""

    def __init__(self, path, node, parents):
        self.path = path
        self.node = node
        self.parents = parents  # enclosing FunctionDefs, outermost first
        self.name = node.name
        self.defines = {}       # name -> text
        self.const_defines = {} # T.const names -> text, used when the kernel needs them constant
        self.guessed = []       # names whose value was guessed
        self.const_guessed = [] # T.const names among const_defines whose value was guessed
        self.status = None      # OK / FAIL / CRASH / TIMEOUT
        self.message = ""       # first error line
        self.cause = ""
        self.by_design = False

    @property
    def label(self):
        q = ".".join([p.name for p in self.parents] + [self.name])
        return "%s:%s" % (self.path, q)


def find_kernels(path, tree):
    out = []

    def walk(body, parents, in_factory):
        for n in body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                fac = _is_factory(n)
                if fac and not in_factory:
                    top = parents[0] if parents else None
                    if top is not None and any("jit" in ast.unparse(d) for d in top.decorator_list):
                        # a @tilelang.jit function that builds its kernel through a nested factory:
                        # the jit function is what the user calls, and what is compiled
                        if not any(k.node is top for k in out):
                            out.append(Kernel(path, top, []))
                    else:
                        out.append(Kernel(path, n, parents))
                elif (not parents and not in_factory and any(_is_prim_func_deco(d) for d in n.decorator_list)):
                    out.append(Kernel(path, n, parents))
                walk(n.body, parents + [n], in_factory or fac)
            elif isinstance(n, ast.ClassDef):
                continue
            else:
                for field in ("body", "orelse", "finalbody", "handlers"):
                    sub = getattr(n, field, None)
                    if isinstance(sub, list):
                        walk([s for s in sub if isinstance(s, ast.stmt)] +
                             [h for h in sub if isinstance(h, ast.ExceptHandler) for h in h.body], parents,
                             in_factory)
    walk(tree.body, [], False)
    return out


# ---- static values ------------------------------------------------------------------------------

DTYPES = {"float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "uint16",
          "uint32", "uint64", "bool", "float8_e4m3", "float8_e5m2", "float8_e4m3fn", "half", "float", "int4",
          "float4_e2m1fn", "uint4", "float8_e4m3fnuz", "float8_e5m2fnuz", "int1"}
UNKNOWN = object()


class TensorShape:
    """A tensor the example's own host code makes (torch.randn(B, S, H, D, ...)),
    known by its shape only: `x.shape`, `x.shape[i]`, `x.size(i)` and unpacking
    `a, b = x.shape` give the extents (the values TileLang's factories are
    called with when the interface reads them from its tensors)."""

    def __init__(self, shape):
        self.shape = shape


_TENSOR_MAKERS = {"randn", "rand", "randint", "zeros", "ones", "empty", "full", "randn_like"}
_SAME_SHAPE = {"requires_grad_", "to", "cuda", "contiguous", "float", "half", "bfloat16", "clone", "detach", "cpu",
               "normal_", "uniform_", "fill_", "zero_", "abs", "exp", "sigmoid", "softmax", "log_softmax"}


class Env:
    """Names -> Python values, with a fallback chain."""

    def __init__(self, vals, parent=None):
        self.vals = vals
        self.parent = parent

    def get(self, n):
        e = self
        while e is not None:
            if n in e.vals:
                return e.vals[n]
            e = e.parent
        return UNKNOWN


def evaluate(e, env):
    """A Python value for a simple expression, or UNKNOWN."""
    if isinstance(e, ast.Constant):
        return e.value
    if isinstance(e, ast.Name):
        return env.get(e.id)
    if isinstance(e, ast.Attribute):
        if e.attr in DTYPES and isinstance(e.value, ast.Name) and e.value.id in ("T", "torch", "tl", "np", "tvm"):
            return {"float8_e4m3fn": "float8_e4m3", "half": "float16"}.get(e.attr, e.attr)
        if isinstance(e.value, ast.Name):
            v = env.get(e.value.id + "." + e.attr)
            if v is not UNKNOWN:
                return v
        if (e.attr in ("Square", "FullRow", "FullCol") and isinstance(e.value, ast.Attribute)
                and e.value.attr == "GemmWarpPolicy"):  # T.GemmWarpPolicy.Square: passed as its text
            return "T.GemmWarpPolicy." + e.attr
        if e.attr == "shape":
            v = evaluate(e.value, env)
            if isinstance(v, TensorShape):
                return v.shape
        return UNKNOWN
    if isinstance(e, ast.UnaryOp):
        v = evaluate(e.operand, env)
        if v is UNKNOWN:
            return UNKNOWN
        try:
            return {ast.USub: lambda x: -x, ast.UAdd: lambda x: +x, ast.Not: lambda x: not x}[type(e.op)](v)
        except Exception:
            return UNKNOWN
    if isinstance(e, ast.BinOp):
        a, b = evaluate(e.left, env), evaluate(e.right, env)
        if a is UNKNOWN or b is UNKNOWN:
            return UNKNOWN
        if isinstance(a, TensorShape) or isinstance(b, TensorShape):  # x / 10: elementwise, same shape
            t = [v for v in (a, b) if isinstance(v, TensorShape)]
            return t[0] if len(t) == 1 or t[0].shape == t[1].shape else UNKNOWN
        ops = {ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y, ast.Mult: lambda x, y: x * y,
               ast.FloorDiv: lambda x, y: x // y, ast.Div: lambda x, y: x / y, ast.Mod: lambda x, y: x % y,
               ast.Pow: lambda x, y: x ** y if abs(y) < 64 else UNKNOWN, ast.LShift: lambda x, y: x << y,
               ast.RShift: lambda x, y: x >> y}
        try:
            return ops[type(e.op)](a, b)
        except Exception:
            return UNKNOWN
    if isinstance(e, (ast.Tuple, ast.List)):
        vs = [evaluate(x, env) for x in e.elts]
        if any(v is UNKNOWN for v in vs):
            return UNKNOWN
        return tuple(vs)
    if (isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("min", "max") and len(e.args) >= 2
            and not e.keywords):
        vs = [evaluate(x, env) for x in e.args]
        if any(v is UNKNOWN or not isinstance(v, (int, float)) for v in vs):
            return UNKNOWN
        return min(vs) if e.func.id == "min" else max(vs)
    if (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and isinstance(e.func.value, ast.Name)
            and e.func.value.id == "math" and e.func.attr in ("ceil", "floor") and len(e.args) == 1):
        v = evaluate(e.args[0], env)
        if v is UNKNOWN or not isinstance(v, (int, float)):
            return UNKNOWN
        import math
        return getattr(math, e.func.attr)(v)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("int", "float") and len(e.args) == 1:
        v = evaluate(e.args[0], env)
        try:
            return UNKNOWN if v is UNKNOWN else {"int": int, "float": float}[e.func.id](v)
        except Exception:
            return UNKNOWN
    if (isinstance(e, ast.Call) and not e.keywords and e.args
            and ((isinstance(e.func, ast.Attribute) and e.func.attr == "product")
                 or (isinstance(e.func, ast.Name) and e.func.id == "product"))):
        vs = [evaluate(a, env) for a in e.args]  # only the first combination: what a loop over it binds first
        if all(isinstance(v, tuple) and v for v in vs):
            return (tuple(v[0] for v in vs),)
        return UNKNOWN
    if isinstance(e, ast.Subscript):
        base = evaluate(e.value, env)
        i = evaluate(e.slice, env)
        if isinstance(base, tuple) and isinstance(i, int) and -len(base) <= i < len(base):
            return base[i]
        return UNKNOWN
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute):
        f = e.func
        if isinstance(f.value, ast.Name) and f.value.id == "torch" and f.attr in _TENSOR_MAKERS:
            if f.attr == "randn_like":
                v = evaluate(e.args[0], env) if e.args else UNKNOWN
                return v if isinstance(v, TensorShape) else UNKNOWN
            args = e.args[1:] if f.attr in ("randint", "full") and len(e.args) > 1 else e.args
            if f.attr == "randint" and len(e.args) >= 3:
                args = e.args[2:]
            if f.attr == "full":
                args = e.args[:1]
            if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
                args = args[0].elts
            for k in e.keywords:
                if k.arg == "size":
                    args = k.value.elts if isinstance(k.value, (ast.Tuple, ast.List)) else [k.value]
            vs = [evaluate(a, env) for a in args]
            if vs and all(isinstance(v, int) and not isinstance(v, bool) for v in vs):
                return TensorShape(tuple(vs))
            return UNKNOWN
        if f.attr in _SAME_SHAPE:
            v = evaluate(f.value, env)
            return v if isinstance(v, TensorShape) else UNKNOWN
        if f.attr == "size" and len(e.args) == 1:
            v = evaluate(f.value, env)
            i = evaluate(e.args[0], env)
            if isinstance(v, TensorShape) and isinstance(i, int) and -len(v.shape) <= i < len(v.shape):
                return v.shape[i]
        return UNKNOWN
    return UNKNOWN


def _argparse_defaults(tree):
    out = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "add_argument":
            names = [a.value for a in n.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            dest = None
            for k in n.keywords:
                if k.arg == "dest" and isinstance(k.value, ast.Constant):
                    dest = k.value.value
            if dest is None:
                longs = [s for s in names if s.startswith("--")]
                dest = (longs or names or [""])[0].lstrip("-").replace("-", "_")
            for k in n.keywords:
                if k.arg == "default":
                    v = evaluate(k.value, Env({}))
                    if v is not UNKNOWN and dest:
                        for base in ("args", "opt", "opts", "cfg", "config", "parsed"):
                            out["%s.%s" % (base, dest)] = v
            if dest:
                for k in n.keywords:
                    if k.arg == "action" and isinstance(k.value, ast.Constant) and k.value.value == "store_true":
                        for base in ("args", "opt", "opts", "cfg", "config", "parsed"):
                            out.setdefault("%s.%s" % (base, dest), False)
    return out


def _assign_into(vals, target, value):
    if isinstance(target, ast.Name):
        if value is UNKNOWN:
            vals.pop(target.id, None)
            vals[target.id] = UNKNOWN
        else:
            vals[target.id] = value
    elif isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, tuple) and len(value) == len(target.elts):
            for t, v in zip(target.elts, value):
                _assign_into(vals, t, v)
        else:
            for t in target.elts:
                _assign_into(vals, t, UNKNOWN)


def _is_main_block(n):
    return (isinstance(n, ast.If) and isinstance(n.test, ast.Compare) and isinstance(n.test.left, ast.Name)
            and n.test.left.id == "__name__")


def module_env(tree):
    """Module-level values, the `if __name__ == "__main__":` block's assignments
    included (calls made from that block see them)."""
    vals = dict(_argparse_defaults(tree))
    body = []
    for n in tree.body:
        body += n.body if _is_main_block(n) else [n]
    for n in body:
        if isinstance(n, ast.Assign):
            v = evaluate(n.value, Env(vals))
            for t in n.targets:
                _assign_into(vals, t, v)
        elif isinstance(n, ast.AnnAssign) and n.value is not None:
            _assign_into(vals, n.target, evaluate(n.value, Env(vals)))
    return Env(vals)


class FileInfo:
    def __init__(self, path, text, tree):
        self.path = path
        self.text = text
        self.tree = tree
        self.menv = module_env(tree)
        self.argparse = _argparse_defaults(tree)
        self.external = {}  # function name -> calls of it in the directory's test_example_*.py files
        self.funcs = {}  # name -> [FunctionDef]
        self.parent = {}
        for n in ast.walk(tree):
            for c in ast.iter_child_nodes(n):
                self.parent[c] = n
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.funcs.setdefault(n.name, []).append(n)

    def enclosing_def(self, node):
        p = self.parent.get(node)
        while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)):
            p = self.parent.get(p)
        return p

    def name_default(self, name):
        """A value for a parameter the calls do not give: the constant default of a
        parameter of the same name in another function of the file (the script's
        main(), a test function), else an argparse option of that name in any case
        (--block_m for block_M), else UNKNOWN."""
        best = UNKNOWN
        for fns in self.funcs.values():
            for fn in fns:
                a = fn.args
                pos = a.posonlyargs + a.args
                defs = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
                for arg, d in list(zip(pos, defs)) + list(zip(a.kwonlyargs, a.kw_defaults)):
                    if arg.arg == name and d is not None:
                        v = evaluate(d, self.menv)
                        if v is not UNKNOWN and v is not None and text_of(v) is not None:
                            if fn.name == "main":
                                return v
                            if best is UNKNOWN:
                                best = v
        if best is not UNKNOWN:
            return best
        for fns in self.funcs.values():  # the value a call gives a same-named parameter elsewhere
            for fn in fns:
                a = fn.args
                if any(x.arg == name for x in a.posonlyargs + a.args + a.kwonlyargs):
                    v = self.param_values(fn, 1).get(name, UNKNOWN)
                    if v is not UNKNOWN and v is not None and text_of(v) is not None:
                        return v
        for k, v in self.argparse.items():
            if k.lower() == "args." + name.lower() and text_of(v) is not None:
                return v
        return UNKNOWN

    def calls_of(self, name):
        for n in self.external.get(name, ()):
            yield n
        for n in ast.walk(self.tree):
            if isinstance(n, ast.Call):
                f = n.func
                if (isinstance(f, ast.Name) and f.id == name) or (isinstance(f, ast.Attribute) and f.attr == name):
                    yield n
                elif (isinstance(f, ast.Attribute) and f.attr in ("compile", "get_tir") and isinstance(f.value, ast.Name)
                      and f.value.id == name):
                    yield n  # jit_function.compile(N=..., BLOCK_N=...)

    def env_at(self, fn, line, depth):
        """Values visible in function fn at a line: its parameters (from its
        defaults or, depth permitting, its callers), then its assignments before
        the line, over the module's values."""
        if fn is None:
            return self.menv
        penv = self.env_at(self.enclosing_def(fn), fn.lineno, depth)
        vals = {}
        args = fn.args
        pos = args.posonlyargs + args.args
        defaults = [None] * (len(pos) - len(args.defaults)) + list(args.defaults)
        for a, d in list(zip(pos, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults)):
            vals[a.arg] = evaluate(d, penv) if d is not None else UNKNOWN
        if depth > 0:  # a caller's value over the default: the run the example makes
            known = self.param_values(fn, depth - 1)
            for k, v in known.items():
                if v is not None or vals.get(k, UNKNOWN) is UNKNOWN:
                    vals[k] = v
        env = Env(vals, penv)
        for n in sorted((n for n in _own_nodes(fn) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.For))),
                        key=lambda n: n.lineno):
            if n.lineno >= line:
                break
            if isinstance(n, ast.Assign):
                v = evaluate(n.value, env)
                for t in n.targets:
                    _assign_into(vals, t, v)
            elif isinstance(n, ast.AnnAssign) and n.value is not None:
                _assign_into(vals, n.target, evaluate(n.value, env))
            elif isinstance(n, ast.For):  # `for x in (a, b):` -> the first value
                it = evaluate(n.iter, env)
                _assign_into(vals, n.target, it[0] if isinstance(it, tuple) and it else UNKNOWN)
        return env

    def param_values(self, fn, depth):
        """The values fn's parameters take at the best-resolved call of it."""
        return self._param_values(fn, depth)[0]

    def _tested(self, fn, depth):
        """Whether fn is called, directly or through its callers, from TileLang's
        test_example_*.py (depth permitting)."""
        if fn is None:
            return False
        return self._param_values(fn, depth)[1] if depth >= 0 else False

    def _param_values(self, fn, depth):
        """(values, tested): the values fn's parameters take at the best call of
        it.  Calls on a path from TileLang's test_example_*.py come first (what
        its CI runs), then the call that resolves the most parameters."""
        best, best_ext = {}, False
        first = True
        for call in self.calls_of(fn.name):
            if getattr(call, "_external", False):
                env = Env({})  # a test file's call: its literal arguments
                ext = True
            elif call.lineno == fn.lineno:
                continue
            else:
                env = self.env_at(self.enclosing_def(call), call.lineno, depth)
                ext = self._tested(self.enclosing_def(call), depth - 1)
            got = {}
            pos = [a.arg for a in fn.args.posonlyargs + fn.args.args]
            if any(isinstance(a, ast.Starred) for a in call.args):
                continue
            for name, a in zip(pos, call.args):
                v = evaluate(a, env)
                if v is not UNKNOWN:
                    got[name] = v
            for k in call.keywords:
                if k.arg is not None:
                    v = evaluate(k.value, env)
                    if v is not UNKNOWN:
                        got[k.arg] = v
            if first or (ext and not best_ext) or (ext == best_ext and len(got) > len(best)):
                best, best_ext, first = got, ext, False
        return best, best_ext


def guess(n):
    """A plausible value for a parameter, by its name (as corpus_compile.c)."""
    n = n.lower()
    if "dtype" in n:
        return "float32" if "accum" in n else "int16" if "meta" in n else "float16"
    if n.startswith(("is_", "use_", "enable")) or "causal" in n:
        return "False"
    if n in ("threads", "num_threads"):
        return "128"
    if "stage" in n:
        return "2"
    if "split" in n or "group" in n or "num_" in n:
        return "2"
    if n == "scale" or "eps" in n or "sm_scale" in n:
        return "0.5"
    if n.endswith(("_list", "_sizes")):
        return "(64, 128)"
    if "tail" in n:
        return "64"  # the rope dims of DeepSeek's MLA examples
    if n in ("batch", "b"):
        return "2"
    if "kv_head" in n or "h_kv" in n or "head_kv" in n:
        return "1"
    if "head" in n or n == "h":
        return "32"  # a multiple of 8 and of the group counts, as the indexer factories assert
    if "chunk" in n:
        return "64"
    if "block" in n or n.startswith(("blk", "Block")) or "tile" in n:
        return "64"
    return "128"


def _tensor_params(fn):
    """Parameters that are tensors in the eager style (annotated in the signature or body)."""
    out = set()

    def is_tensor_ann(a):
        if a is None:
            return False
        if isinstance(a, ast.Subscript):
            a = a.value
        if isinstance(a, ast.Call):
            a = a.func
        return isinstance(a, ast.Attribute) and a.attr in ("Tensor", "Buffer", "StridedTensor", "ptr", "Ptr")
    for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
        if is_tensor_ann(a.annotation):
            out.add(a.arg)
    for n in _own_nodes(fn):
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and is_tensor_ann(n.annotation):
            out.add(n.target.id)
    return out


def text_of(v):
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return v
    if isinstance(v, tuple) and all(isinstance(x, (bool, int, float, str)) for x in v):
        return repr(v)
    return None


def _none_tested(fn):
    """Names the factory compares with None itself (`if x is None:`): for them
    None is a value of the factory's own (sm_scale computed from dim, no window)."""
    out = set()
    for n in ast.walk(fn):
        if (isinstance(n, ast.Compare) and isinstance(n.left, ast.Name) and len(n.ops) == 1
                and isinstance(n.ops[0], (ast.Is, ast.IsNot)) and isinstance(n.comparators[0], ast.Constant)
                and n.comparators[0].value is None):
            out.add(n.left.id)
    return out


def _autotune_first_config(fi, fn):
    """The first configuration of an `@tilelang.autotune(configs=...)` decorator
    (the first the tuner compiles): a list of dicts, or a function of the file
    that builds one (its first dict literal, with loops over lists and
    itertools.product bound to their first values).  {} when not found."""
    for d in fn.decorator_list:
        if not (isinstance(d, ast.Call) and "autotune" in ast.unparse(d.func)):
            continue
        for kw in d.keywords:
            if kw.arg != "configs":
                continue
            v = kw.value
            if isinstance(v, ast.Name):  # configs=CONFIGS: the module's assignment
                for n in fi.tree.body:
                    if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == v.id for t in n.targets):
                        v = n.value
            if isinstance(v, (ast.List, ast.Tuple)) and v.elts and isinstance(v.elts[0], ast.Dict):
                v = v.elts[0]
                return _dict_value(v, fi.menv)
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in fi.funcs:
                g = fi.funcs[v.func.id][0]
                for n in sorted((n for n in _own_nodes(g) if isinstance(n, ast.Dict)), key=lambda n: n.lineno):
                    got = _dict_value(n, fi.env_at(g, n.lineno, 0))
                    if got:
                        return got
                for n in _own_nodes(g):  # dict(K=[...], ...) iterated by product(*d.values())
                    if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "dict"
                            and n.keywords and not n.args):
                        env = fi.env_at(g, n.lineno, 0)
                        vals = {kw.arg: evaluate(kw.value, env) for kw in n.keywords}
                        if all(isinstance(v, tuple) and v for v in vals.values()):
                            return {k: v[0] for k, v in vals.items()}
    return {}


def _dict_value(d, env):
    out = {}
    for k, v in zip(d.keys, d.values):
        if isinstance(k, ast.Constant) and isinstance(k.value, str):
            x = evaluate(v, env)
            if x is not UNKNOWN:
                out[k.value] = x
    return out


def plan(fi, k):
    fn = k.node
    if not k.parents and any(_is_prim_func_deco(d) for d in fn.decorator_list):
        return
    tensors = _tensor_params(fn)
    found = fi.param_values(fn, 2)
    for name, v in _autotune_first_config(fi, fn).items():
        found.setdefault(name, v)
    handles_none = _none_tested(fn)
    args = fn.args
    pos = args.posonlyargs + args.args
    ndef = len(pos) - len(args.defaults)
    for i, a in enumerate(pos):
        if a.arg in tensors:
            continue
        v = found.get(a.arg, UNKNOWN)
        t = text_of(v) if v is not UNKNOWN else None
        none_default = i >= ndef and isinstance(args.defaults[i - ndef], ast.Constant) and args.defaults[i - ndef].value is None
        if t is not None:
            k.defines[a.arg] = t
        elif a.arg in handles_none and (v is None or (v is UNKNOWN and none_default)):
            k.defines[a.arg] = "None"  # the call's None, or the default the factory itself handles
        elif i < ndef or none_default:
            v = fi.name_default(a.arg)
            if v is not UNKNOWN:
                k.defines[a.arg] = text_of(v)  # the file's own default for that name
            else:
                k.defines[a.arg] = guess(a.arg)  # no value, or a None default (an autotuner fills it in)
                k.guessed.append(a.arg)
    # T.const("M, N") names: TileLang binds them from the tensors at each call and
    # compiles for those values; here they take the file's values or a guess
    for n in _own_nodes(fn):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "const" and n.args
                and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str)):
            for name in re.split(r"[,\s]+", n.args[0].value.strip()):
                if name and name not in k.defines:
                    v = found.get(name, UNKNOWN)
                    if v is UNKNOWN:
                        v = fi.name_default(name)
                    t = text_of(v) if v is not UNKNOWN else None
                    k.const_defines[name] = t if t is not None else guess(name)
                    if t is None:
                        k.const_guessed.append(name)
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        v = found.get(a.arg, UNKNOWN)
        t = text_of(v) if v is not UNKNOWN else None
        if t is not None:
            k.defines[a.arg] = t
        elif a.arg in handles_none and (v is None or (v is UNKNOWN and isinstance(d, ast.Constant) and d.value is None)):
            k.defines[a.arg] = "None"
        elif d is None and a.arg not in tensors:
            v = fi.name_default(a.arg)
            if v is not UNKNOWN:
                k.defines[a.arg] = text_of(v)
            else:
                k.defines[a.arg] = guess(a.arg)
                k.guessed.append(a.arg)


def _main_block_values(fi):
    """Simple values the script's `if __name__ == "__main__":` block assigns
    (python -m tilescale passes those a factory reads, python/tilescale/_source.py)."""
    vals = {}
    for n in fi.tree.body:
        if (isinstance(n, ast.If) and isinstance(n.test, ast.Compare) and isinstance(n.test.left, ast.Name)
                and n.test.left.id == "__name__"):
            env = Env(vals, fi.menv)
            for st in n.body:
                if isinstance(st, ast.Assign):
                    v = evaluate(st.value, env)
                    for t in st.targets:
                        _assign_into(vals, t, v)
    return {k: v for k, v in vals.items() if v is not UNKNOWN and text_of(v) is not None}


def _top_bound(tree):
    names = set()
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in n.names}
        elif isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.With)):
            names |= {t.id for t in ast.walk(n) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
    return names


def source_for(fi, k, tmpdir):
    """(path to compile, entry).  A nested kernel gets a synthesized file; a
    top-level one reading globals only the __main__ block sets gets them
    appended, as the shim does."""
    if not k.parents:
        main_vals = _main_block_values(fi)
        used = {n.id for n in ast.walk(k.node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        extra = {n: v for n, v in main_vals.items() if n in used and n not in _top_bound(fi.tree)}
        if not extra:
            return fi.path, k.name
        d = tempfile.mkdtemp(dir=tmpdir)
        p = os.path.join(d, os.path.basename(fi.path))
        with open(p, "w") as f:
            f.write(fi.text + "\n" + "".join("%s = %r\n" % (n, list(v) if isinstance(v, tuple) else v)
                                             for n, v in sorted(extra.items())))
        _link_siblings(fi, d)
        return p, k.name
    lines = fi.text.split("\n")
    first = min([k.node.lineno] + [d.lineno for d in k.node.decorator_list])
    body = textwrap.dedent("\n".join(lines[first - 1:k.node.end_lineno]))
    env = fi.env_at(k.parents[-1], k.node.lineno, 2)
    names = {n.id for n in ast.walk(k.node) if isinstance(n, ast.Name)}
    prelude = [ln for ln in lines if re.match(r"(import|from)\s+\S", ln) and not ln.rstrip().endswith(("(", "\\"))]
    for n in sorted(names):
        v = env.get(n)
        if v is not UNKNOWN and text_of(v) is not None and n not in k.defines:
            prelude.append("%s = %r" % (n, list(v) if isinstance(v, tuple) else v))
    pad = max(0, first - 1 - len(prelude))
    text = "\n".join(prelude) + "\n" * (pad + 1) + body + "\n"
    d = tempfile.mkdtemp(dir=tmpdir)
    p = os.path.join(d, os.path.basename(fi.path))
    with open(p, "w") as f:
        f.write(text)
    _link_siblings(fi, d)
    return p, k.name


def _link_siblings(fi, d):
    """The helper modules and packages beside fi's file, linked into d, where
    its synthesized copy is compiled (the imports find them as they would
    beside the original: dequantize_gemm's `quantize/` package)."""
    src = os.path.dirname(fi.path) or "."
    for sib in os.listdir(src):
        full = os.path.join(src, sib)
        if sib == os.path.basename(fi.path) or os.path.exists(os.path.join(d, sib)):
            continue
        if sib.endswith(".py") or os.path.isfile(os.path.join(full, "__init__.py")):
            os.symlink(os.path.abspath(full), os.path.join(d, sib))


# ---- classification -----------------------------------------------------------------------------

# Constructs that need hardware paths this compiler does not build (or data types it does not have).
BY_DESIGN = re.compile(r"tmem|tcgen05|mbarrier|alloc_barrier|barrier_|tma_|wgmma|warp_specializ|\bT\.ws\b|WSSync|"
                       r"float4_e2m1|int4|uint4|float8_e8m0|fp4|tf32|ptx_|cp_async_bulk|fence_proxy|"
                       r"elect_one|tma|cluster|sync_grid|shuffle_elect|alloc_descriptor|"
                       r"initialize_descriptor|deepgemm|T\.Pointer|"
                       # other GPU backends: AMD's (a HIP target, TileLang's ROCm intrinsics)
                       r"AMD ROCm|tilelang\.rocm\.|MatrixCore|[Mm]fma|"
                       # TVM's own low-level TIR (attributes, raw intrinsics), not TileLang's
                       # (T.import_source / T.call_extern: built in session 10)
                       r"T\.tvm_|T\.call_intrin")


def classify(msg):
    m = re.search(r"unknown TileLang function or name '([^']+)'", msg)
    if m:
        return m.group(1)
    m = re.search(r"calling '([^']+)' is outside", msg)
    if m:
        return "host call: " + m.group(1).split(".")[-1]
    m = re.search(r"'([^']+)' is outside what this compiler understands", msg)
    if m:
        parts = m.group(1).split(".")
        return "host code: " + ".".join(parts[:2])
    m = re.search(r"(\w+) has no attribute '([^']+)'", msg)
    if m:
        return "attribute %s.%s" % (m.group(1), m.group(2))
    m = re.search(r"^(T\.\w+)(\(\))?:? ", msg)
    if m:
        return m.group(1) + ": " + re.sub(r"'[^']*'|\d+(x\d+)*", "…", msg[m.end():])[:60]
    if msg.startswith("assertion failed"):
        return "assertion failed (a factory's assert)"
    if re.match(r"name '[^']+' is not defined", msg):
        return "name not defined"
    if "missing compile-time value" in msg:
        return "missing compile-time value"
    if "has no parameter or T.const named" in msg:
        return "-D of a name the entry does not take"
    return re.sub(r"'[^']*'|\b\d+(x\d+)*\b", "…", msg)[:70]


def run_one(cli, target, k, path, entry, timeout):
    """Compile; T.const names stay run-time shape variables unless the kernel
    needs them as constants (buffer extents), as TileLang binds them per call."""
    status, msg = run_defs(cli, target, k.defines, path, entry, timeout)
    if status == "FAIL" and k.const_defines and ("compile-time integer" in msg or "compile-time value" in msg):
        defs = dict(k.defines)
        defs.update(k.const_defines)
        k.guessed += [n for n in k.const_guessed if n not in k.guessed]
        status, msg = run_defs(cli, target, defs, path, entry, timeout)
    return status, msg


def run_defs(cli, target, defines, path, entry, timeout):
    cmd = [cli, "compile", path, "--entry", entry, "--target", target,
           "--emit", "cuda" if target == "cuda" else "c"]
    for n, v in defines.items():
        cmd += ["-D", "%s=%s" % (n, v)]
    env = dict(os.environ)
    env.setdefault("TILESCALE_CUDA_ARCH", "sm_90a")  # the examples are written for the H100/H200
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return "TIMEOUT", "no answer in %d s" % timeout
    if r.returncode == 0:
        return "OK", ""
    err = r.stderr.strip().splitlines()
    if r.returncode < 0 or r.returncode > 2 and not err:
        return "CRASH", "exit status %d %s" % (r.returncode, (err or [""])[-1][:100])
    first = next((ln for ln in err if "error:" in ln), err[0] if err else "?")
    return "FAIL", first


def _test_calls(files):
    """Calls `module.function(...)` that TileLang's test_example_*.py files make of
    the example modules beside them (the values the example tests run with):
    {absolute path of the module: {function name: [ast.Call marked _external]}}."""
    out = {}
    for p in files:
        if not os.path.basename(p).startswith("test_"):
            continue
        try:
            tree = ast.parse(open(p, encoding="utf-8").read())
        except SyntaxError:
            continue
        d = os.path.dirname(os.path.abspath(p))
        mods = {}
        for n in ast.walk(tree):
            if isinstance(n, ast.Import):
                for a in n.names:
                    mods[a.asname or a.name] = a.name
            elif isinstance(n, ast.ImportFrom) and n.module and not n.level:
                for a in n.names:  # from example_x import main as example_x_main
                    mods.setdefault("__fn__" + (a.asname or a.name), (n.module, a.name))
        for n in ast.walk(tree):
            if not isinstance(n, ast.Call):
                continue
            f = n.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in mods:
                mod, fname = mods[f.value.id], f.attr
            elif isinstance(f, ast.Name) and "__fn__" + f.id in mods:
                mod, fname = mods["__fn__" + f.id]
            else:
                continue
            path = os.path.join(d, mod.replace(".", os.sep) + ".py")
            if os.path.exists(path):
                n._external = True
                out.setdefault(path, {}).setdefault(fname, []).append(n)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("examples", nargs="?", default=os.path.join(ROOT, ".tl-examples"))
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "tilescale"))
    ap.add_argument("--target", default="cuda", choices=("cuda", "c"))
    ap.add_argument("--md", help="write the Markdown table here too")
    ap.add_argument("--list", action="store_true", help="one line per kernel")
    ap.add_argument("--defines", action="store_true", help="with --list: the -D values each kernel was compiled with")
    ap.add_argument("--only", help="only files whose path matches this regular expression")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=60)
    a = ap.parse_args()
    if not os.path.isdir(a.examples):
        sys.exit("no %s: run `bash bench/tilelang_examples.sh fetch` first" % a.examples)
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(a.examples) for f in fs if f.endswith(".py"))
    if a.only:
        files = [f for f in files if re.search(a.only, f)]
    kernels, jobs = [], []
    tmp = tempfile.mkdtemp(prefix="tscov")
    external = _test_calls(files)
    for p in files:
        text = open(p, encoding="utf-8").read()
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        fi = FileInfo(os.path.relpath(p), text, tree)
        fi.external = external.get(os.path.abspath(p), {})
        for k in find_kernels(fi.path, tree):
            plan(fi, k)
            path, entry = source_for(fi, k, tmp)
            kernels.append(k)
            jobs.append((k, path, entry))
    with concurrent.futures.ThreadPoolExecutor(a.j) as ex:
        for k, (status, msg) in zip([j[0] for j in jobs],
                                    ex.map(lambda j: run_one(a.cli, a.target, j[0], j[1], j[2], a.timeout), jobs)):
            k.status = status
            k.message = msg
            if status == "FAIL":
                m = re.search(r"error: (.*)", msg)
                k.cause = classify(m.group(1) if m else msg)
            else:
                k.cause = status.lower() if status != "OK" else ""
            k.by_design = status == "FAIL" and bool(BY_DESIGN.search(k.cause))
    subprocess.run(["rm", "-rf", tmp])
    if a.list:
        for k in kernels:
            print("%-6s %s%s  %s" % (k.status, k.label, " (guessed %s)" % ",".join(k.guessed) if k.guessed else "",
                                     k.message))
            if a.defines:
                print("         " + " ".join("-D %s=%s" % kv for kv in sorted(k.defines.items())))
    total = len(kernels)
    ok = sum(k.status == "OK" for k in kernels)
    design = sum(k.by_design for k in kernels)
    guessed_fail = sum(1 for k in kernels if k.status != "OK" and k.guessed)
    causes = collections.Counter(k.cause for k in kernels if k.status != "OK" and not k.by_design)
    dcauses = collections.Counter(k.cause for k in kernels if k.by_design)
    out = []
    out.append("TileLang examples (%s): %d kernel functions in %d files; target %s (%s)"
               % (open(os.path.join(a.examples, "COMMIT")).read().strip()[:10]
                  if os.path.exists(os.path.join(a.examples, "COMMIT")) else "?", total,
                  len({k.path for k in kernels}), a.target,
                  os.environ.get("TILESCALE_CUDA_ARCH", "sm_90a") if a.target == "cuda" else "C"))
    out.append("")
    out.append("| | kernels | compiled | coverage |")
    out.append("|---|---|---|---|")
    out.append("| all | %d | %d | %.1f%% |" % (total, ok, 100.0 * ok / max(1, total)))
    out.append("| without the by-design ones (%d) | %d | %d | %.1f%% |"
               % (design, total - design, ok, 100.0 * ok / max(1, total - design)))
    out.append("")
    out.append("Failures by cause (%d with a guessed parameter among them):" % guessed_fail)
    out.append("")
    out.append("| cause | kernels |")
    out.append("|---|---|")
    for c, n in causes.most_common():
        out.append("| %s | %d |" % (c.replace("|", "\\|"), n))
    out.append("")
    out.append("By design (hardware paths not built; a clear error naming the construct):")
    out.append("")
    out.append("| construct | kernels |")
    out.append("|---|---|")
    for c, n in dcauses.most_common():
        out.append("| %s | %d |" % (c, n))
    print("\n".join(out))
    if a.md:
        with open(a.md, "w") as f:
            f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
