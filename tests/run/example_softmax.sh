#!/bin/sh
. tests/run/lib.sh
check examples/softmax.py --entry softmax -D M=200 -D N=96 --check-against softmax_naive
