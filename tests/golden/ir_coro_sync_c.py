# ARGS: compile tests/run/thread_coro.py --entry staged --target c --dump-after coro_sync_c
# Pass coro_sync_c on the kernel of ir_coro_sync_c_before.py: each run of
# block-level statements is thread 0's (solo) between two barriers of every
# live thread (barrier(16, 0)); the thread ranges and the allocation of k
# are every thread's.  Checked by running (tests/run/thread_coro.sh, entry
# staged: without either barrier the result is wrong).
