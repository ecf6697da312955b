# Pins the C printed from pass poll_marks' marks (golden ir_poll_marks_c):
# the yield in the polling loop, ts_ld_* acquire loads there, ts_st_*
# release stores.  After an intended change:
#   UPDATE_GOLDEN=1 sh tests/golden/run_golden.sh tests/golden/c_poll_marks.py
# ARGS: compile tests/golden/ir_wait_flag.py --entry chain -D n=4 --target c --emit c
