#!/bin/bash
# cpasync_cpu_check.sh — TileLang's four kernels of session 10 (T.ptx_cp_async,
# run-time clear_accum) on the C target against naive references on the same
# inputs (no GPU; a few minutes on 2 cores): deepseek_mla/example_mla_decode_ws.py
# and warp_specialize/example_warp_specialize_flashmla.py `flashattn` against
# tests/run/kernels/mla_ref.py (inputs: the CLI's random ones, dumped by --out);
# deepseek_v32/sparse_mla_fwd_pipelined.py and sparse_mla_fwd_seesaw.py
# `sparse_mla_fwd` against tests/run/kernels/sparse_mla_ref.py (inputs from
# tests/run/sparse_mla_inputs.py: valid row selections); compared by
# tests/run/npy_close.py.  The examples come from `bash bench/tilelang_examples.sh fetch`.
#
#   B=build-rel bash bench/cpasync_cpu_check.sh [TARGET]   # TARGET c (default) or cuda
# Prints one PASS/FAIL line per check and "N passed, N failed"; exit 1 if any failed.
set -u
cd "$(dirname "$0")/.."
B=${B:-build-rel}
TGT=${1:-c}
T=$B/tilescale
[ -x "$T" ] || { echo "no $T: build it first"; exit 1; }
[ -d .tl-examples ] || { echo "no .tl-examples: bash bench/tilelang_examples.sh fetch"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 fails=0
ok() { echo "PASS $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; [ -n "${2:-}" ] && echo "$2" | tail -12; fails=$((fails + 1)); }
mla() { # label file rtol atol defines...
  local label=$1 file=$2 rtol=$3 atol=$4 out
  shift 4
  out=$("$T" run "$file" --entry flashattn "$@" --target "$TGT" --seed 21 --out Q="$tmp/q.npy" --out Q_pe="$tmp/qp.npy" \
    --out KV="$tmp/kv.npy" --out K_pe="$tmp/kp.npy" --out Output="$tmp/o.npy" 2>&1) || { bad "$label" "$out"; return; }
  local d
  d=$(echo "$@" | sed 's/-D softmax_scale=[^ ]*//')
  out=$("$T" run tests/run/kernels/mla_ref.py --entry mla_decode_naive $d --target c --in Q="$tmp/q.npy" \
    --in Q_pe="$tmp/qp.npy" --in KV="$tmp/kv.npy" --in K_pe="$tmp/kp.npy" --out Output="$tmp/r.npy" 2>&1) ||
    { bad "$label (reference)" "$out"; return; }
  out=$(python3 tests/run/npy_close.py "$tmp/o.npy" "$tmp/r.npy" "$rtol" "$atol" 2>&1)
  if echo "$out" | grep -q '^PASS$'; then ok "$label"; else bad "$label" "$out"; fi
}
sparse() { # label example B S SKV H TOPK Q_START
  local label=$1 ex=$2 b=$3 s=$4 skv=$5 h=$6 topk=$7 qs=$8 out
  python3 tests/run/sparse_mla_inputs.py "$tmp" "$b" "$s" "$skv" "$h" 576 "$topk" "$qs" 5 || { bad "$label (inputs)"; return; }
  local io="--in Q=$tmp/q.npy --in KV=$tmp/kv.npy --in Indices=$tmp/idx.npy --in q_start_index_s=$tmp/qs.npy"
  out=$("$T" run .tl-examples/deepseek_v32/$ex.py --entry sparse_mla_fwd -D heads=$h -D dim=512 -D tail_dim=64 \
    -D topk=$topk -D kv_stride=1 -D CP0=False --shape batch=$b --shape seq_len=$s --shape seq_len_kv=$skv \
    --target "$TGT" $io --out Output="$tmp/o.npy" 2>&1) || { bad "$label" "$out"; return; }
  out=$("$T" run tests/run/kernels/sparse_mla_ref.py --entry sparse_mla_naive -D batch=$b -D seq_len=$s \
    -D seq_len_kv=$skv -D heads=$h -D dim=512 -D tail_dim=64 -D topk=$topk --target c $io --out Output="$tmp/r.npy" 2>&1) ||
    { bad "$label (reference)" "$out"; return; }
  out=$(python3 tests/run/npy_close.py "$tmp/o.npy" "$tmp/r.npy" 1e-2 6e-4 2>&1)
  if echo "$out" | grep -q '^PASS$'; then ok "$label"; else bad "$label" "$out"; fi
}
E1=.tl-examples/deepseek_mla/example_mla_decode_ws.py
E2=.tl-examples/warp_specialize/example_warp_specialize_flashmla.py
M="-D kv_head_num=1 -D dim=512 -D pe_dim=64 -D block_N=64 -D block_H=64"
mla "mla_decode_ws flashattn h64 ctx256 ($TGT)" $E1 1e-2 2e-4 -D batch=1 -D heads=64 -D seqlen_kv=256 $M -D num_split=1 \
  -D softmax_scale=0.041666666666666664
mla "mla_decode_ws flashattn b2 h128 ctx512 split 2 ($TGT)" $E1 2e-2 1e-3 -D batch=2 -D heads=128 -D seqlen_kv=512 $M \
  -D num_split=2 -D softmax_scale=0.041666666666666664
mla "flashmla flashattn h64 ctx384 ($TGT)" $E2 1e-2 2e-4 -D batch=1 -D heads=64 -D seqlen_kv=384 $M -D num_split=1
mla "flashmla flashattn b2 h128 ctx256 ($TGT)" $E2 1e-2 2e-4 -D batch=2 -D heads=128 -D seqlen_kv=256 $M -D num_split=1
sparse "sparse_mla_fwd_pipelined S8 SKV512 H64 topk128 ($TGT)" sparse_mla_fwd_pipelined 1 8 512 64 128 300
sparse "sparse_mla_fwd_seesaw S8 SKV512 H64 topk128 ($TGT)" sparse_mla_fwd_seesaw 1 8 512 64 128 300
sparse "sparse_mla_fwd_pipelined B2 S4 SKV1024 H128 topk256 ($TGT)" sparse_mla_fwd_pipelined 2 4 1024 128 256 700
sparse "sparse_mla_fwd_seesaw B2 S4 SKV1024 H128 topk256 ($TGT)" sparse_mla_fwd_seesaw 2 4 1024 128 256 700
echo "$passed passed, $fails failed"
[ $fails -eq 0 ]
