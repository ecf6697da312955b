"""Finding the source text the C compiler should read for a Python function.

The compiler works on source text, never on Python objects, so a
decorated function must be turned back into (file, entry, compile-time
values).  Three cases:

  * a function defined at the top level of a file: the file itself, entry
    = the function's name.  Diagnostics then point into the user's file.
    Globals the function reads that the file's top level does not bind
    (a script's `if __name__ == "__main__":` block setting `H = 1` that a
    factory then reads, as Python allows) are appended to the file's text
    as `name = value` lines for their simple values (numbers, strings,
    bools, dtypes): after every line, so line numbers stay the file's.
  * a function defined inside another one (a factory written inside a test
    function, say): its own text (inspect.getsource), dedented, after the
    file's top-level import lines and `name = value` lines for the simple
    values (numbers, strings, bools) it takes from its closure and globals;
    blank lines keep its line numbers those of the file, so diagnostics
    still point at the right line.
  * a @T.prim_func that Python itself created by calling a factory (the
    shim's T.prim_func records the calling frame): the factory is the
    entry, and the factory's arguments in that frame are the compile-time
    values.  A prim_func at the top level of a file is its own entry.

What comes back is a SourceRef; compile() passes path/text/entry/params to
the C API.  lenient means compile-time values the entry does not take are
ignored (a frame's locals may include more than the factory's parameters).
"""
import inspect
import os
import re
import textwrap


class SourceRef:
    """Where a kernel's source is: path (for diagnostics and, when text is
    None, for reading), text (synthesized source, or None), entry (function
    name), params (compile-time values), out_idx (None: the source's own),
    lenient (ignore values the entry does not take)."""

    def __init__(self, path, text, entry, params=None, out_idx=None, lenient=False):
        self.path = path
        self.text = text
        self.entry = entry
        self.params = dict(params or {})
        self.out_idx = out_idx
        self.lenient = lenient


_SIMPLE = (bool, int, float, str)


def _simple(v):
    if isinstance(v, _SIMPLE):
        return True
    return bool(getattr(v, "__tilescale_dtype__", None))


def _literal(v):
    name = getattr(v, "__tilescale_dtype__", None)
    if name:
        return repr(name)
    return repr(v)


def _top_level_imports(path):
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError:
        return []
    out = []
    for ln in lines:
        if re.match(r"(import|from)\s+\S", ln) and not ln.rstrip().endswith(("(", "\\")):
            out.append(ln)
    return out


def _names_used(code):
    names = set(code.co_names) | set(code.co_freevars)
    for c in code.co_consts:
        if inspect.iscode(c):
            names |= _names_used(c)
    return names


def _is_top_level(code, name, globs):
    qual = getattr(code, "co_qualname", None)
    if qual is not None:
        return qual == name
    g = globs.get(name)
    return getattr(g, "__code__", None) is code


def _synthesize(code, path, values):
    """Source text for a nested function: imports, simple values, its own text."""
    try:
        body = textwrap.dedent(inspect.getsource(code))
    except (OSError, TypeError) as e:
        raise ValueError("tilescale: cannot find the source text of %s (%s); kernels must be written in a file"
                         % (code.co_name, e))
    prelude = _top_level_imports(path) + ["%s = %s" % (n, _literal(v)) for n, v in sorted(values.items())]
    first = code.co_firstlineno  # the def (or its first decorator) line in the file
    pad = max(0, first - 1 - len(prelude))
    return "\n".join(prelude) + "\n" * (pad + 1) + body


def _top_level_names(path):
    """Names the file's top level binds outside `if` blocks (assignments, defs,
    classes, imports), as far as Python's own parser tells; None if unreadable."""
    import ast
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return None
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                names.add((a.asname or a.name).split(".")[0])
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.With)):
            for t in ast.walk(node):
                if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store):
                    names.add(t.id)
    return names


def _script_globals(code, path, globs):
    """name -> value of the simple globals `code` reads that the file's top
    level does not bind (see the module's essay)."""
    bound = _top_level_names(path)
    if bound is None:
        return {}
    out = {}
    for n in _names_used(code):
        if n in bound or n not in globs or not _simple(globs[n]):
            continue
        if isinstance(globs[n], str) and ("\n" in globs[n] or len(globs[n]) > 200):
            continue
        out[n] = globs[n]
    return out


def from_code(code, globs, closure_values, params=None, out_idx=None, lenient=False):
    """SourceRef for the function whose code object is `code`."""
    path = inspect.getsourcefile(code) or code.co_filename
    if not path or not os.path.exists(path):
        raise ValueError("tilescale: %s was not defined in a file (%s); the compiler needs source text"
                         % (code.co_name, code.co_filename))
    if _is_top_level(code, code.co_name, globs):
        extra = _script_globals(code, path, globs)
        for n in (params or {}):
            extra.pop(n, None)
        if extra:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            text += "\n" + "".join("%s = %s\n" % (n, _literal(v)) for n, v in sorted(extra.items()))
            return SourceRef(path, text, code.co_name, params, out_idx, lenient)
        return SourceRef(path, None, code.co_name, params, out_idx, lenient)
    values = {}
    for n in _names_used(code):
        if n in closure_values and _simple(closure_values[n]):
            values[n] = closure_values[n]
        elif n in globs and _simple(globs[n]):
            values[n] = globs[n]
    for n in (params or {}):
        values.pop(n, None)
    return SourceRef(path, _synthesize(code, path, values), code.co_name, params, out_idx, lenient)


def _closure(func):
    out = {}
    for n, c in zip(func.__code__.co_freevars, func.__closure__ or ()):
        try:
            out[n] = c.cell_contents
        except ValueError:
            pass
    return out


def function_source(obj):
    """SourceRef for a function, a JitFunction, or a shim prim_func."""
    ref = getattr(obj, "__tilescale_source__", None)
    if ref is not None:
        return ref() if callable(ref) else ref
    func = getattr(obj, "func", None) if type(obj).__name__ == "JitFunction" else None
    func = func or getattr(obj, "__wrapped__", None) or obj
    if not hasattr(func, "__code__"):
        raise TypeError("tilescale: cannot compile a %s; give a file, source text or a function"
                        % type(obj).__name__)
    return from_code(func.__code__, func.__globals__, _closure(func))
