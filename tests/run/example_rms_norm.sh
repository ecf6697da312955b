#!/bin/sh
. tests/run/lib.sh
check examples/rms_norm.py --entry rms_norm -D M=96 -D N=320 --check-against rms_norm_naive
check examples/rms_norm.py --entry rms_norm -D M=50 -D N=100 --check-against rms_norm_naive
