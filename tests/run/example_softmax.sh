#!/bin/sh
# Softmax against its naive entry, then against NumPy on rows at +1000 and
# -1000, with the maximum in the last column, and wide negative rows (a
# wrong maximum overflows exp or gives 0/0; uniform rows in [-1, 1] hide it).
. tests/run/lib.sh
check examples/softmax.py --entry softmax -D M=200 -D N=96 --check-against softmax_naive
np_check softmax examples/softmax.py softmax M=200 N=96
np_check softmax examples/softmax.py softmax M=37 N=33
np_check softmax examples/softmax.py softmax_naive M=23 N=70
# control: a maximum starting at 0 passes against the naive entry, not against NumPy
check tests/run/kernels/softmax_max0.py --entry softmax -D M=200 -D N=96 --check-against softmax_naive
np_must_fail softmax tests/run/kernels/softmax_max0.py softmax M=200 N=96
np_end
