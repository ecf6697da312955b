#!/bin/bash
# tlex_gpu_check.sh — session 11 (helper tlex): TileLang's example tests that used to fail on
# our compiler, on a real GPU (a few minutes).
#  1. our own kernels on torch CUDA tensors against the C target / torch (outputs poisoned,
#     fresh random inputs): tests/run/kernels/widen_frag.py sink_rows and grid2 (fragments
#     indexed past their declared extent by a T.Parallel nest, widened) against their naive
#     kernels run on the CUDA target too; tests/run/kernels/gemm_sp.py gemm_sp (T.gemm_sp:
#     2:4 sparse A expanded + tensor-core gemm) against torch's dense matmul of the decoded A,
#     int16 and int8 metadata, B transposed;
#  2. TileLang's own test functions, unchanged, through `python -m tilescale`:
#     attention_sink's four backward tests (sinks[i] over T.Parallel(block_M)), gemm_sp's
#     test_example_gemm_sp (its compressor kernel + T.gemm_sp, torch assert_close), and the
#     grouped GEMM by pointers test.
#
#   B=build-gpu bash bench/tlex_gpu_check.sh   # from the repository root, carry [".tl-examples"]; builds $B
# One PASS/FAIL line per check, then "N passed, N failed".  Exit 1 if anything failed, 77 without a GPU.
set -u
cd "$(dirname "$0")/.."
B=${B:-build-gpu}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TILESCALE_CACHE_DIR=$PWD/$B/kcache
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then echo "skipped: no GPU"; exit 77; fi
if [ ! -x "$B/tilescale" ] || [ ! -f "$B/libtilescale.so" ]; then
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
    cmake --build "$B" -j"$(nproc)" --target tilescale_cli tilescale >/dev/null || { echo "BUILD FAILED"; exit 1; }
fi
passes=0
fails=0
res() { # label status output
  if [ "$2" -eq 0 ]; then echo "PASS $1"; passes=$((passes + 1)); else echo "FAIL $1"; echo "$3" | tail -15; fails=$((fails + 1)); fi
}
# 1. our kernels: the CUDA target against the naive kernel (run by the CLI on the GPU) ...
cli() { # label args...
  local label=$1 out
  shift
  out=$(timeout 300 "$B/tilescale" run "$@" --target cuda 2>&1)
  [ $? -eq 0 ] && echo "$out" | grep -q '^PASS$'
  res "$label" $? "$out"
}
f=tests/run/kernels/widen_frag.py
cli "widen_frag sink_rows (heads=4, block_M=64) vs naive, CUDA" $f --entry sink_rows --check-against sink_rows_naive
cli "widen_frag sink_rows (heads=8, block_M=64, N=64) vs naive, CUDA" $f --entry sink_rows -D heads=8 -D N=64 --check-against sink_rows_naive
cli "widen_frag grid2 (16x32 over [2, 8]) vs naive, CUDA" $f --entry grid2 --check-against grid2_naive
f=tests/run/kernels/gemm_sp.py
cli "gemm_sp 256x256x256 int16 vs naive, CUDA" $f --entry gemm_sp -D M=256 -D N=256 -D K=256 --check-against gemm_sp_naive --rtol 1e-3 --atol 1e-3
cli "gemm_sp 128x128x256 int8, B^T vs naive, CUDA" $f --entry gemm_sp -D M=128 -D N=128 -D K=256 -D e_dtype=int8 -D trans_b=True --check-against gemm_sp_naive --rtol 1e-3 --atol 1e-3
# the gemm_sp example's compressor pattern (T.copy / T.clear of per-thread registers, 2-D thread
# binding, tuple swap): the CUDA target against the C target on random inputs (session 11, gemmsp)
f=tests/run/kernels/local_copy.py
cli "local_copy compress24 (2-D threads, local copies) vs the C target, CUDA" $f --entry compress24 -D S=64 -D D=1024 --check-against compress24 --check-target c
cli "local_copy local_reverse vs naive, CUDA" $f --entry local_reverse -D N=4096 --check-against local_reverse_naive
cli "local_copy swap_pairs vs naive, CUDA" $f --entry swap_pairs --check-against swap_pairs_naive
cli "gemm_sp 1024^3 as the example (128x128x64, 128 threads, C via shared) vs naive, CUDA" tests/run/kernels/gemm_sp.py --entry gemm_sp -D M=1024 -D N=1024 -D K=1024 -D block_M=128 -D block_N=128 -D stage_c=True --check-against gemm_sp_naive --rtol 1e-3 --atol 1e-3
# ... and on torch CUDA tensors against torch and the C target
torch_own() {
  local out
  out=$(TILESCALE_LIB=$PWD/$B/libtilescale.so PYTHONPATH=$PWD/python timeout 300 python3 - 2>&1 <<'PY'
import numpy as np, torch, tilescale
g = torch.Generator().manual_seed(5)
# sink_rows: CUDA on torch tensors vs the C target on the same inputs vs torch
k = tilescale.compile("tests/run/kernels/widen_frag.py", "sink_rows", target="cuda", heads=8, block_M=64, N=32)
kc = tilescale.compile("tests/run/kernels/widen_frag.py", "sink_rows", target="c", heads=8, block_M=64, N=32)
x = torch.randn(8, 64, 32, generator=g)
s = torch.randn(8, generator=g)
out, l = k(x.cuda(), s.cuda())
oc, lc = kc(x.numpy(), s.numpy())
sinks = s[:, None] + 0.5 * torch.arange(64, dtype=torch.float32)[None, :]
lr = x.sum(2) + torch.exp2(sinks * 0.125)
torch.testing.assert_close(l.cpu(), lr, rtol=1e-4, atol=1e-4)
torch.testing.assert_close(out.cpu(), x * sinks[:, :, None] + lr[:, :, None], rtol=1e-4, atol=1e-4)
assert np.allclose(l.cpu().numpy(), lc, rtol=1e-5, atol=1e-5) and np.allclose(out.cpu().numpy(), oc, rtol=1e-5, atol=1e-5)
print("sink_rows ok")
# gemm_sp: torch-made 2:4 A, natural metadata, against torch.matmul of the dense A
for e_dtype, bits, tb in (("int16", 16, False), ("int8", 8, True)):
    M, N, K = 256, 128, 256
    a = torch.randn(M, K // 4, 4, generator=g)
    drop = torch.rand(M, K // 4, 4, generator=g).argsort(-1)[..., :2]
    a.scatter_(-1, drop, 0)
    # the two nonzero positions of each group, ascending (randn is never exactly 0)
    keep = (a != 0).to(torch.int64).argsort(dim=-1, descending=True, stable=True)[..., :2].sort(-1).values
    vals = a.gather(-1, keep).reshape(M, K // 2).half()
    nib = (keep[..., 0] | (keep[..., 1] << 2)).reshape(M, -1, bits // 4)
    word = sum(nib[..., j] << (4 * j) for j in range(bits // 4))  # in [0, 2^bits): wrapped to the signed dtype
    half = 1 << (bits - 1)
    e = ((word + half) % (2 * half) - half).to(torch.int16 if bits == 16 else torch.int8)
    b = torch.randn((N, K) if tb else (K, N), generator=g).half()
    ks = tilescale.compile("tests/run/kernels/gemm_sp.py", "gemm_sp", target="cuda", M=M, N=N, K=K, e_dtype=e_dtype,
                           trans_b=tb, block_M=128, block_N=128, block_K=64)
    c = ks(vals.cuda(), e.cuda(), b.cuda())
    ad = a.reshape(M, K).half().float()
    ref = ad @ (b.float().t() if tb else b.float())
    torch.testing.assert_close(c.cpu(), ref, rtol=1e-2, atol=1e-2)
    print("gemm_sp", e_dtype, "ok", float((c.cpu() - ref).abs().max()))
# the gemm_sp example's own compressor kernel (sparse_utils._compress_fn, run by the shim on CUDA)
# against its pure-torch torch_compress, when .tl-examples is here
import os, sys
if os.path.isdir(".tl-examples/gemm_sp"):
    sys.path.insert(0, ".tl-examples/gemm_sp")
    from tilescale.tilelang import _stub
    _stub.install()  # `import tilelang` -> the shim, as `python -m tilescale` does
    from sparse_utils import compress, torch_compress, randn_semi_sparse
    a = randn_semi_sparse(256, 1024, device="cuda", dtype=torch.half)
    sp, e = compress(a, meta_dtype=torch.int16)
    rsp, re = torch_compress(a, meta_dtype=torch.int16)
    assert torch.equal(sp, rsp) and torch.equal(e, re), ((sp != rsp).sum().item(), (e != re).sum().item())
    print("example compressor ok")
print("ok")
PY
)
  [ $? -eq 0 ] && echo "$out" | grep -q '^ok$'
  res "own kernels on torch CUDA tensors (sink_rows vs torch and the C target; gemm_sp int16/int8 vs torch.matmul)" $? "$out"
}
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then torch_own; fi
# 2. TileLang's own tests
ex() { # label dir want script args...: python -m tilescale in dir; exit 0 and `want` (if any) in its output
  local label=$1 dir=$2 want=$3
  shift 3
  local out st
  out=$(cd "$dir" && TILESCALE_TEST=${TT:-} TILESCALE_LIB=$OLDPWD/$B/libtilescale.so PYTHONPATH=$OLDPWD/python \
    timeout 300 python3 -m tilescale "$@" 2>&1)
  st=$?
  [ $st -eq 0 ] && { [ -z "$want" ] || echo "$out" | grep -q "$want"; }
  res "$label" $? "$out"
}
if [ -d .tl-examples ] && python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  for t in test_example_mha_sink_bwd_bhsd test_example_mha_sink_bwd_bhsd_sliding_window test_example_gqa_sink_bwd_bhsd \
           test_example_gqa_sink_bwd_bhsd_sliding_window; do
    TT=$t ex "attention_sink test_example_attention_sink.py::$t" .tl-examples/attention_sink "" test_example_attention_sink.py
  done
  TT=test_example_gemm_sp ex "gemm_sp test_example_gemm_sp.py::test_example_gemm_sp" .tl-examples/gemm_sp "" test_example_gemm_sp.py
  TT=test_example_grouped_gemm_fwd_ptr_small ex "grouped_gemm test_example_grouped_gemm.py::test_example_grouped_gemm_fwd_ptr_small" \
    .tl-examples/grouped_gemm "" test_example_grouped_gemm.py
else
  echo "(.tl-examples or torch with CUDA missing: TileLang's examples skipped; carry .tl-examples)"
fi
echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
