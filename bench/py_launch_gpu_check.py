#!/usr/bin/env python3
"""py_launch_gpu_check.py — the session 9 launcher forms on the GPU, checked
without pytest (the device image has none): each form (_kernel._LAUNCH_FORM
"packed", the default; "slots", session 8's), with and without torch's
TensorGuards check, on torch CUDA tensors against a + b:

  - out_idx outputs (past a batch of 64) and outputs passed in, fresh
    inputs each call, every output compared element by element;
  - another stream (the stream handle handed to the launch);
  - tensors torch's check refuses but the Python tests accept
    (requires_grad, torch.inference_mode): through the launcher, correct;
  - a wrong dtype, shape, device: the same exceptions as before;
  - a strided input: its own signature, correct.

Prints one line per form and "N passed, M failed"; exit 1 if any failed,
77 without torch or a GPU.

    TILESCALE_LIB=build-gpu/libtilescale.so PYTHONPATH=python python3 bench/py_launch_gpu_check.py
"""
import os
import sys
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
try:
    import torch
except ImportError:
    print("SKIP: no torch")
    sys.exit(77)
if not torch.cuda.is_available():
    print("SKIP: torch has no CUDA device")
    sys.exit(77)
import tilescale  # noqa: E402
from tilescale import _kernel  # noqa: E402

SRC = """
import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1])
def add(M, N, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, 32), T.ceildiv(M, 4), threads=128) as (bx, by):
            for i, j in T.Parallel(4, 32):
                if by * 4 + i < M and bx * 32 + j < N:
                    C[by * 4 + i, bx * 32 + j] = A[by * 4 + i, bx * 32 + j] + B[by * 4 + i, bx * 32 + j]
    return main
"""
CALL = {"packed": "launch(K, pack(h, ", "slots": "launch(K, so"}


def close(x, y):
    torch.cuda.synchronize()
    torch.testing.assert_close(x, y, rtol=0, atol=0)


def check(form, guard):
    _kernel._LAUNCH_FORM, _kernel._GUARD = form, guard
    k = tilescale.compile(SRC, "add", M=64, N=256)  # 64 KiB outputs: batches of 64
    a, b = torch.randn(64, 256, device="cuda"), torch.randn(64, 256, device="cuda")
    close(k(a, b), a + b)
    src = k._launcher_source
    assert CALL[form] in src, src
    assert ("if not check(a0, a1):" in src) == (guard and _kernel._tensor_guard([a, b]) is not None), src
    general = []
    call = k._call
    k._call = lambda args, stream: (general.append(len(args)), call(args, stream))[1]
    xs = [(torch.randn(64, 256, device="cuda"), torch.randn(64, 256, device="cuda")) for _ in range(70)]
    outs = [k(x, y) for x, y in xs]
    for (x, y), o in zip(xs, outs):
        close(o, x + y)
    assert len({o.data_ptr() for o in outs}) == 70
    c = torch.full_like(a, float("nan"))
    assert k(a, b, c) is c  # a new signature: the general path once
    close(c, a + b)
    for x, y in xs[:5]:
        c.fill_(float("nan"))
        assert k(x, y, c) is c
        close(c, x + y)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        a3 = a * 3
        o = k(a3, b)
    s.synchronize()
    close(o, a * 3 + b)
    # (each switch between the out_idx and the passed-in signature went the
    # general path once, which reinstalled that signature's launcher)
    assert general == [3, 2], general
    ag = a.clone().requires_grad_()
    close(k(ag, b), a + b)
    with torch.inference_mode():
        ai, bi = a.clone(), b.clone()
        close(k(ai, bi), a + b)
    assert general == [3, 2], general  # torch's check said no, the Python tests yes: the launcher
    for bad, exc in ((a.double(), tilescale.DTypeError), (a[:32], tilescale.ShapeError), (a.cpu(), tilescale.DeviceError)):
        try:
            k(bad, b if bad.shape == b.shape else b[:32])
        except exc:
            pass
        else:
            raise AssertionError("no %s" % exc.__name__)
    at = torch.randn(256, 64, device="cuda").t()
    close(k(at, b), at + b)
    close(k(a, b), a + b)


passed = failed = 0
saved = _kernel._LAUNCH_FORM, _kernel._GUARD
print("GPU: %s; torch %s; TensorGuards usable: %s" % (
    torch.cuda.get_device_name(), torch.__version__, _kernel._tensor_guard([torch.zeros(2, device="cuda")]) is not None))
for form in ("packed", "slots"):
    for guard in (True, False):
        try:
            check(form, guard)
            passed += 1
            print("PASS %s guard=%s" % (form, guard))
        except Exception:
            failed += 1
            print("FAIL %s guard=%s" % (form, guard))
            traceback.print_exc()
        finally:
            _kernel._LAUNCH_FORM, _kernel._GUARD = saved
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
