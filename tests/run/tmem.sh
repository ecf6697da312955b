#!/bin/sh
# Blackwell tensor memory on targets without it (pass lower_tmem,
# doc/LANGUAGE.md "Tensor memory"): T.alloc_tmem tiles as register
# fragments, T.tcgen05_gemm as T.gemm followed by its one arrive on `mbar`.
#  - the kernels of tests/run/kernels/tmem.py on the C target against naive
#    references, random inputs, outputs poisoned (ragged shapes, both B
#    layouts, two mbarriers of one array at alternating parities, attention
#    with P through shared memory ("ss") or tensor memory ("ts"), causal and
#    not, gemms into fragments without an mbarrier, T.gemm into tensor
#    memory with an mbar (TileLang waits on it itself: no wait in the program));
#  - tiles shared by two thread roles (tc_roles, tc_ws): refused on both
#    targets by default; with TILESCALE_TMEM_SHARED=1 kept in shared memory
#    and run on the C target (one role stages A, a one-warp role multiplies,
#    the first reads the product back; a producer warp and an mma warp over
#    slots of A and B, T.tcgen05_mma_arrive completing the accumulator for
#    the block), and in the CUDA source every lane of the mma warp makes the
#    one arrives (the mbarrier's count times 32, no __syncwarp);
#  - planted bugs that must fail: the run-time clear made unconditional (the
#    check must see it), a wait on the wrong parity (the mbarrier model must
#    refuse it: the phase it needs never completes), tc_ws without its
#    T.tcgen05_mma_arrive (the block's wait times out naming the mbarrier);
#  - the CUDA source: the gemm is the tensor-core function, the arrive one
#    thread's, the wait every thread's; no tensor memory instruction.
# The CUDA passes run the same kernels thread by thread in
# tests/unit/test_interp_examples.c; NVRTC compiles them (and runs them on a
# GPU) in tests/unit/test_cuda_nvrtc.c; bench/tmem_gpu_check.sh runs
# TileLang's own sm100 examples on the H200.
set -u
. tests/run/lib.sh
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
f=tests/run/kernels/tmem.py
check $f --entry tc_gemm --target c -D M=96 -D N=80 -D K=136 --check-against gemm_ref
check $f --entry tc_gemm --target c -D M=70 -D N=50 -D K=72 -D trans_B=False -D num_stages=1 --check-against gemm_ref
check $f --entry tc_gemm --target c -D M=128 -D N=128 -D K=128 -D block_M=128 -D block_N=128 -D block_K=64 -D threads=256 --check-against gemm_ref
check $f --entry tc_gemm_two --target c -D M=96 -D N=80 -D K=160 --check-against gemm_ref
check $f --entry tc_attn --target c -D batch=1 -D heads=2 -D seq_len=128 -D dim=64 -D is_causal=False --check-against attn_ref --atol 1e-2 --rtol 1e-2
check $f --entry tc_attn --target c -D batch=2 -D heads=1 -D seq_len=96 -D dim=32 -D is_causal=True --check-against attn_ref --atol 1e-2 --rtol 1e-2
check $f --entry tc_attn --target c -D batch=1 -D heads=1 -D seq_len=100 -D dim=32 -D is_causal=False -D variant=ts --check-against attn_ref --atol 1e-2 --rtol 1e-2
check $f --entry tc_attn --target c -D batch=1 -D heads=1 -D seq_len=160 -D dim=64 -D is_causal=True -D variant=ts -D threads=256 --check-against attn_ref --atol 1e-2 --rtol 1e-2
check $f --entry tc_chain --target c -D M=96 -D N=80 -D D=64 --check-against chain_ref
check $f --entry tg_gemm --target c -D M=96 -D N=80 -D K=136 --check-against gemm_ref
export TILESCALE_TMEM_SHARED=1
check $f --entry tc_roles --target c -D M=128 -D N=128 -D K=64 --check-against gemm_ref
check $f --entry tc_roles --target c -D M=200 -D N=72 -D K=32 -D block_N=32 --check-against gemm_ref
check $f --entry tc_ws --target c -D M=128 -D N=128 -D K=160 --check-against gemm_kn_ref
check $f --entry tc_ws --target c -D M=96 -D N=80 -D K=72 -D stages=3 --check-against gemm_kn_ref
unset TILESCALE_TMEM_SHARED

# planted bugs
sed 's/clear_accum=k == 0)/clear_accum=True)/' $f >$d/bug1.py
out=$("$tool" run $d/bug1.py --entry tc_gemm --target c -D M=64 -D N=64 -D K=96 --check-against gemm_ref 2>&1)
echo "$out" | grep -q '^FAIL$' || { echo "$out"; fail "an unconditional clear passed the check"; }
sed 's/T.mbarrier_wait_parity(done, k % 2)/T.mbarrier_wait_parity(done, (k + 1) % 2)/' $f >$d/bug2.py
out=$("$tool" run $d/bug2.py --entry tc_gemm --target c -D M=64 -D N=64 -D K=96 --check-against gemm_ref 2>&1) &&
  fail "a wait on the wrong parity ran"
echo "$out" | grep -q "mbarrier_wait_parity" || { echo "$out"; fail "the wrong parity's error does not name the wait"; }

# CUDA: what the portable branch prints
for arch in sm_80 sm_90a; do
  TILESCALE_CUDA_ARCH=$arch "$tool" compile $f --entry tc_gemm -D M=128 -D N=128 -D K=128 --target cuda --emit cuda >$d/g.cu ||
    fail "CUDA source of tc_gemm ($arch)"
  grep -q 'ts_gemm_0(\|ts_wgmma_0(' $d/g.cu || fail "$arch: the tcgen05 gemm is not on tensor cores"
  grep -q 'tcgen05' $d/g.cu && fail "$arch: a tcgen05 instruction printed"
  [ "$(grep -c 'ts_mbar_arrive(&done' $d/g.cu)" = 1 ] || fail "$arch: not one arrive on done"
  grep -B2 'ts_mbar_arrive(&done' $d/g.cu | grep -q '< (0) + (1))' || fail "$arch: the arrive is not one thread's"
  grep -q 'ts_mbar_wait(&done' $d/g.cu || fail "$arch: no wait on done"
  TILESCALE_CUDA_ARCH=$arch "$tool" compile $f --entry tc_attn -D batch=1 -D heads=1 -D seq_len=128 -D dim=64 \
    -D is_causal=True -D variant=ts --target cuda --emit cuda >/dev/null || fail "CUDA source of tc_attn ts ($arch)"
done
# tiles shared by two thread roles (one stages A, a one-warp role multiplies; a producer warp and an
# mma warp with T.tcgen05_mma_arrive, the block reading the accumulator): refused on every target
# unless TILESCALE_TMEM_SHARED=1
for e in "tc_roles -D M=128 -D N=128 -D K=64" "tc_ws -D M=128 -D N=128 -D K=160"; do
  for tg in c cuda; do
    out=$("$tool" compile $f --entry $e --target $tg --emit ir 2>&1) && fail "$e ($tg) was not refused"
    echo "$out" | grep -q "error: tensor memory '.*' is used here by .* and at line [0-9]* by" ||
      { echo "$out"; fail "$e ($tg): not the two-groups refusal"; }
    TILESCALE_TMEM_SHARED=1 "$tool" compile $f --entry $e --target $tg --emit ir >/dev/null 2>&1 ||
      fail "$e ($tg) refused with TILESCALE_TMEM_SHARED=1"
  done
done
# with it: the fragments in shared memory, the warning naming the tile and both roles
TILESCALE_TMEM_SHARED=1 TILESCALE_CUDA_ARCH=sm_90a "$tool" compile $f --entry tc_roles -D M=128 -D N=128 -D K=64 \
  --target cuda --emit cuda >$d/r.cu 2>$d/r.err || { cat $d/r.err; fail "CUDA source of tc_roles"; }
grep -q "warning: fragment a_tm is used by the T.ws role of threads \[0, 128).*\[128, 160)" $d/r.err ||
  { cat $d/r.err; fail "tc_roles: no warning naming a_tm and both roles"; }
grep -q 'a_tm_[0-9]* = (ts_u16 \*)(ts_smem + ' $d/r.cu || fail "tc_roles: a_tm is not in shared memory"
# the mma warp's one arrive on bars[1] is each lane's, the mbarrier expecting 32 per phase (an arrive
# releases the arriving thread's own accesses; compute-sanitizer racecheck follows no __syncwarp or
# named barrier before one lane's arrive: the H200, session 11), the 128 threads' own on bars[0] as written
grep -q 'ts_mbar_init(&bars_[0-9]*\[1\], (ts_u32)(32))' $d/r.cu || fail "tc_roles: bars[1] does not expect 32 arrivals"
grep -q 'ts_mbar_init(&bars_[0-9]*\[0\], (ts_u32)(128))' $d/r.cu || fail "tc_roles: bars[0] does not expect 128 arrivals"
grep -B1 'ts_mbar_arrive(&bars_[0-9]*\[1\])' $d/r.cu | grep -q 'ts_gemm_0(' || fail "tc_roles: the arrive on bars[1] is not right after the gemm"
grep -q 'ts_warp_sync' $d/r.cu && fail "tc_roles: a __syncwarp is left"
TILESCALE_TMEM_SHARED=1 TILESCALE_CUDA_ARCH=sm_90a "$tool" compile $f --entry tc_ws -D M=128 -D N=128 -D K=160 \
  --target cuda --emit cuda >$d/w.cu 2>$d/w.err || { cat $d/w.err; fail "CUDA source of tc_ws"; }
[ "$(grep -c 'ts_mbar_init(&\(free\|done\)_[0-9]*\[[0-9]\], (ts_u32)(32))' $d/w.cu)" = 3 ] ||
  fail "tc_ws: free[0], free[1] and done do not expect 32 arrivals each"
grep -q 'ts_mbar_init(&full_[0-9]*\[0\], (ts_u32)(32))' $d/w.cu || fail "tc_ws: full[0] does not expect its 32 arrivals"
grep -B1 'ts_mbar_arrive(&done_[0-9]*\[0\])' $d/w.cu | grep -q '^ *}$' || fail "tc_ws: the arrive on done is not the role's own"
grep -q 'ts_warp_sync' $d/w.cu && fail "tc_ws: a __syncwarp is left"
sed 's/T.tcgen05_mma_arrive(done)/pass/' $f >$d/bug3.py
out=$(TILESCALE_TMEM_SHARED=1 TILESCALE_WAIT_TIMEOUT=2 "$tool" run $d/bug3.py --entry tc_ws --target c -D M=64 -D N=64 -D K=64 --check-against gemm_kn_ref 2>&1) &&
  fail "tc_ws without T.tcgen05_mma_arrive ran"
echo "$out" | grep -q "mbarrier_wait_parity on 'done'" || { echo "$out"; fail "the missing arrive's error does not name the wait"; }
echo "tmem: ok"
