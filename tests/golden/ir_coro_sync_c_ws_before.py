# ARGS: compile examples/ws_gemm.py --entry ws_matmul -D M=128 -D N=128 -D K=64 -D block_M=64 -D block_N=64 -D block_K=32 --target c --dump-after warp_c
# The C target's IR of a warp-specialised GEMM (two T.ws roles handing tiles
# to each other through mbarriers: a coroutine kernel, thread_coro) before
# pass coro_sync_c: the roles' uniform code (copies, the gemm's loops, the
# mbarrier waits and arrives) with nothing saying which thread runs it.
# After: ir_coro_sync_c_ws.py.
