#!/bin/sh
# RMSNorm against its naive entry, then against NumPy (rows at 1e3 and 1e-3
# scale, constant rows).
. tests/run/lib.sh
check examples/rms_norm.py --entry rms_norm -D M=96 -D N=320 --check-against rms_norm_naive
check examples/rms_norm.py --entry rms_norm -D M=50 -D N=100 --check-against rms_norm_naive
check examples/rms_norm.py --entry rms_norm_row -D M=37 -D N=1024 --check-against rms_norm_naive
check examples/rms_norm.py --entry rms_norm_row -D M=20 -D N=320 --check-against rms_norm_naive
np_check rms_norm examples/rms_norm.py rms_norm M=96 N=320
np_check rms_norm examples/rms_norm.py rms_norm M=50 N=100
np_check rms_norm examples/rms_norm.py rms_norm_row M=37 N=1024
np_end
