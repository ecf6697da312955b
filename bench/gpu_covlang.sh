#!/bin/bash
# gpu_covlang.sh — the language constructs of issue 8 part D's session-5 coverage
# work on a real GPU, against the C target and naive kernels (about 30 s):
#   T.reinterpret / tirx.reinterpret / tirx.const (tests/run/kernels/reinterpret.py),
#   T.tvm_thread_allreduce under T.attr (tests/run/kernels/allreduce.py),
#   T.alloc_global workspaces through `tilescale run` (host tensors) and through the
#   Python package's kernel call on torch CUDA tensors (device workspaces, a chain of
#   two kernels passing partial sums through them) (tests/run/kernels/workspace.py).
#
#   bash bench/gpu_covlang.sh      # from the repository root; a built ./build-gpu ($B)
# Exit status 1 if anything failed.
set -u
cd "$(dirname "$0")/.."
B=${B:-build-gpu}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TILESCALE_CACHE_DIR=$PWD/$B/kcache
if [ ! -x "$B/tilescale" ] || [ ! -f "$B/libtilescale.so" ]; then
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build "$B" -j"$(nproc)" --target tilescale_cli tilescale >/dev/null || { echo "BUILD FAILED"; exit 1; }
fi
T=$B/tilescale
fails=0
check() {
  local label=$1
  shift
  local out
  out=$("$T" run "$@" --seed 11 2>&1)
  if [ $? -eq 0 ] && echo "$out" | grep -q '^PASS$'; then echo "PASS $label"; else echo "FAIL $label"; echo "$out" | tail -12; fails=$((fails + 1)); fi
}
R=tests/run/kernels/reinterpret.py A=tests/run/kernels/allreduce.py W=tests/run/kernels/workspace.py
C="--target cuda --check-target c --atol 0 --rtol 0"
check "reinterpret bits n=300 (cuda vs c, bit-exact)" $R --entry bits -D n=300 $C
check "reinterpret bits n=5000" $R --entry bits -D n=5000 $C
check "tirx unpack int4/fp4 5x64 (cuda vs c)" $R --entry unpack -D R=5 -D C=64 $C
check "tirx unpack 300x256" $R --entry unpack -D R=300 -D C=256 $C
check "allreduce gemv 40x200 (4,8) vs gpu naive" $A --entry gemv_allreduce --target cuda --check-against gemv_allreduce_naive --rtol 1e-5 --atol 1e-5
check "allreduce gemv 1000x4096 (2,32) vs gpu naive" $A --entry gemv_allreduce -D N=1000 -D K=4096 -D BLOCK_N=2 -D R=32 --target cuda --check-against gemv_allreduce_naive --rtol 1e-5 --atol 1e-4
check "allreduce gemv 37x300 (2,32) vs c" $A --entry gemv_allreduce -D N=37 -D K=300 -D BLOCK_N=2 -D R=32 --target cuda --check-target c --rtol 1e-5 --atol 1e-5
check "workspace split_sum 24x100/4 vs gpu naive" $W --entry split_sum --target cuda --check-against split_sum_naive --rtol 1e-5 --atol 1e-5
check "workspace split_sum 4096x3000/7 vs gpu naive" $W --entry split_sum -D M=4096 -D N=3000 -D S=7 -D block_M=64 --target cuda --check-against split_sum_naive --rtol 1e-5 --atol 1e-4
# the Python package on torch CUDA tensors: device workspaces (ts_kernel_launch_device), twice
out=$(TILESCALE_LIB=$B/libtilescale.so python3 - 2>&1 <<'PY'
import sys, torch
sys.path.insert(0, "python")
import tilescale
k = tilescale.compile("tests/run/kernels/workspace.py", "split_sum", target="cuda", M=513, N=3000, S=5, block_M=64)
assert [p.name for p in k.params] == ["X", "Y", "C"], [p.name for p in k.params]
for rep in range(2):
    x = torch.randn(513, 3000, device="cuda")
    y, c = k(x)
    torch.cuda.synchronize()
    want = x.double().sum(1)
    err = (y.double() - want).abs().max().item()
    assert err < 1e-2 and bool((c == 3000).all()), (err, c[:8])
print("PASS")
PY
)
if echo "$out" | grep -q '^PASS$'; then echo "PASS python: workspace kernel on torch CUDA tensors"; else echo "FAIL python workspace"; echo "$out" | tail -12; fails=$((fails + 1)); fi
echo "failed: $fails"
[ $fails -eq 0 ]
