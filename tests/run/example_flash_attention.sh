#!/bin/sh
# FlashAttention against its naive entry, then against NumPy on heads whose
# scores sit near +360 (growing to the last key tile) or -360, where a wrong
# running maximum or a missing rescale overflows or gives 0/0.
. tests/run/lib.sh
check examples/flash_attention.py --entry flashattn -D batch=1 -D heads=2 -D seq_len=128 -D dim=64 -D is_causal=False --check-against attention_naive
check examples/flash_attention.py --entry flashattn -D batch=2 -D heads=1 -D seq_len=96 -D dim=32 -D is_causal=True --check-against attention_naive
np_check flash examples/flash_attention.py flashattn batch=1 heads=3 seq_len=128 dim=64 is_causal=False
np_check flash examples/flash_attention.py flashattn batch=2 heads=2 seq_len=96 dim=32 is_causal=True
np_check flash examples/flash_attention.py flashattn batch=1 heads=3 seq_len=100 dim=32 is_causal=False
np_end
