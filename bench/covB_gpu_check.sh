#!/bin/bash
# covB_gpu_check.sh — the kernels layout inference now keeps in registers
# (issue 8 part D, issue 5 part A; session 6 helper covB) on the GPU:
#
#  1. tests/run/kernels/frag_free.py (a row sum stored by its first replicas,
#     a transposed fragment read by a float32 gemm through shared copies, a
#     bool mask smaller than the block read by columns of an mma tile, a
#     fragment over the register budget left in shared memory, two tiles of
#     one loop body sharing bytes) against the C target (--check-target c);
#  2. TileLang's examples that compile since: KDA wy_fast backward and GDN
#     chunk_delta backward, at small sizes, against the C target;
#  3. compute-sanitizer racecheck / synccheck / memcheck on small runs of all of
#     them;
#  4. TileLang's own tests of the GDN examples (bench/tilelang_examples.sh run;
#     KDA has none) and deepseek_v32's sparse MLA forward test (it compiles since
#     the FullRow/FullCol warp-grid fallback); NO_TL_TESTS=1 skips them.
#
#   B=build-gpu bash bench/covB_gpu_check.sh     # on the GPU machine, carry [".tl-examples"]
#
# Without .tl-examples (bash bench/tilelang_examples.sh fetch, here) parts 2 and 4
# are skipped; without a GPU nothing runs (exit 77, as the GPU-only tests do).
set -u
cd "$(dirname "$0")/.."
B=${B:-build-gpu}
T=$B/tilescale
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$PATH:/usr/local/cuda/bin
export TILESCALE_CACHE_DIR=$PWD/$B/kcache
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
[ -d "$B" ] || cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null
[ -x "$T" ] || cmake --build "$B" -j"$(nproc)" --target tilescale_cli >/dev/null
fail=0
K=tests/run/kernels/frag_free.py
WY=.tl-examples/kda/wy_fast_bwd.py
GDN=.tl-examples/gdn/example_chunk_delta_bwd.py
WYD="-D B=1 -D DK=128 -D DV=128 -D accum_dtype=float32 -D chunk_size=64 -D gate_dtype=float32 -D input_dtype=float32 -D output_dtype=float32 -D state_dtype=float32"
GDND="-D B=1 -D DK=128 -D DV=128 -D accum_dtype=float32 -D block_DV=64 -D chunk_size=64 -D gate_dtype=float32 -D input_dtype=bfloat16 -D num_stages=0 -D output_dtype=bfloat16 -D scale=0.08838834764831845 -D state_dtype=float32 -D threads=256 -D use_final_state_gradient=True -D use_g=True -D use_initial_state=True"
run() { # label, file, then the tilescale arguments
  local label=$1 file=$2; shift 2
  local out; out=$("$T" run "$file" --target cuda --check-target c "$@" 2>&1)
  local v; v=$(echo "$out" | grep -Eo "PASS|FAIL" | head -1)
  echo "| $label | ${v:-ERROR} |"
  [ "$v" = PASS ] || { fail=1; echo "$out" | tail -8; }
}
echo "| kernel vs C target | result |"
echo "|---|---|"
run "row_sums 96x64x3" $K --entry row_sums -D M=96 -D N=64 -D K=3
run "row_sums 40x128x2 block_M=16" $K --entry row_sums -D M=40 -D N=128 -D K=2 -D block_M=16
run "transpose_gemm 64/32/32" $K --entry transpose_gemm
run "transpose_gemm 128/64/64 256 threads" $K --entry transpose_gemm -D S=128 -D DK=64 -D DV=64 -D threads=256
run "col_mask 64x32" $K --entry col_mask
run "col_mask 128x64 limit=0" $K --entry col_mask -D H=128 -D BS=64 -D limit=0
run "col_mask FullCol, 8 warps over 32 columns" $K --entry col_mask -D threads=256 -D full_col=True
run "over_budget 32x288" $K --entry over_budget
run "loop_tiles 32x32x3" $K --entry loop_tiles
have_ex=0
[ -f "$WY" ] && [ -f "$GDN" ] && have_ex=1
if [ $have_ex = 1 ]; then
  # shellcheck disable=SC2086
  run "KDA wy_fast_bwd S=256 H=2" $WY --entry tilelang_wy_fast_bwd $WYD -D S=256 -D H=2
  # shellcheck disable=SC2086
  run "GDN chunk_delta_bwd S=256 H=2" $GDN --entry tilelang_chunk_gated_delta_rule_bwd_dhu $GDND -D S=256 -D H=2
  # the configurations of the coverage measurement (compile only: shared memory and registers)
  for spec in "$WY tilelang_wy_fast_bwd -D S=32768 -D H=8" "$GDN tilelang_chunk_gated_delta_rule_bwd_dhu -D S=32768 -D H=8"; do
    set -- $spec
    f=$1 e=$2; shift 2
    d=$WYD; [ "$f" = "$GDN" ] && d=$GDND
    # shellcheck disable=SC2086
    echo "compile $e: $("$T" compile "$f" --entry "$e" $d "$@" --target cuda --emit ir 2>&1 | grep -E "shared_memory|error" | head -2 | tr '\n' ' ')"
  done
else
  echo "(.tl-examples missing: TileLang's examples skipped; run bash bench/tilelang_examples.sh fetch where the mirror is, and carry it)"
fi
if command -v compute-sanitizer >/dev/null; then
  san() { # label, file, args
    local label=$1 file=$2; shift 2
    for tool in racecheck synccheck memcheck; do
      local r; r=$(compute-sanitizer --tool $tool "$T" run "$file" --target cuda "$@" 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard" | head -3 | tr '\n' ' ')
      echo "sanitizer $tool $label: $r"
      echo "$r" | grep -Eq "ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards" || fail=1
    done
  }
  for e in row_sums transpose_gemm col_mask over_budget loop_tiles; do san "$e" $K --entry $e; done
  if [ $have_ex = 1 ]; then
    # shellcheck disable=SC2086
    san wy_fast_bwd $WY --entry tilelang_wy_fast_bwd $WYD -D S=128 -D H=1
    # shellcheck disable=SC2086
    san chunk_delta_bwd $GDN --entry tilelang_chunk_gated_delta_rule_bwd_dhu $GDND -D S=128 -D H=1
  fi
else
  echo "compute-sanitizer not found: sanitizer runs skipped"
fi
if [ $have_ex = 1 ] && [ -z "${NO_TL_TESTS:-}" ]; then
  # TileLang's own tests of the two examples (torch references), through our shim
  BUDGET=${BUDGET:-300} bash bench/tilelang_examples.sh run "gdn/test_example_gdn" 2>&1 | tail -25
  # sparse MLA forward (its mma warp grid now falls back from FullRow; its test file is not
  # named test_example_*, so it is run here, with the library tilelang_examples.sh built)
  if [ -f .tl-examples/deepseek_v32/test_tilelang_example_deepseek_v32.py ]; then
    echo "deepseek_v32 test_example_sparse_mla_fwd: $(cd .tl-examples/deepseek_v32 && TILESCALE_LIB=$OLDPWD/$B/libtilescale.so \
      PYTHONPATH=$OLDPWD/python:$OLDPWD/bench/tl_refs TILESCALE_TEST=test_example_sparse_mla_fwd timeout 300 \
      python3 -m tilescale test_tilelang_example_deepseek_v32.py 2>&1 | grep -E "PASSED|FAILED|Error" | head -3 | tr '\n' ' ')"
  fi
fi
[ $fail = 0 ] && echo "ALL PASS" || echo "SOME FAILED"
