# ARGS: compile tests/run/kernels/target_refusals.py --entry sync_coro --target c --emit c
# T.sync_grid in a C kernel whose threads run as coroutines (T.thread_return
# makes them wait for each other): refused by pass verify_lowered
# (src/pass/verify_target.c) at the statement (session 11; the C printer
# refused it while printing, without a location).  The kernel:
# tests/run/kernels/target_refusals.py.
