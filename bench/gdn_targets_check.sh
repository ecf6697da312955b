#!/bin/bash
# gdn_targets_check.sh — does TileLang's GDN chunk_delta_bwd compute the same on
# the CUDA and C targets?  Runs tilelang_chunk_gated_delta_rule_bwd_dhu on both
# targets with the same random inputs (--seed 5), input/output storage bfloat16
# (the example's) and float32 (no bfloat16 rounding), and compares the outputs
# normwise beside a baseline: the C target's bfloat16 run against its float32 run
# (how much rounding the inputs to bfloat16 alone changes the result).
#   bash bench/gdn_targets_check.sh      # repository root; .tl-examples fetched
#                                        # (bench/tilelang_examples.sh fetch); T= the CLI
# Exits 77 without a GPU or without the example.  Results: bench/RESULTS.md.
T=${T:-./build-gpu/tilescale}
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
[ -f .tl-examples/gdn/example_chunk_delta_bwd.py ] || { echo "no .tl-examples: skipped"; exit 77; }
GDN=.tl-examples/gdn/example_chunk_delta_bwd.py
base="-D B=1 -D DK=128 -D DV=128 -D accum_dtype=float32 -D block_DV=64 -D chunk_size=64 -D gate_dtype=float32 -D num_stages=0 -D scale=0.08838834764831845 -D state_dtype=float32 -D threads=256 -D use_final_state_gradient=True -D use_initial_state=True -D H=2"
for g in False True; do for S in 128 256; do for dt in bfloat16 float32; do for tg in c cuda; do
  $T run $GDN --entry tilelang_chunk_gated_delta_rule_bwd_dhu $base -D use_g=$g -D S=$S -D input_dtype=$dt -D output_dtype=$dt --target $tg --seed 5 \
     --out dh0=/tmp/g_${g}_${S}_${dt}_${tg}_dh0.npy --out dh=/tmp/g_${g}_${S}_${dt}_${tg}_dh.npy --out dv2=/tmp/g_${g}_${S}_${dt}_${tg}_dv2.npy > /dev/null 2>&1 || echo "run failed $g $S $dt $tg"
done; done; done; done
python3 - <<'PY'
import numpy as np
def ld(*k):
    try: a = np.load('/tmp/g_%s_%s_%s_%s_%s.npy' % k)
    except Exception as e: return None
    if a.dtype == np.uint16: a = (a.astype(np.uint32) << 16).view(np.float32)  # bfloat16 bits
    return a.astype(np.float64)
def cmp(a, b):
    if a is None or b is None: return "missing"
    d = np.abs(a - b); n = np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300)
    return "norm-rel %.2e  max-abs %.3g  max|ref| %.3g  elems>1%% %d/%d" % (n, d.max(), np.abs(b).max(), int((d > 0.01 * np.abs(b) + 1e-6 * np.abs(b).max()).sum()), b.size)
for g in ("False", "True"):
    for S in (128, 256):
        for o in ("dh0", "dh", "dv2"):
            print("use_g=%s S=%d %-3s | cuda-vs-c f32: %s" % (g, S, o, cmp(ld(g, S, "float32", "cuda", o), ld(g, S, "float32", "c", o))))
            print("use_g=%s S=%d %-3s | cuda-vs-c bf16: %s" % (g, S, o, cmp(ld(g, S, "bfloat16", "cuda", o), ld(g, S, "bfloat16", "c", o))))
            print("use_g=%s S=%d %-3s | c bf16-vs-f32 (baseline): %s" % (g, S, o, cmp(ld(g, S, "bfloat16", "c", o), ld(g, S, "float32", "c", o))))
PY
