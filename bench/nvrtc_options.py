#!/usr/bin/env python3
# nvrtc_options.py — where does a cold CUDA build's time go, and what would
# an NVRTC option change?  A benchmark script (not a test), no GPU needed.
#
# The CUDA source of every example at its bench configuration (the
# `# ARGS:` lines of tests/golden/cuda_*.py, printed by `tilescale compile
# --emit cuda`, architecture $TILESCALE_CUDA_ARCH, default sm_90) is
# compiled by NVRTC in this process, through ctypes, under one or more
# option sets, the sets interleaved run by run so that a machine whose load
# changes treats them alike.  Per example and set: wall time (median and
# min), the process's CPU time (median: on a busy machine it moves far
# less than wall time), NVRTC's own phases (--time=-: front end, NVVM
# optimizer, ptxas; medians), the cubin's size and whether it is
# byte-identical to the first set's (identical cubins cannot differ in
# speed; anything else needs a GPU timing before it is adopted).
#
# The first set is what the library passes today (src/target/cuda/nvrtc.c:
# -default-device --std=c++17, and -minimal from NVRTC 13; plus, per kernel,
# the ptxas --register-usage-level its second line asks for); others come
# from --set "label:opt opt ..." (added to the first set's options) or
# --set-full "label:opt opt ..." (instead of them; the architecture stays).  A chain of kernels (split-K) is
# compiled kernel by kernel and summed.
#
#   python3 bench/nvrtc_options.py [--runs N] [--only SUBSTR,...] [--set "label:opts"]...
#       [--set-full "label:opts"]... [--file X.cu]... [--cuinit]
# --file compiles that file as it is (alone, unless --only names examples
# too); --cuinit calls the driver's cuInit first, as a build on a machine
# with a GPU does before it compiles.  Runs are the outer loop (every
# example and set once per run), so two --file variants of one kernel are
# interleaved too.
# Environment: TS (our CLI, default ./build/tilescale), TILESCALE_NVRTC
# (the library file), TILESCALE_CUDA_ARCH.
import ctypes
import glob
import os
import re
import statistics
import subprocess
import sys
import time

# NVRTC 13 keeps compiled code in the driver's compute cache where a driver
# is present (a second compile of the same code skips NVVM and ptxas); off
# here unless the environment sets CUDA_CACHE_DISABLE (read at NVRTC's
# first compile, so before the library is used).
os.environ.setdefault("CUDA_CACHE_DISABLE", "1")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TS = os.environ.get("TS", os.path.join(ROOT, "build", "tilescale"))
ARCH = os.environ.get("TILESCALE_CUDA_ARCH", "sm_90")
PHASES = (("CUDA C++ Frontend", "front end"), ("NVVM Optimizer", "nvvm"), ("PTX Translation", "ptxas"))


def nvrtc_lib():
    env = os.environ.get("TILESCALE_NVRTC")
    if env:
        return env
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home and os.path.exists(os.path.join(home, "lib64", "libnvrtc.so")):
            return os.path.join(home, "lib64", "libnvrtc.so")
    return "libnvrtc.so"


L = ctypes.CDLL(nvrtc_lib())


def version():
    a, b = ctypes.c_int(), ctypes.c_int()
    L.nvrtcVersion(ctypes.byref(a), ctypes.byref(b))
    return a.value, b.value


def compile_once(src, opts):
    """(wall ms, cpu ms, {phase: ms}, cubin bytes) or raises with the log."""
    prog = ctypes.c_void_p()
    opts = list(opts) + ["--time=-"]
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    t0, c0 = time.perf_counter(), time.process_time()
    L.nvrtcCreateProgram(ctypes.byref(prog), src, b"k.cu", 0, None, None)
    r = L.nvrtcCompileProgram(prog, len(opts), arr)
    wall, cpu = (time.perf_counter() - t0) * 1e3, (time.process_time() - c0) * 1e3
    n = ctypes.c_size_t()
    L.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
    log = ctypes.create_string_buffer(n.value)
    L.nvrtcGetProgramLog(prog, log)
    log = log.value.decode(errors="replace")
    img = b""
    if r == 0:
        L.nvrtcGetCUBINSize(prog, ctypes.byref(n))
        b = ctypes.create_string_buffer(n.value)
        L.nvrtcGetCUBIN(prog, b)
        img = b.raw
    L.nvrtcDestroyProgram(ctypes.byref(prog))
    if r != 0:
        raise RuntimeError(log[-1500:])
    ph = {short: float(m.group(1)) for name, short in PHASES
          for m in [re.search(r"k\.cu, %s, ([0-9.]+), ms" % re.escape(name), log)] if m}
    return wall, cpu, ph, img


def kernel_opts(src, vmaj):
    """The options the library adds for this kernel (src/target/cuda/nvrtc.c):
    the ptxas register-usage level its second line asks for, and ptxas's
    fast-compile level where the line asks for that too (NVRTC 13, cubins);
    NVRTC's own fast-compile level for a quick tier (TILESCALE_TIERED=quick)."""
    lines = src.split(b"\n", 3)
    # a quick tier asks NVRTC as a whole for --Ofast-compile=min on a line of its own (tier_plan)
    quick = ["--Ofast-compile=min"] if vmaj >= 13 and any(
        ln.startswith(b"/* quick tier: nvrtc --Ofast-compile=min */") for ln in lines[1:3]) else []
    m = re.match(rb"/\* ptxas --register-usage-level=(\d+)( --Ofast-compile=min)?", lines[1]) if len(lines) > 1 else None
    if not (m and vmaj >= 13 and ARCH.startswith("sm_")):
        return quick
    return ["-Xptxas", "--register-usage-level=" + m.group(1).decode()] + (
        ["-Xptxas", "--Ofast-compile=min"] if m.group(2) else []) + quick


def cases(only):
    """[(label, [kernel sources])] from the golden files' ARGS lines."""
    out = []
    for f in sorted(glob.glob(os.path.join(ROOT, "tests", "golden", "cuda_*.py"))):
        label = os.path.basename(f)[5:-3]
        if only and not any(o in label for o in only):
            continue
        args = next((ln[8:].split() for ln in open(f) if ln.startswith("# ARGS: ")), None)
        if not args:
            continue
        args = [os.path.relpath(f, ROOT) if a == "FILE" else a for a in args]
        env = dict(os.environ, TILESCALE_CUDA_ARCH=ARCH)
        r = subprocess.run([TS] + args, cwd=ROOT, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            print("%s: %s" % (label, r.stderr.strip()[:300]), file=sys.stderr)
            continue
        parts = re.split(r"\n/\* ---- the next kernel of the chain.*?\*/\n", r.stdout)
        out.append((label, [p.encode() for p in parts]))
    return out


def main():
    runs, only, sets, files = 3, [], [], []
    argv = sys.argv[1:]
    while argv:
        a = argv.pop(0)
        if a == "--runs" and argv:
            runs = int(argv.pop(0))
        elif a == "--only" and argv:
            only += argv.pop(0).split(",")
        elif a == "--cuinit":
            # initialize the driver in this process first, as a build on a
            # machine with a GPU does (it asks the device's architecture)
            cu = ctypes.CDLL(os.environ.get("TILESCALE_LIBCUDA", "libcuda.so.1"))
            print("cuInit(0) = %d before compiling" % cu.cuInit(0))
        elif a == "--file" and argv:
            # a .cu file as it is (e.g. the library's cached tsk-*.cu), besides the examples
            f = argv.pop(0)
            files.append((os.path.basename(f), [open(f, "rb").read()]))
        elif a in ("--set", "--set-full") and argv:
            label, _, opts = argv.pop(0).partition(":")
            sets.append((label, opts.split(), a == "--set-full"))
        else:
            sys.exit("usage: nvrtc_options.py [--runs N] [--only SUBSTR] [--set 'label:opts']... "
                     "[--set-full 'label:opts']... [--file X.cu]... [--cuinit]")
    vmaj, vmin = version()
    base = ["--gpu-architecture=" + ARCH, "-default-device", "--std=c++17"] + (["-minimal"] if vmaj >= 13 else [])
    sets = [("library", [], False)] + sets
    print("NVRTC %d.%d, %s, %d runs per set (interleaved); base options: %s; CUDA_CACHE_DISABLE=%s\n" % (
        vmaj, vmin, ARCH, runs, " ".join(base), os.environ["CUDA_CACHE_DISABLE"]))
    print("| example | set | wall median | wall min | cpu median | front end | nvvm | ptxas | cubin bytes | same cubin |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    items = files + (cases(only) if only or not files else [])
    # every example and set once per run, runs outermost: a machine whose
    # load drifts treats all examples (and the before/after files of an A/B)
    # alike
    res = {(label, s[0]): [] for label, _ in items for s in sets}
    imgs = {}
    for _ in range(runs):
        for label, parts in items:
            for s, extra, full in sets:
                tot = [0.0, 0.0, {}, b""]
                try:
                    for p in parts:
                        w, c, ph, img = compile_once(p, (base[:1] if full else base) + extra + kernel_opts(p, vmaj))
                        tot[0] += w
                        tot[1] += c
                        for k, v in ph.items():
                            tot[2][k] = tot[2].get(k, 0) + v
                        tot[3] += img
                except RuntimeError as e:
                    tot = None
                    print("%s [%s]: %s" % (label, s, str(e).strip().splitlines()[-1]), file=sys.stderr)
                res[(label, s)].append(tot)
                if tot:
                    imgs[(label, s)] = tot[3]
    for label, _ in items:
        for s, _, _ in sets:
            ok = [t for t in res[(label, s)] if t]
            if not ok:
                print("| %s | %s | fails | | | | | | | |" % (label, s))
                continue
            med = lambda i: statistics.median(t[i] for t in ok)
            phm = lambda k: "%.0f" % statistics.median(t[2].get(k, 0) for t in ok)
            same = "—" if s == sets[0][0] else ("yes" if imgs.get((label, s)) == imgs.get((label, sets[0][0])) else "no")
            print("| %s | %s | %.0f | %.0f | %.0f | %s | %s | %s | %d | %s |" % (
                label, s, med(0), min(t[0] for t in ok), med(1), phm("front end"), phm("nvvm"), phm("ptxas"),
                len(imgs[(label, s)]), same))
        sys.stdout.flush()

if __name__ == "__main__":
    main()
