#!/bin/sh
. tests/run/lib.sh
check examples/flash_attention.py --entry flashattn -D batch=1 -D heads=2 -D seq_len=128 -D dim=64 -D is_causal=False --check-against attention_naive
check examples/flash_attention.py --entry flashattn -D batch=2 -D heads=1 -D seq_len=96 -D dim=32 -D is_causal=True --check-against attention_naive
