#!/bin/sh
# The wgmma path of T.gemm (doc/HOPPER.md) without a GPU:
#  - T.wgmma_gemm / T.wait_wgmma and the transposed forms on the C target,
#    against naive references (tests/run/kernels/wgmma_gemm.py);
#  - the instruction choice, in the generated CUDA: wgmma.mma_async for
#    TILESCALE_CUDA_ARCH=sm_90a (the default; TILESCALE_CUDA_WGMMA=0, sm_90
#    and sm_80 print mma.sync), T.wait_wgmma only where a gemm runs on wgmma;
#  - where NVRTC is installed: the PTX of the GEMM example at its bench
#    shape targets sm_90a and holds wgmma.mma_async, fence, commit, wait.
set -u
. tests/run/lib.sh
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
K=tests/run/kernels/wgmma_gemm.py
check $K --entry gemm_tb -D M=96 -D N=80 -D K=136 -D block_M=64 -D block_N=64 -D block_K=32 --check-against gemm_tb_ref
check $K --entry gemm_ta -D M=96 -D N=80 -D K=72 --check-against gemm_ta_ref
check $K --entry gemm_async -D M=96 -D N=80 -D K=136 --check-against gemm_tb_ref
check $K --entry gemm_async_pipe -D M=96 -D N=80 -D K=136 --check-against gemm_tb_ref
check $K --entry gemm_async_branch -D M=96 -D N=80 -D K=136 --check-against gemm_tb_ref

G="examples/gemm.py --entry matmul -D M=4096 -D N=4096 -D K=4096 -D block_M=128 -D block_N=256 -D block_K=128 -D num_stages=2 -D threads=256 --target cuda"
TILESCALE_CUDA_ARCH=sm_90a TILESCALE_CUDA_WGMMA=1 "$tool" compile $G --emit cuda >$d/a.cu || fail "compile sm_90a"
grep -q 'wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.f16\.f16' $d/a.cu || fail "sm_90a + WGMMA=1: no wgmma.mma_async m64n256k16"
grep -q 'mma\.sync' $d/a.cu && fail "sm_90a + WGMMA=1: mma.sync left"
grep -q '__align__(1024)' $d/a.cu || fail "sm_90a + WGMMA=1: shared memory not aligned for the 128B swizzle"
TILESCALE_CUDA_ARCH=sm_90a "$tool" compile $G --emit cuda >$d/a2.cu || fail "compile sm_90a (default switch)"
grep -q 'wgmma\.mma_async' $d/a2.cu || fail "sm_90a: wgmma is not the default"
for env in "TILESCALE_CUDA_ARCH=sm_90 TILESCALE_CUDA_WGMMA=1" "TILESCALE_CUDA_ARCH=sm_90a TILESCALE_CUDA_WGMMA=0"; do
  env $env "$tool" compile $G --emit cuda >$d/b.cu || fail "compile $env"
  grep -q 'wgmma' $d/b.cu && fail "$env: wgmma printed"
  grep -q 'mma\.sync' $d/b.cu || fail "$env: no mma.sync"
done
TILESCALE_CUDA_ARCH=sm_80 TILESCALE_CUDA_WGMMA=1 "$tool" compile examples/gemm.py --entry matmul -D M=256 -D N=256 -D K=256 --target cuda --emit cuda >$d/f.cu || fail "compile sm_80"
grep -q 'wgmma' $d/f.cu && fail "sm_80 + WGMMA=1: wgmma printed"
# T.wgmma_gemm: no wait of its own, the user's T.wait_wgmma(0) after both
TILESCALE_CUDA_ARCH=sm_90a TILESCALE_CUDA_WGMMA=1 "$tool" compile $K --entry gemm_async -D M=128 -D N=128 -D K=128 --target cuda --emit cuda >$d/c.cu || fail "compile gemm_async"
[ "$(grep -c 'ts_wgmma_0(ts_wg_smem' $d/c.cu)" = 2 ] || fail "gemm_async: not two wgmma calls"
grep -q '^ *ts_wgmma_wait<0>();' $d/c.cu || fail "gemm_async: no T.wait_wgmma"
sed -n '/TS_DEV void ts_wgmma_0(/,/^}/p' $d/c.cu | grep -q 'ts_wgmma_wait' && fail "gemm_async: the T.wgmma_gemm function waits"
TILESCALE_CUDA_ARCH=sm_90 TILESCALE_CUDA_WGMMA=1 "$tool" compile $K --entry gemm_async -D M=128 -D N=128 -D K=128 --target cuda --emit cuda >$d/e.cu || fail "compile gemm_async sm_90"
grep -q 'wgmma' $d/e.cu && fail "gemm_async sm_90: wgmma printed"

# The pipelined gemm left in flight (inject_pipeline, TsCaps.wgmma_inflight): the final IR's
# steady-state loop and what follows it, statement by statement (the copies' own lines left
# out), for 2, 3 and 4 stages (1 and 2 warpgroups), in each mode: ONE (=2): the gemm issued
# without a wait, wait_group 1 completes the previous step's group, a barrier, then the copies
# refill the slot it read, wait_group 0 after the loop, before the accumulator is stored; TOP
# (=1): wait_group 0 before the step's barrier, the gemm, then the copies; SLOT (=3, three stages
# or more, else ONE): wait_group 1 before the one barrier; OFF (=0) and a loop not pipelined: no
# wait outside the gemm (it waits for its own group); the default (AUTO): OFF with two stages,
# TOP with more
shape() { # env, stages, threads, block_N -> the loop's statements, one word each
  env TILESCALE_CUDA_ARCH=sm_90a $1 "$tool" compile examples/gemm.py --entry matmul -D M=256 -D N=256 -D K=512 \
    -D num_stages=$2 -D threads=$3 -D block_N=$4 --target cuda --dump-after wgmma_waits >$d/ir.txt 2>&1 ||
    { cat $d/ir.txt; fail "compile stages=$2 $1"; }
  sed -n '/^    for k in serial/,/^    async_wait(0)/p' $d/ir.txt |
    sed -nE 's/^ *gemm\(.*async=1.*/gemm_async/p; s/^ *gemm\(.*/gemm/p;
             s/^ *(for k|async_wait|barrier|eval wait_wgmma\([0-9]\)|if k|async_commit)[^a-z_]?.*/\1/p' |
    tr '\n' ' '
}
ONE="for k async_wait barrier gemm_async eval wait_wgmma(1) barrier if k async_commit eval wait_wgmma(0) async_wait "
TOP="for k async_wait eval wait_wgmma(0) barrier gemm_async if k async_commit eval wait_wgmma(0) async_wait "
SLOT="for k async_wait eval wait_wgmma(1) barrier gemm_async if k async_commit eval wait_wgmma(0) async_wait "
OFF="for k async_wait barrier if k gemm async_commit async_wait "
expect() { # env stages threads block_N want
  got=$(shape "$1" $2 $3 $4)
  [ "$got" = "$5" ] || fail "'$1', $2 stages, threads/block_N $3 $4: got '$got', want '$5'"
}
for st in 2 3 4; do
  for th in "128 128" "256 256"; do
    expect TILESCALE_CUDA_WGMMA_INFLIGHT=2 $st $th "$ONE"
    expect TILESCALE_CUDA_WGMMA_INFLIGHT=1 $st $th "$TOP"
    expect TILESCALE_CUDA_WGMMA_INFLIGHT=0 $st $th "$OFF"
    if [ $st -ge 3 ]; then
      expect TILESCALE_CUDA_WGMMA_INFLIGHT=3 $st $th "$SLOT"
      expect "" $st $th "$TOP"
    else
      expect TILESCALE_CUDA_WGMMA_INFLIGHT=3 $st $th "$ONE"
      expect "" $st $th "$OFF"
    fi
  done
done
# (num_stages=1 runs as two stages where the second slot fits: pipeline_planning)
expect "" 1 128 128 "$OFF"
expect TILESCALE_CUDA_WGMMA_INFLIGHT=2 1 128 128 "$ONE"
env TILESCALE_CUDA_ARCH=sm_90a TILESCALE_CUDA_PIPELINE=0 TILESCALE_CUDA_WGMMA_INFLIGHT=2 "$tool" compile examples/gemm.py \
  --entry matmul -D M=256 -D N=256 -D K=512 --target cuda --dump-after wgmma_waits >$d/ir1.txt 2>&1 || fail "compile without pipeline"
grep -q 'gemm(' $d/ir1.txt || fail "without pipeline: no gemm"
grep -q 'wait_wgmma\|async=1' $d/ir1.txt && fail "without pipeline: the gemm no longer waits for its own group"
# the CUDA: in flight, the loop's gemm function has no wait of its own, the loop waits for one group
TILESCALE_CUDA_ARCH=sm_90a TILESCALE_CUDA_WGMMA_INFLIGHT=2 "$tool" compile $G --emit cuda >$d/w.cu || fail "compile bench tile"
sed -n '/TS_DEV void ts_wgmma_0(/,/^}/p' $d/w.cu | grep -q 'ts_wgmma_wait' && fail "bench tile: the in-flight gemm's function waits"
grep -A1 -E '^ +ts_wgmma_0\(' $d/w.cu | grep -q 'ts_wgmma_wait<1>' || fail "bench tile: no wait_group 1 after the gemm"

# PTX through NVRTC, where there is one
if TILESCALE_CUDA_ARCH=sm_90a TILESCALE_CUDA_WGMMA=1 "$tool" compile $G --emit ptx >$d/a.ptx 2>$d/err; then
  grep -q '^\.target sm_90a' $d/a.ptx || fail "PTX does not target sm_90a"
  for w in wgmma.mma_async.sync.aligned.m64n256k16 wgmma.fence.sync.aligned wgmma.commit_group.sync.aligned wgmma.wait_group.sync.aligned fence.proxy.async; do
    grep -q "$w" $d/a.ptx || fail "PTX has no $w"
  done
  # pass wgmma_waits' register fences (golden cuda_wgmma_waits) compile
  TILESCALE_CUDA_ARCH=sm_90a TILESCALE_CUDA_WGMMA=1 "$tool" compile $K --entry gemm_async_pipe -D M=128 -D N=128 -D K=256 --target cuda --emit ptx >$d/p.ptx || fail "--emit ptx gemm_async_pipe"
  [ "$(grep -c 'wgmma.wait_group.sync.aligned' $d/p.ptx)" -ge 3 ] || fail "gemm_async_pipe: PTX lacks its three waits"
  TILESCALE_CUDA_ARCH=sm_90a TILESCALE_CUDA_WGMMA=1 "$tool" compile $K --entry gemm_async_branch -D M=128 -D N=128 -D K=256 --target cuda --emit ptx >$d/q.ptx || fail "--emit ptx gemm_async_branch"
elif grep -q "NVRTC not found" $d/err; then
  echo "PTX part skipped: NVRTC not found"
else
  cat $d/err; fail "--emit ptx sm_90a"
fi
echo "wgmma: ok"
