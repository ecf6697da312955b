"""tilelang.autotuner: @autotune and AutoTuner, as a small real tuner.

A script's tunable factory is called once per configuration (a dict of
compile-time values); each kernel that compiles is timed with do_bench,
and the fastest is returned, with .config and .latency set as TileLang
sets them.  Compiling every configuration of a big search space is slow
(NVRTC takes a second or more per GEMM), so at most
$TILESCALE_AUTOTUNE_MAX configurations are tried, 1 by default: then the
first configuration that compiles is used without timing, which makes
@autotune a pass-through that keeps example scripts fast.  Configurations
that fail to compile are skipped; if none compiles the first error is
raised.  When the caller gives every tuned value itself, no tuning
happens at all.
"""
import inspect
import os

import tilescale as _ts



def _max_configs():
    try:
        return max(1, int(os.environ.get("TILESCALE_AUTOTUNE_MAX", "1")))
    except ValueError:
        return 1


def _configs(configs, args, kwargs):
    if callable(configs):
        try:
            configs = configs(*args, **kwargs)
        except TypeError:
            configs = configs()
    if isinstance(configs, dict):  # {name: [values]} -> the product
        import itertools
        keys = list(configs)
        configs = [dict(zip(keys, vals)) for vals in itertools.product(*(configs[k] for k in keys))]
    return [dict(c) for c in (configs or [])]


def _as_kernel(obj, out_idx=None, target="auto"):
    if isinstance(obj, _ts.Kernel):
        return obj
    return _ts.compile(obj, out_idx=out_idx, target=target)


def _tune(make, configs, warmup, rep, ref_prog=None, supply=None):
    """Compile make(cfg) for up to N configs, time them, return the best kernel."""
    limit = _max_configs()
    best = None
    first_err = None
    tried = 0
    for cfg in configs:
        if tried >= limit:
            break
        try:
            k = make(cfg)
        except _ts.TileScaleError as e:
            first_err = first_err or e
            continue
        tried += 1
        lat = None
        if limit > 1:
            prof = k.get_profiler(supply)
            lat = prof.do_bench(warmup=warmup, rep=rep)
        if best is None or (lat is not None and lat < best[1]):
            best = (k, lat, cfg)
    if best is None:
        if first_err is not None:
            raise first_err
        raise ValueError("autotune: no configurations")
    k, lat, cfg = best
    k.config = cfg
    k.latency = lat
    k.ref_latency = None
    if ref_prog is not None and lat is not None:
        try:
            k.ref_latency = k.get_profiler(supply).do_bench(ref_prog, warmup=warmup, rep=rep)
        except Exception:
            pass
    return k


class _Autotuned:
    def __init__(self, func, configs, warmup, rep):
        self.func = func
        self.configs = configs
        self.warmup = warmup
        self.rep = rep
        self.__name__ = getattr(func, "__name__", "kernel")
        self.__wrapped__ = func

    def __call__(self, *args, **kwargs):
        cfgs = _configs(self.configs, args, kwargs)
        target = getattr(self.func, "func", self.func)
        try:
            given = set(inspect.signature(target).bind_partial(*args, **kwargs).arguments)
        except TypeError:
            given = set(kwargs)
        if not cfgs or all(set(c) <= given for c in cfgs):
            return self.func(*args, **kwargs)

        def make(cfg):
            kw = dict(kwargs)
            kw.update({n: v for n, v in cfg.items() if n not in given})
            return _as_kernel(self.func(*args, **kw))
        return _tune(make, cfgs, self.warmup, self.rep)

    def compile(self, *args, **kwargs):
        """The tuned kernel for these compile-time values (TileLang's jit_func.compile)."""
        k = self(*args, **kwargs)
        return k if isinstance(k, _ts.Kernel) else _as_kernel(k)

    def get_kernel_source(self, *args, **kwargs):
        return self.compile(*args, **kwargs).get_kernel_source()


class set_autotune_inputs:
    """with set_autotune_inputs(*tensors): the inputs TileLang's tuner times the
    configurations on.  Here they are kept (_tune_inputs) for the duration; the
    tuner times with its own supplied inputs, so tuning results may differ, the
    chosen kernel is correct either way."""

    _stack = []

    def __init__(self, *inputs):
        self.inputs = inputs

    def __enter__(self):
        set_autotune_inputs._stack.append(self.inputs)
        return self

    def __exit__(self, *exc):
        set_autotune_inputs._stack.pop()
        return False


def autotune(func=None, *, configs=None, warmup=25, rep=100, timeout=100, **_ignored):
    """@autotune(configs=[{...}, ...], warmup=..., rep=...) over a @tilelang.jit factory."""
    if func is None:
        return lambda f: _Autotuned(f, configs, warmup, rep)
    return _Autotuned(func, configs, warmup, rep)


class AutotuneResult:
    """latency, config, ref_latency, kernel (and func, libcode for compatibility)."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.latency = kernel.latency
        self.config = kernel.config
        self.ref_latency = kernel.ref_latency
        self.func = None
        self.libcode = kernel.get_kernel_source()


class AutoTuner:
    """AutoTuner.from_kernel(kernel=factory, configs=...).set_compile_args(...).set_profile_args(...).run()."""

    def __init__(self, fn, configs):
        self.fn = fn
        self.configs = configs
        self.out_idx = None
        self.target = "auto"
        self.ref_prog = None
        self.supply = None

    @classmethod
    def from_kernel(cls, kernel, configs):
        return cls(kernel, configs)

    def set_compile_args(self, out_idx=None, target="auto", **_ignored):
        self.out_idx = out_idx
        self.target = target
        return self

    def set_profile_args(self, supply_type=None, ref_prog=None, **_ignored):
        self.supply = supply_type
        self.ref_prog = ref_prog
        return self

    def run(self, warmup=25, rep=100, timeout=30):
        cfgs = _configs(self.configs, (), {})

        def make(cfg):
            return _as_kernel(self.fn(**cfg), self.out_idx, self.target)
        return AutotuneResult(_tune(make, cfgs, warmup, rep, self.ref_prog, self.supply))
