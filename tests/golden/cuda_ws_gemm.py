# Pins the CUDA source of examples/ws_gemm.py's ring of mbarrier-handed tiles (T.ws producer
# role 1 loads, consumer role 0 runs the tensor-core gemm on its own 4 warps, its accumulator in
# registers laid out over those warps: ts_gemm_0's register form, the epilogue as column pairs
# from the registers, 64 KB of shared memory instead of 138 KB): the inits by one
# thread and one block barrier after them, each role's code under its thread range, waits and
# arrives as mbarrier PTX helpers (try_wait on sm_90), and no barrier inside the K loop (with the
# accumulator in shared memory the consumer needed its named barrier, bar.sync 1, 128, before
# each gemm).  The producer's copies (A and B, 16-byte vectors) are cp.async and its arrive
# ts_mbar_arrive_async_noinc (cp.async.mbarrier.arrive.noinc alone: the arrival made once they
# have landed is the thread's; pass ws_async_copy; session 7's cp.async.mbarrier.arrive + arrive,
# TILESCALE_CUDA_WS_ASYNC=mbar, is what synccheck 2025.3 reports as "Missing wait").
#   UPDATE_GOLDEN=1 sh tests/golden/run_golden.sh tests/golden/cuda_ws_gemm.py
# ENV: TILESCALE_CUDA_ARCH=sm_90
# ARGS: compile examples/ws_gemm.py --entry ws_matmul_ring -D M=4096 -D N=4096 -D K=4096 --target cuda --emit cuda
