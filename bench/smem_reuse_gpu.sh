#!/bin/bash
# smem_reuse_gpu.sh — the H200 check of plan_smem's reuse of shared-memory
# bytes inside loop bodies and of its padding drop (issue 8 part D).
#
#   B=build-gpu bash bench/smem_reuse_gpu.sh      # ON THE DEVICE, ~60-90 s
#
# 1. A kernel with two cross-warp row reductions per loop iteration (their
#    red_smem scratches share bytes; plan_smem adds a barrier between the
#    reductions and one at the end of the body), reuse forced
#    (TILESCALE_CUDA_SMEM_REUSE=1): CUDA against the C target, then under
#    compute-sanitizer racecheck (a missing barrier is a shared-memory
#    hazard there).
# 2. Where TileLang's examples are at hand (.tl-examples here or one level
#    up, or $TL_EXAMPLES: `bash bench/tilelang_examples.sh fetch`): the
#    kernels that now fit, on small configurations, against the C target
#    and under racecheck: MLA decode and its float8-KV variant
#    (main_no_split: one scratch for its two reductions; over sm_90a's
#    limit without it, so reuse is on by default) and fused MoE's shared-expert kernel (fragments left in
#    shared memory, unpadded); then TileLang's own test scripts for both
#    (tilelang_examples.sh run), which check against their torch
#    references.
# Prints one PASS/FAIL line per check.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
B=${B:-build-gpu}
TS=$ROOT/$B/tilescale
export PATH=$PATH:/usr/local/cuda/bin LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TILESCALE_CACHE_DIR=${TILESCALE_CACHE_DIR:-$ROOT/$B/kcache}
[ -x "$TS" ] || { cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build "$B" -j"$(nproc)" >/dev/null; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0

# check LABEL ARGS...: CUDA against the C target
check() {
  local label=$1 out
  shift
  out=$("$TS" run "$@" --target cuda --check-target c --seed 7 2>&1)
  if [ $? -eq 0 ] && echo "$out" | grep -q '^PASS'; then echo "PASS  $label"; else
    echo "FAIL  $label"; echo "$out" | tail -8; fails=$((fails + 1)); fi
}
# race LABEL ARGS...: compute-sanitizer racecheck of the CUDA run
race() {
  local label=$1 out
  shift
  if ! command -v compute-sanitizer >/dev/null; then echo "SKIP  racecheck $label: no compute-sanitizer"; return; fi
  out=$(compute-sanitizer --tool racecheck --error-exitcode 9 "$TS" run "$@" --target cuda --seed 7 2>&1)
  if [ $? -eq 0 ] && echo "$out" | grep -q 'RACECHECK SUMMARY: 0 hazards\|ERROR SUMMARY: 0 errors'; then
    echo "PASS  racecheck $label"
  else echo "FAIL  racecheck $label: $(echo "$out" | grep -E 'SUMMARY|Error' | head -3 | tr '\n' ' ')"; fails=$((fails + 1)); fi
}

cat >"$T/red2.py" <<'EOF'
import tilelang
import tilelang.language as T


@tilelang.jit
def red2(M, N, K, iters, load=1):
    @T.prim_func
    def main(A: T.Tensor((iters * M, K), "float16"), B: T.Tensor((N, K), "float16"),
             O: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=256) as bx:
            As = T.alloc_shared((M, K), "float16")
            Bs = T.alloc_shared((N, K), "float16")
            S = T.alloc_fragment((M, N), "float32")
            C = T.alloc_fragment((M, N), "float32")
            mx = T.alloc_fragment((M,), "float32")
            sm = T.alloc_fragment((M,), "float32")
            T.clear(C)
            T.copy(B, Bs)
            if not load:
                T.copy(A[0, 0], As)
            for it in T.serial(iters):
                if load:
                    T.copy(A[it * M, 0], As)
                T.gemm(As, Bs, S, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullCol)
                T.reduce_max(S, mx, dim=1)
                T.reduce_sum(S, sm, dim=1)
                for i, j in T.Parallel(M, N):
                    C[i, j] += S[i, j] - mx[i] + sm[i] * (it + 1) * 0.125
            T.copy(C, O)
    return main
EOF
t0=$(date +%s)
for load in 0 1; do
  R="$T/red2.py --entry red2 -D M=64 -D N=64 -D K=32 -D iters=4 -D load=$load"
  TILESCALE_CUDA_SMEM_REUSE=1 check "two reductions per iteration share red_smem (load=$load, reuse forced)" $R --atol 1e-3 --rtol 1e-4
  TILESCALE_CUDA_SMEM_REUSE=1 race "two reductions per iteration (load=$load, reuse forced)" $R
done

EX=${TL_EXAMPLES:-}
for d in .tl-examples ../.tl-examples ../../.tl-examples; do [ -z "$EX" ] && [ -d "$d" ] && EX=$(cd "$d" && pwd); done
if [ -z "$EX" ]; then
  echo "SKIP  TileLang's kernels: no .tl-examples (bash bench/tilelang_examples.sh fetch, then carry it)"
else
  MLA="$EX/deepseek_mla/example_mla_decode.py --entry flashattn -D batch=1 -D heads=64 -D kv_head_num=1 -D seqlen_kv=512 -D dim=512 -D pe_dim=64 -D block_N=64 -D block_H=64 -D num_split=1 -D softmax_scale=0.041666666666666664"
  check "MLA decode main_no_split (one scratch for two reductions)" $MLA
  race "MLA decode main_no_split" $MLA
  MLA8="$EX/deepseek_mla/experimental/example_mla_decode_kv_fp8.py --entry flashattn -D batch=1 -D heads=64 -D kv_head_num=1 -D seqlen_kv=512 -D dim=512 -D pe_dim=64 -D block_N=64 -D block_H=64"
  check "MLA decode, float8 KV (one scratch for two reductions)" $MLA8
  race "MLA decode, float8 KV" $MLA8
  MOE="$EX/fusedmoe/example_fusedmoe_tilelang.py --entry moe_forward_tilelang_shared -D dtype=float16 -D dhidden=512 -D dexpert=256 -D num_tokens=256"
  check "fused MoE shared experts (fragments in shared memory, unpadded)" $MOE
  race "fused MoE shared experts" $MOE
  [ -d .tl-examples ] || cp -r "$EX" .tl-examples
  OUT=$T BUDGET=${BUDGET:-150} bash bench/tilelang_examples.sh run 'deepseek_mla/test_example_mla_decode|fusedmoe/test_example_fusedmoe' >"$T/tl.log" 2>&1
  rows=$(grep -E '^\| (deepseek_mla|fusedmoe)/' "$T/tl.log" | cut -c1-300)
  echo "${rows:-no result rows: $(tail -3 "$T/tl.log")}"
  echo "$rows" | grep -q '| PASSED |' && ! echo "$rows" | grep -qE '\| (FAILED|ERROR|TIMEOUT|NOT RUN) \|' || fails=$((fails + 1))
fi
echo "smem_reuse_gpu: $fails failed, $(($(date +%s) - t0)) s"
exit $((fails > 0))
