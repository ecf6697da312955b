"""pyast_dump.py -- a developer tool, not a test: print CPython's own parse
tree of .py files in the s-expression format of ast_dump_module (ast.c),
so the C front end can be compared against an independent parser:

    python3 tests/tools/pyast_dump.py FILE...     > /tmp/ref.txt
    /tmp/parse_corpus -q -dump FILE...            > /tmp/got.txt

f-string contents are printed as f"<?>" (CPython keeps no raw text); the
caller normalizes the C dump the same way before comparing.
"""
import ast
import sys

BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
          ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>",
          ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.MatMult: "@"}
CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
          ast.GtE: ">=", ast.In: "in", ast.NotIn: "not-in", ast.Is: "is", ast.IsNot: "is-not"}
UNOPS = {ast.USub: "u-", ast.UAdd: "u+", ast.Not: "not", ast.Invert: "~"}


def qstr(bs):
    out = ['"']
    for c in bs:
        if c in (34, 92):
            out.append("\\" + chr(c))
        elif c == 10:
            out.append("\\n")
        elif c == 9:
            out.append("\\t")
        elif c < 32 or c == 127:
            out.append("\\x%02x" % c)
        else:
            out.append(chr(c))  # latin-1 view of the UTF-8 bytes
    out.append('"')
    return "".join(out)


def fmt_float(v):
    s = None
    for p in range(1, 18):
        s = "%.*g" % (p, v)
        if float(s) == v:
            break
    if not any(ch in s for ch in ".eEn"):
        s += ".0"
    return s


def params(a, lam=False):
    out = ["(params"]
    pos = list(a.posonlyargs) + list(a.args)
    defaults = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)

    def one(arg, dflt, pre=""):
        ann = None if lam else arg.annotation
        if ann is None and dflt is None:
            return pre + arg.arg
        s = "(" + pre + arg.arg
        if ann is not None:
            s += " : " + ex(ann)
        if dflt is not None:
            s += " = " + ex(dflt)
        return s + ")"

    for i, (p, d) in enumerate(zip(pos, defaults)):
        out.append(one(p, d))
        if i == len(a.posonlyargs) - 1:
            out.append("/")
    if a.vararg:
        out.append(one(a.vararg, None, "*"))
    elif a.kwonlyargs:
        out.append("*")
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append(one(p, d))
    if a.kwarg:
        out.append(one(a.kwarg, None, "**"))
    return " ".join(out) + ")"


def ex(e):
    t = type(e)
    if t is ast.Name:
        return e.id
    if t is ast.Constant:
        v = e.value
        if v is True:
            return "True"
        if v is False:
            return "False"
        if v is None:
            return "None"
        if v is Ellipsis:
            return "..."
        if isinstance(v, int):
            return str(v)
        if isinstance(v, float):
            return fmt_float(v)
        if isinstance(v, str):
            return qstr(v.encode("utf-8", "surrogatepass"))
        if isinstance(v, bytes):
            return qstr(v)
        return "<?const>"
    if t is ast.JoinedStr:
        return 'f"<?>"'
    if t is ast.BinOp:
        return "(%s %s %s)" % (BINOPS[type(e.op)], ex(e.left), ex(e.right))
    if t is ast.BoolOp:
        op = "and" if isinstance(e.op, ast.And) else "or"
        s = ex(e.values[0])
        for v in e.values[1:]:
            s = "(%s %s %s)" % (op, s, ex(v))
        return s
    if t is ast.UnaryOp:
        return "(%s %s)" % (UNOPS[type(e.op)], ex(e.operand))
    if t is ast.Compare:
        s = "(cmp " + ex(e.left)
        for op, c in zip(e.ops, e.comparators):
            s += " %s %s" % (CMPOPS[type(op)], ex(c))
        return s + ")"
    if t is ast.IfExp:
        return "(ifexp %s %s %s)" % (ex(e.test), ex(e.body), ex(e.orelse))
    if t is ast.Call:
        items = [(a.lineno, a.col_offset, ex(a)) for a in e.args]
        for k in e.keywords:
            if k.arg is None:
                items.append((k.lineno, k.col_offset, "(** %s)" % ex(k.value)))
            else:
                items.append((k.lineno, k.col_offset, "%s=%s" % (k.arg, ex(k.value))))
        items.sort(key=lambda x: (x[0], x[1]))
        return "(call " + " ".join([ex(e.func)] + [x[2] for x in items]) + ")"
    if t is ast.Attribute:
        return "(. %s %s)" % (ex(e.value), e.attr)
    if t is ast.Subscript:
        return "([] %s %s)" % (ex(e.value), ex(e.slice))
    if t is ast.Slice:
        o = lambda x: "_" if x is None else ex(x)
        return "(: %s %s %s)" % (o(e.lower), o(e.upper), o(e.step))
    if t in (ast.Tuple, ast.List, ast.Set):
        name = {ast.Tuple: "tuple", ast.List: "list", ast.Set: "set"}[t]
        return "(" + " ".join([name] + [ex(x) for x in e.elts]) + ")"
    if t is ast.Dict:
        parts = ["dict"]
        for k, v in zip(e.keys, e.values):
            if k is None:
                parts += ["(** %s)" % ex(v)] * 2
            else:
                parts += [ex(k), ex(v)]
        return "(" + " ".join(parts) + ")"
    if t is ast.Starred:
        return "(* %s)" % ex(e.value)
    if t is ast.Lambda:
        return "(lambda %s %s)" % (params(e.args, True), ex(e.body))
    if t in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
        kind = {ast.ListComp: "list", ast.SetComp: "set", ast.GeneratorExp: "gen",
                ast.DictComp: "dict"}[t]
        elt = e.key if t is ast.DictComp else e.elt
        return "(comp %s %s %s)" % (kind, ex(elt), ex(e.generators[0].iter))
    if t in (ast.Yield, ast.YieldFrom):
        return "(yield %s)" % ex(e.value) if e.value is not None else "(yield)"
    return "<?%s>" % t.__name__


def block(body, ind):
    out = ""
    for s in body:
        for line in stmt_lines(s, ind):
            out += "\n" + "  " * ind + line
    return out


def stmt_lines(s, ind):
    """One dump line per statement, except imports: one per imported name."""
    if type(s) is ast.Import:
        return ["(import %s%s)" % (a.name, " as " + a.asname if a.asname else "")
                for a in s.names]
    if type(s) is ast.ImportFrom:
        mod = "." * s.level + (s.module or "")
        return ["(from %s import %s%s)" % (mod, a.name, " as " + a.asname if a.asname else "")
                for a in s.names]
    return [st(s, ind)]


def bodies(s, ind, orelse=True):
    out = block(s.body, ind + 1)
    if orelse and getattr(s, "orelse", None):
        out += "\n" + "  " * (ind + 1) + "else" + block(s.orelse, ind + 1)
    return out + ")"


def st(s, ind):
    t = type(s)
    if t is ast.Expr:
        return "(expr %s)" % ex(s.value)
    if t is ast.Assign:
        return "(= " + " ".join([ex(x) for x in s.targets] + [ex(s.value)]) + ")"
    if t is ast.AugAssign:
        return "(%s= %s %s)" % (BINOPS[type(s.op)], ex(s.target), ex(s.value))
    if t is ast.AnnAssign:
        v = "" if s.value is None else " " + ex(s.value)
        return "(ann %s %s%s)" % (ex(s.target), ex(s.annotation), v)
    if t is ast.If:
        return "(if " + ex(s.test) + bodies(s, ind)
    if t is ast.While:
        return "(while " + ex(s.test) + bodies(s, ind)
    if t is ast.For:
        return "(for %s %s" % (ex(s.target), ex(s.iter)) + bodies(s, ind)
    if t is ast.With:
        items = []
        for it in s.items:
            if it.optional_vars is None:
                items.append(ex(it.context_expr))
            else:
                items.append("(as %s %s)" % (ex(it.context_expr), ex(it.optional_vars)))
        return "(with " + " ".join(items) + bodies(s, ind)
    if t in (ast.FunctionDef, ast.ClassDef):
        h = ("(def " if t is ast.FunctionDef else "(class ") + s.name
        for d in s.decorator_list:
            h += " (@ %s)" % ex(d)
        if t is ast.FunctionDef:
            h += " " + params(s.args)
            if s.returns is not None:
                h += " -> " + ex(s.returns)
        return h + bodies(s, ind, False)
    if t is ast.Return:
        return "(return %s)" % ex(s.value) if s.value is not None else "(return)"
    if t is ast.Raise:
        return "(raise %s)" % ex(s.exc) if s.exc is not None else "(raise)"
    if t is ast.Pass:
        return "(pass)"
    if t is ast.Break:
        return "(break)"
    if t is ast.Continue:
        return "(continue)"
    if t in (ast.Global, ast.Nonlocal):
        return "(global " + " ".join(s.names) + ")"
    if t is ast.Delete:
        return "(del " + " ".join(ex(x) for x in s.targets) + ")"
    if t is ast.Assert:
        m = "" if s.msg is None else " " + ex(s.msg)
        return "(assert %s%s)" % (ex(s.test), m)
    if t in (ast.Try, getattr(ast, "TryStar", ast.Try)):
        return "(try" + bodies(s, ind, False)
    return "<?%s>" % t.__name__


def main():
    sys.stdout.reconfigure(encoding="latin-1")
    for path in sys.argv[1:]:
        src = open(path, "rb").read()
        try:
            tree = ast.parse(src, path)
        except SyntaxError as e:
            print("=== %s\nSYNTAX ERROR %s" % (path, e))
            continue
        sys.stdout.write("=== %s\n" % path)
        for s in tree.body:
            for line in stmt_lines(s, 0):
                sys.stdout.write(line + "\n")


if __name__ == "__main__":
    main()
