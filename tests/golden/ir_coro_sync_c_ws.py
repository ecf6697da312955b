# ARGS: compile examples/ws_gemm.py --entry ws_matmul -D M=128 -D N=128 -D K=64 -D block_M=64 -D block_N=64 -D block_K=32 --target c --dump-after coro_sync_c
# Pass coro_sync_c on the kernel of ir_coro_sync_c_ws_before.py: each run
# of uniform statements becomes a solo role - thread 0 for the block's
# mbarrier inits (between barrier(16, 0): every live thread), the role's
# first thread for a role's code (between barrier(17 + its first warp, its
# threads): 17 for threads [0, 128), 21 for [128, 256)).  An mbarrier
# arrive in a solo role still counts the role's 128 threads.  The
# allocation of free, between the two inits, moves ahead of their run (a
# declaration may come earlier): one solo, as the C printer had it.
# Checked by running: tests/run/example_ws_gemm.sh.
