#!/bin/sh
# Warp-specialised kernels with their fragments in registers (layout
# inference over each T.ws role's threads) through NVRTC, for sm_80 and
# sm_90 (needs NVRTC, not a GPU; exits 77, reported as skipped, where NVRTC
# is missing): examples/ws_gemm.py's two kernels and
# examples/ws_flash_attention.py at block_M=128 compile to PTX with mma.sync,
# the producer role's copies are 16-byte cp.async handed over by
# cp.async.mbarrier.arrive.noinc (pass ws_async_copy; for the ring GEMM also
# TILESCALE_CUDA_WS_ASYNC=wait: cp.async.wait_group 0 before a plain arrive,
# and =mbar: cp.async.mbarrier.arrive without .noinc),
# and their dynamic shared memory is smaller than with
# TILESCALE_CUDA_WS_LAYOUT=0 (fragments in shared memory, the path before):
# the accumulators and row statistics moved to registers.
set -u
tool="${TILESCALE:-./build/tilescale}"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
smem() { # the dynamic shared memory of the generated CUDA (first line)
  sed -n '1s/.* \([0-9][0-9]*\) bytes of dynamic shared memory.*/\1/p' "$1"
}
n=0
for arch in sm_80 sm_90; do
  for k in "examples/ws_gemm.py --entry ws_matmul -D M=512 -D N=512 -D K=512" \
           "examples/ws_gemm.py --entry ws_matmul_ring -D M=512 -D N=512 -D K=512" \
           "examples/ws_flash_attention.py --entry flashattn_ws -D batch=1 -D heads=2 -D seq_len=512 -D dim=64 -D is_causal=True -D block_M=128" \
           "examples/ws_flash_attention.py --entry flashattn_ws -D batch=1 -D heads=2 -D seq_len=512 -D dim=128 -D is_causal=False -D block_M=128"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    if ! TILESCALE_CUDA_ARCH=$arch $tool compile $k --target cuda --emit ptx >$d/ptx 2>$d/err; then
      if grep -q "NVRTC not found" $d/err; then echo "skipped: NVRTC not found"; exit 77; fi
      cat $d/err
      fail "$arch $k: --emit ptx"
    fi
    grep -q 'mma\.sync\.aligned\.m16n8k16' $d/ptx || fail "$arch $k: no mma.sync in the PTX"
    # the producer role loads with cp.async, handed over by .noinc alone (pass ws_async_copy)
    grep -q 'cp\.async\.mbarrier\.arrive\.noinc\.shared\.b64' $d/ptx || fail "$arch $k: no cp.async.mbarrier.arrive.noinc in the PTX"
    [ "$(grep -c 'cp\.async\.cg\.shared\.global' $d/ptx)" -ge 8 ] || fail "$arch $k: the producer's copies are not cp.async"
    case $k in *ws_matmul_ring*)
      # shellcheck disable=SC2086
      TILESCALE_CUDA_WS_ASYNC=wait TILESCALE_CUDA_ARCH=$arch $tool compile $k --target cuda --emit ptx >$d/ptx2 2>$d/err || { cat $d/err; fail "$arch $k: --emit ptx (wait)"; }
      grep -q 'cp\.async\.wait_group 0' $d/ptx2 || fail "$arch $k: no cp.async.wait_group 0 with TILESCALE_CUDA_WS_ASYNC=wait"
      ! grep -q 'cp\.async\.mbarrier\.arrive' $d/ptx2 || fail "$arch $k: cp.async.mbarrier.arrive with TILESCALE_CUDA_WS_ASYNC=wait"
      # shellcheck disable=SC2086
      TILESCALE_CUDA_WS_ASYNC=mbar TILESCALE_CUDA_ARCH=$arch $tool compile $k --target cuda --emit ptx >$d/ptx2 2>$d/err || { cat $d/err; fail "$arch $k: --emit ptx (mbar)"; }
      grep -q 'cp\.async\.mbarrier\.arrive\.shared\.b64' $d/ptx2 || fail "$arch $k: no cp.async.mbarrier.arrive with TILESCALE_CUDA_WS_ASYNC=mbar"
    esac
    # shellcheck disable=SC2086
    TILESCALE_CUDA_ARCH=$arch $tool compile $k --target cuda --emit cuda >$d/after.cu || fail "$arch $k: --emit cuda"
    # shellcheck disable=SC2086
    if ! TILESCALE_CUDA_ARCH=$arch TILESCALE_CUDA_WS_LAYOUT=0 $tool compile $k --target cuda --emit cuda >$d/before.cu \
           2>$d/err; then
      # (FlashAttention D128 at 128 rows did not fit sm_80's shared memory with its fragments there)
      grep -q "bytes of shared memory per block, more than" $d/err || { cat $d/err; fail "$arch $k: --emit cuda with TILESCALE_CUDA_WS_LAYOUT=0"; }
      echo "$arch $k: did not fit -> $(smem $d/after.cu) bytes of shared memory"
      continue
    fi
    a=$(smem $d/after.cu) b=$(smem $d/before.cu)
    echo "$arch $k: $b -> $a bytes of shared memory"
    [ -n "$a" ] && [ -n "$b" ] && [ "$a" -lt "$b" ] || fail "$arch $k: shared memory $b -> $a (the fragments did not move to registers)"
  done
done
# sm_90a: pass ws_role_regs gives each role its region, moves registers from the producer
# to the mma role (setmaxnreg) and compiles the GEMMs for two blocks per SM
for e in ws_matmul ws_matmul_ring; do
  n=$((n + 1))
  TILESCALE_CUDA_ARCH=sm_90a $tool compile examples/ws_gemm.py --entry $e -D M=512 -D N=512 -D K=512 --target cuda --emit ptx \
    >"$d/ptx" 2>"$d/err" || { cat "$d/err"; fail "sm_90a $e: --emit ptx"; }
  grep -q 'setmaxnreg\.dec\.sync\.aligned\.u32 48;' "$d/ptx" || fail "sm_90a $e: no setmaxnreg.dec in the PTX"
  grep -q 'setmaxnreg\.inc\.sync\.aligned\.u32 208;' "$d/ptx" || fail "sm_90a $e: no setmaxnreg.inc in the PTX"
  grep -q '\.minnctapersm 2' "$d/ptx" || fail "sm_90a $e: not compiled for two blocks per SM"
  echo "sm_90a $e: setmaxnreg 48 / 208, two blocks per SM"
done
echo "ok: $n kernels"
