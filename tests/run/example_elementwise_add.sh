#!/bin/sh
# elementwise_add against its naive entry, then against NumPy (exact: one
# correctly rounded addition, float32 and float16).
. tests/run/lib.sh
check examples/elementwise_add.py --entry elementwise_add -D M=100 -D N=200 --check-against elementwise_add_naive
check examples/elementwise_add.py --entry elementwise_add -D M=64 -D N=64 -D in_dtype=float16 -D out_dtype=float16 --check-against elementwise_add_naive
np_check add examples/elementwise_add.py elementwise_add M=100 N=200
np_check add examples/elementwise_add.py elementwise_add M=64 N=64 in_dtype=float16 out_dtype=float16
np_end
