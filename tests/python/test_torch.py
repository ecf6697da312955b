"""torch tensors: CPU tensors on the C target (where torch is installed),
CUDA tensors on the CUDA target (where a GPU is: run on the device by
bench/py_launch_overhead.sh): zero-copy launches on the current stream,
outputs allocated on the inputs' device, results against torch on fresh
random data, and the errors only torch can produce (devices, dtypes
NumPy lacks)."""
import os

import numpy as np
import pytest

import tilescale

torch = pytest.importorskip("torch")

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

@tilelang.jit(out_idx=[-1])
def scale(dtype="float16"):
    n = T.dynamic("n")
    @T.prim_func
    def main(X: T.Tensor((n,), dtype), s: T.float32, Y: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, 64), threads=64) as bx:
            for i in T.Parallel(64):
                if bx * 64 + i < n:
                    Y[bx * 64 + i] = X[bx * 64 + i] * s
    return main
"""

cuda = pytest.mark.skipif(not (torch.cuda.is_available() and tilescale.cuda_available()), reason="needs a GPU")


def test_cpu_tensors():
    k = tilescale.compile(SRC, "add", M=37, N=70)
    a, b = torch.randn(37, 70), torch.randn(37, 70)
    c = k(a, b)
    assert isinstance(c, torch.Tensor) and c.device.type == "cpu"
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)
    at = torch.randn(70, 37).t()  # non-contiguous
    torch.testing.assert_close(k(at, b), at + b, rtol=0, atol=0)
    with pytest.raises(tilescale.DTypeError):
        k(a.double(), b)
    with pytest.raises(tilescale.ShapeError):
        k(a[:5], b)
    with pytest.raises(tilescale.DeviceError):
        k(a.to("meta"), b)
    k2 = tilescale.compile(SRC, "scale", dtype="bfloat16")
    x = torch.randn(100).bfloat16()
    torch.testing.assert_close(k2(x, 0.5), (x.float() * 0.5).bfloat16())



def test_profiler_inputs_keep_their_dtypes():
    """The profiler's supplied inputs have the kernel's dtypes: torch.int8 for int8 (torch's
    float4_e2m1fn_x2, also accepted as int8 bytes, must not take its place: the H200 run of
    TileLang's dequant_gemm_w4a8 test failed on that), uint8, float16, float32."""
    from tilescale.profiler import make_tensor
    want = {"int8": torch.int8, "uint8": torch.uint8, "int32": torch.int32, "float16": torch.float16,
            "float32": torch.float32}
    for name, tdt in want.items():
        t = make_tensor((4, 6), name)
        assert t.dtype == tdt and tuple(t.shape) == (4, 6), (name, t.dtype)

@cuda
def test_cuda_tensors_zero_copy_current_stream():
    k = tilescale.compile(SRC, "add", M=1000, N=1000)
    assert k.target == "cuda"
    a = torch.randn(1000, 1000, device="cuda")
    b = torch.randn(1000, 1000, device="cuda")
    c = k(a, b)
    assert c.is_cuda
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)
    out = torch.full_like(a, float("nan"))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())  # a, b, out were made on the default stream
    with torch.cuda.stream(s):  # queued on the current (side) stream, after its work
        a2 = a * 2
        k(a2, b, out)
    s.synchronize()
    torch.testing.assert_close(out, a * 2 + b, rtol=0, atol=0)
    # strided CUDA views
    big = torch.randn(1000, 2000, device="cuda")
    v = big[:, ::2]
    torch.testing.assert_close(k(v, b), v + b, rtol=0, atol=0)
    assert "__global__" in k.get_kernel_source()


@cuda
@pytest.mark.parametrize("form", ["packed", "slots"])
def test_cuda_prepared_launch(monkeypatch, form):
    """After the first call of a signature, calls go through the launch prepared in C
    (ts_kernel_prepare_device): fresh inputs and outputs each time, outputs allocated
    and passed in, other streams, then another shape (the general path again).
    packed: the addresses and the stream in one ts_plan_launch_packed call (the
    default); slots: stored into the plan's slots, then ts_plan_launch."""
    from tilescale import _kernel
    monkeypatch.setattr(_kernel, "_LAUNCH_FORM", form)
    k = tilescale.compile(SRC, "add", M=300, N=200)
    a, b = torch.randn(300, 200, device="cuda"), torch.randn(300, 200, device="cuda")
    torch.testing.assert_close(k(a, b), a + b, rtol=0, atol=0)
    # the plan, not the records
    assert k._fast is not None and ("launch(K, pack(h, " if form == "packed" else "launch(K, so") in k._launcher_source
    for _ in range(3):
        a, b = torch.randn(300, 200, device="cuda"), torch.randn(300, 200, device="cuda")
        torch.testing.assert_close(k(a, b), a + b, rtol=0, atol=0)
        out = torch.full_like(a, float("nan"))
        assert k(a, b, out) is out
        torch.testing.assert_close(out, a + b, rtol=0, atol=0)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        a2 = a * 3
        c = k(a2, b)
    s.synchronize()
    torch.testing.assert_close(c, a * 3 + b, rtol=0, atol=0)
    with pytest.raises(tilescale.ShapeError):  # another shape: checked again in C
        k(a[:100], b[:100])
    torch.testing.assert_close(k(a, b), a + b, rtol=0, atol=0)


@cuda
def test_cuda_launcher_guard_says_no():
    """Tensors that torch's one-call check (TensorGuards) refuses but the Python
    tests accept (requires_grad, torch.inference_mode) run through the launcher,
    correctly; a wrong dtype, shape or device still raises as before, a strided
    input takes the general path."""
    from tilescale import _kernel
    k = tilescale.compile(SRC, "add", M=64, N=32)
    a, b = torch.randn(64, 32, device="cuda"), torch.randn(64, 32, device="cuda")
    torch.testing.assert_close(k(a, b), a + b, rtol=0, atol=0)
    guarded = _kernel._tensor_guard([a, b]) is not None
    assert ("if not check(a0, a1):" in k._launcher_source) == guarded
    general = []
    call = k._call
    k._call = lambda args, stream: (general.append(len(args)), call(args, stream))[1]
    ag = a.clone().requires_grad_()
    torch.testing.assert_close(k(ag, b), a + b, rtol=0, atol=0)
    with torch.inference_mode():
        ai, bi = a.clone(), b.clone()
        torch.testing.assert_close(k(ai, bi), a + b, rtol=0, atol=0)
        torch.testing.assert_close(k(a, b), a + b, rtol=0, atol=0)
    assert not general  # all through the launcher
    with pytest.raises(tilescale.DTypeError):
        k(a.double(), b)
    with pytest.raises(tilescale.ShapeError):
        k(a[:32], b[:32])
    with pytest.raises(tilescale.DeviceError):
        k(a.cpu(), b)
    at = torch.randn(32, 64, device="cuda").t()  # strided: its own signature, the general path first
    torch.testing.assert_close(k(at, b), at + b, rtol=0, atol=0)
    assert len(general) == 4
    torch.testing.assert_close(k(a, b), a + b, rtol=0, atol=0)


@cuda
def test_cuda_batched_outputs():
    """out_idx outputs from a batch (_kernel._ALLOC_FORM "split", on the default
    stream): every call's output is a tensor of its own (not a view, its own
    version counter, a distinct address), all kept outputs stay correct past the
    end of a batch, and on another stream each output is a fresh allocation."""
    from tilescale import _kernel
    assert _kernel._ALLOC_FORM == "split"
    k = tilescale.compile(SRC, "add", M=64, N=256)  # 64 KiB outputs: batches of 64
    xs = [(torch.randn(64, 256, device="cuda"), torch.randn(64, 256, device="cuda")) for _ in range(150)]
    outs = [k(a, b) for a, b in xs]
    assert "usplit(" in k._launcher_source
    for (a, b), o in zip(xs, outs):
        torch.testing.assert_close(o, a + b, rtol=0, atol=0)
    assert len({o.data_ptr() for o in outs}) == len(outs)
    assert all(o._base is None and not o._is_view() and o.is_contiguous() for o in outs)
    outs[1].add_(1)
    assert outs[1]._version == 1 and outs[0]._version == 0 and outs[2]._version == 0
    torch.testing.assert_close(outs[2], xs[2][0] + xs[2][1], rtol=0, atol=0)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        c = k(*xs[0])
        assert c.untyped_storage().nbytes() == c.numel() * c.element_size()  # its own allocation
    s.synchronize()
    torch.testing.assert_close(c, xs[0][0] + xs[0][1], rtol=0, atol=0)


@cuda
def test_cuda_dynamic_shapes_and_scalars():
    k = tilescale.compile(SRC, "scale")
    for n in (1, 63, 64, 1000, 4097):
        x = torch.randn(n, device="cuda", dtype=torch.float16)
        torch.testing.assert_close(k(x, 1.5), x * 1.5, rtol=1e-3, atol=1e-3)


@cuda
def test_cuda_errors():
    k = tilescale.compile(SRC, "add", M=64, N=64)
    a = torch.randn(64, 64, device="cuda")
    with pytest.raises(tilescale.DeviceError):
        k(a, a.cpu())
    with pytest.raises(tilescale.DTypeError):
        k(a.half(), a)
    with pytest.raises(tilescale.ShapeError):
        k(a[:32], a)
    kc = tilescale.compile(SRC, "add", target="c", M=64, N=64)
    with pytest.raises(tilescale.DeviceError):
        kc(a, a)
    if torch.cuda.device_count() > 1:
        with pytest.raises(tilescale.DeviceError):
            k(a.to("cuda:1"), a.to("cuda:1"))
    torch.testing.assert_close(k(a, a), a + a)


@cuda
def test_cuda_profile():
    k = tilescale.compile(SRC, "add", M=1024, N=1024)
    t = k.profile()
    assert 0 < t < 100
    prof = k.get_profiler()
    prof.assert_allclose(lambda x, y: x + y)


@cuda
def test_examples_gemm_cuda(root):
    k = tilescale.compile(os.path.join(root, "examples/gemm.py"), "matmul", M=512, N=256, K=384)
    a = torch.randn(512, 384, device="cuda", dtype=torch.float16)
    b = torch.randn(384, 256, device="cuda", dtype=torch.float16)
    torch.testing.assert_close(k(a, b), a @ b, rtol=1e-2, atol=1e-2)
    assert k.shared_memory and k.shared_memory > 0
    np.testing.assert_equal(k.grid, (2, 4, 1))
