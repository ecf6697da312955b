# Pins pass poll_marks on a blocking kernel (golden ir_wait_flag's chain: block
# b waits for block b + 1's flag), CUDA target: the flag's load in the loop is
# a polling load (`.acquire`), the loop that reads it polls (`# acquire, poll`:
# partition_threads' fence after it, then poll_marks' mark), every global
# store is `release`, and so is every block barrier (`barrier(release)`).  Its
# printed text: goldens cuda_poll_marks and c_poll_marks (C target: golden
# ir_poll_marks_c).  After an intended change:
#   UPDATE_GOLDEN=1 sh tests/golden/run_golden.sh tests/golden/ir_poll_marks.py
# ENV: TILESCALE_CUDA_ARCH=sm_80
# ARGS: compile tests/golden/ir_wait_flag.py --entry chain -D n=4 --target cuda --dump-after poll_marks
