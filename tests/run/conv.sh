#!/bin/sh
# T.im2col with flattened views of global tensors (TileLang's
# examples/convolution) on the C target against a naive convolution, on
# random inputs: padding, stride 2 with dilation 2, partial row and column
# tiles.  The CUDA passes run it in tests/unit/test_interp_examples.c.
. tests/run/lib.sh
f=tests/run/kernels/conv.py
check $f --entry convolution --target c --check-against convolution_naive --rtol 1e-4 --atol 1e-4
check $f --entry convolution --target c -D N=3 -D H=11 -D W=10 -D S=2 -D D=2 -D P=2 -D F=48 --check-against convolution_naive --rtol 1e-4 --atol 1e-4
