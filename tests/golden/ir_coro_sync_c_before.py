# ARGS: compile tests/run/thread_coro.py --entry staged --target c --dump-after warp_c
# A coroutine kernel (thread 8 spins on a flag thread 32 sets: thread_coro)
# with block-level code between its thread ranges - uniform stores, a
# T.Parallel nest, a uniform while loop - before pass coro_sync_c.  After:
# ir_coro_sync_c.py.
