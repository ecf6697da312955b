# Pins pass poll_marks on the C target (golden ir_wait_flag's chain kernel):
# the polling loop (`# poll`: the C target yields each iteration), its
# acquire load, the release stores.  After an intended change:
#   UPDATE_GOLDEN=1 sh tests/golden/run_golden.sh tests/golden/ir_poll_marks_c.py
# ARGS: compile tests/golden/ir_wait_flag.py --entry chain -D n=4 --target c --dump-after poll_marks
