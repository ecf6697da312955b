#!/bin/sh
# TileLang's register hints and hand-committed element copies
# (tests/run/kernels/reg_hints.py): the warp-specialized GEMMs that carry
# them on the C target against a naive GEMM; pass arch_hints keeps each
# hint in the IR for sm_90a only (--dump-after arch_hints), the CUDA
# source then prints it as setmaxnreg without a preprocessor guard, and
# sm_80 / sm_90 sources and the C source have none; NVRTC, where present,
# puts it in sm_90a's PTX and not in sm_90's; then the errors of a bad
# register count.  bench/arch_hints_gpu_check.sh runs the kernels on a GPU.
. tests/run/lib.sh
f=tests/run/kernels/reg_hints.py
for e in ws_hinted ws_set_nreg; do
  check $f --entry $e --target c --check-against matmul_naive
  check $f --entry $e --target c -D M=128 -D N=384 -D K=96 --check-against matmul_naive
done
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
TILESCALE_CUDA_ARCH=sm_90a "$tool" compile $f --entry ws_hinted --target cuda --emit cuda >"$t/h.cu" || { echo "FAILED: CUDA source of ws_hinted"; exit 1; }
grep -q 'setmaxnreg\.dec\.sync\.aligned\.u32 24;' "$t/h.cu" || { echo "FAILED: no setmaxnreg.dec 24 in ws_hinted"; exit 1; }
grep -q 'setmaxnreg\.inc\.sync\.aligned\.u32 240;' "$t/h.cu" || { echo "FAILED: no setmaxnreg.inc 240 in ws_hinted"; exit 1; }
if grep -q '__CUDA_ARCH_FEAT' "$t/h.cu"; then echo "FAILED: setmaxnreg behind a preprocessor guard"; exit 1; fi
for a in sm_80 sm_90; do
  TILESCALE_CUDA_ARCH=$a "$tool" compile $f --entry ws_hinted --target cuda --emit cuda >"$t/n.cu" || { echo "FAILED: CUDA source for $a"; exit 1; }
  if grep -q 'setmaxnreg\|__CUDA_ARCH_FEAT' "$t/n.cu"; then echo "FAILED: setmaxnreg in the $a source"; exit 1; fi
  # the IR: the hints up to split_address, gone after arch_hints
  TILESCALE_CUDA_ARCH=$a "$tool" compile $f --entry ws_hinted --target cuda --dump-after split_address >"$t/ir1" || { echo "FAILED: dump $a"; exit 1; }
  [ "$(grep -c 'eval set_max_nreg' "$t/ir1")" = 2 ] || { echo "FAILED: hints not in the IR before arch_hints ($a)"; exit 1; }
  TILESCALE_CUDA_ARCH=$a "$tool" compile $f --entry ws_hinted --target cuda --dump-after arch_hints >"$t/ir2" || { echo "FAILED: dump $a"; exit 1; }
  if grep -q set_max_nreg "$t/ir2"; then echo "FAILED: hints left by arch_hints for $a"; exit 1; fi
done
TILESCALE_CUDA_ARCH=sm_90a "$tool" compile $f --entry ws_hinted --target cuda --dump-after arch_hints >"$t/ir3" || { echo "FAILED: dump sm_90a"; exit 1; }
[ "$(grep -c 'eval set_max_nreg' "$t/ir3")" = 2 ] || { echo "FAILED: hints dropped for sm_90a"; exit 1; }
TILESCALE_CUDA_ARCH=sm_90a "$tool" compile $f --entry ws_set_nreg --target cuda --emit cuda >"$t/s.cu" || { echo "FAILED: CUDA source of ws_set_nreg"; exit 1; }
for w in "inc.sync.aligned.u32 232" "inc.sync.aligned.u32 240" "dec.sync.aligned.u32 40" "dec.sync.aligned.u32 32"; do
  grep -q "setmaxnreg\.$w;" "$t/s.cu" || { echo "FAILED: no setmaxnreg.$w in ws_set_nreg"; exit 1; }
done
"$tool" compile $f --entry ws_hinted --target c --emit c >"$t/h.c" || { echo "FAILED: C source"; exit 1; }
if grep -q setmaxnreg "$t/h.c"; then echo "FAILED: setmaxnreg in the C target's source"; exit 1; fi
if TILESCALE_CUDA_ARCH=sm_90a "$tool" compile $f --entry ws_hinted --target cuda --emit ptx >"$t/a.ptx" 2>"$t/err"; then
  [ "$(grep -c 'setmaxnreg' "$t/a.ptx")" = 2 ] || { echo "FAILED: sm_90a PTX without its 2 setmaxnreg"; exit 1; }
  TILESCALE_CUDA_ARCH=sm_90 "$tool" compile $f --entry ws_hinted --target cuda --emit ptx >"$t/p.ptx" || { echo "FAILED: sm_90 PTX"; exit 1; }
  if grep -q setmaxnreg "$t/p.ptx"; then echo "FAILED: setmaxnreg in sm_90 PTX"; exit 1; fi
  echo "NVRTC: setmaxnreg in sm_90a PTX only"
elif grep -q "NVRTC not found" "$t/err"; then
  echo "NVRTC not found: PTX not checked"
else
  cat "$t/err"; echo "FAILED: sm_90a PTX"; exit 1
fi
cat >"$t/bad.py" <<'PY'
import tilelang.language as T


@T.prim_func
def odd(A: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        T.set_max_nreg(100, 1)
        A[bx] = 1.0


@T.prim_func
def big(A: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        T.annotate_consumer_reg_alloc(264)
        A[bx] = 1.0


@T.prim_func
def no_inc(A: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        T.set_max_nreg(240)
        A[bx] = 1.0


@T.prim_func
def outside(A: T.Tensor((8,), "float32")):
    T.dec_max_nreg(24)
    with T.Kernel(1, threads=128) as bx:
        A[bx] = 1.0
PY
expect_err() {
  out=$("$tool" compile "$t/bad.py" --entry "$1" --target cuda --emit cuda 2>&1)
  echo "$out" | grep -q "$2" || { echo "FAILED: $1: want '$2', got:"; echo "$out"; exit 1; }
}
expect_err odd "bad.py:7:11: error: T.set_max_nreg(): reg_count must be a multiple of 8 from 24 to 256, got 100"
expect_err big "reg_count must be a multiple of 8 from 24 to 256, got 264"
expect_err no_inc "bad.py:21:11: error: T.set_max_nreg().*is_inc"
expect_err outside "bad.py:27:7: error: T.dec_max_nreg() must be used inside"
echo "reg_hints: ok"
