"""`python -m tilescale ...`: run a TileLang script, or the C command line tool.

    python -m tilescale SCRIPT.py [args...]   run SCRIPT as __main__ with
                                              `import tilelang` resolving to
                                              the shim (tilescale.tilelang):
                                              its kernels compiled by us
    python -m tilescale run|compile|list|cache|launch ...
                                              the `tilescale` CLI (the C
                                              binary installed with the
                                              package, or the build tree's)
    python -m tilescale --version             the package's version and
                                              library, then the CLI's

The script runs in this process (runpy), with sys.argv[0] set to it and
its directory first on sys.path, as `python SCRIPT` would; a test_*.py
file with $TILESCALE_TEST=NAME set is imported instead and its test NAME
run, as pytest would (bench/tilelang_examples.sh runs tests so).
"""
import os
import runpy
import shutil
import sys

# The commands of the C command line tool (src/cli/main.c), run as they are.
CLI_COMMANDS = ("run", "compile", "list", "cache", "launch")

USAGE = """usage: python -m tilescale SCRIPT.py [args...]   run a TileLang script on tilescale
       python -m tilescale %s ...   the tilescale command line tool
       python -m tilescale --version""" % "|".join(CLI_COMMANDS)


def cli_path():
    """The C command line tool: next to the library in a build tree, in this
    interpreter's scripts directory (where `pip install .` puts it, also when
    the environment is not activated: venv/bin/python -m tilescale ...), else
    on PATH."""
    import sysconfig
    from . import _lib
    for d in (os.path.dirname(_lib.path), sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        here = os.path.join(d or ".", "tilescale")
        if os.path.isfile(here) and os.access(here, os.X_OK):
            return here
    found = shutil.which("tilescale")
    if found:
        return found
    raise SystemExit("tilescale: the command line tool was not found (build it, or pip install the package)")


def run_script(path, argv):
    from .tilelang import _stub
    _stub.install()
    sys.argv = [path] + list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    if os.environ.get("TILESCALE_TEST") and os.path.basename(path).startswith("test_"):
        run_test_module(path)
        return
    runpy.run_path(path, run_name="__main__")


def run_test_module(path):
    """A test file under $TILESCALE_TEST, the way pytest runs it: imported as
    a module of its own name (its __main__ block does not run: TileLang's GDN
    and GEMV test files call one test there by hand), then the named test
    through tilelang.testing's runner.  Python's, NumPy's and torch's
    generators are seeded with 0 first, as the conftest.py of TileLang's
    examples/ does for every pytest session."""
    import importlib.util
    from .tilelang import testing
    testing.set_random_seed(0)
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, os.path.abspath(path))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    testing.run_tests(vars(mod))


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    if argv[0] == "--version":
        from . import __version__, library_path
        print("tilescale %s (%s)" % (__version__, library_path()))
        sys.stdout.flush()
        try:
            exe = cli_path()
        except SystemExit:
            return 0  # the package alone (no command line tool installed)
        import subprocess
        return subprocess.call([exe, "--version"])
    if argv[0] in CLI_COMMANDS:
        exe = cli_path()
        os.execv(exe, [exe] + argv)
    if not os.path.exists(argv[0]):
        print("tilescale: no such script: %s\n%s" % (argv[0], USAGE), file=sys.stderr)
        return 2
    run_script(argv[0], argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
