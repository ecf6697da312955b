#!/bin/sh
. tests/run/lib.sh
check examples/elementwise_add.py --entry elementwise_add -D M=100 -D N=200 --check-against elementwise_add_naive
check examples/elementwise_add.py --entry elementwise_add -D M=64 -D N=64 -D in_dtype=float16 -D out_dtype=float16 --check-against elementwise_add_naive
