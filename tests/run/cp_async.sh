#!/bin/sh
# TileLang's explicit asynchronous copies (tests/run/kernels/cp_async.py:
# T.access_ptr, T.ptx_cp_async, T.ptx_commit_group / T.ptx_wait_group,
# T.cp_async_barrier_noinc) on the C target against naive kernels: a
# warp-specialized GEMM whose producer copies rows of 16, 8 and 4 bytes,
# some predicated off (partial tiles), and rows gathered through an index
# tensor in committed groups; rows gathered by groups of 8 threads that each
# store the row's validity flag (one value: insert_sync accepts it).  The CUDA source prints them as cp.async
# (16 bytes .cg, others .ca) with the group commit and wait and the noinc
# mbarrier arrival; NVRTC, where present, compiles it.  tests/unit/
# test_interp_ws.c runs the CUDA IR thread by thread; bench/
# cpasync_gpu_check.sh runs it on a GPU.
. tests/run/lib.sh
f=tests/run/kernels/cp_async.py
check $f --entry ws_cp_async --target c --check-against matmul_nt_naive
check $f --entry ws_cp_async --target c -D M=200 -D N=136 -D K=160 -D block_K=32 -D vec=4 --check-against matmul_nt_naive
check $f --entry ws_cp_async --target c -D M=64 -D N=64 -D K=64 -D block_K=16 -D vec=2 --check-against matmul_nt_naive
check $f --entry gather_groups --target c --check-against gather_naive
check $f --entry gather_groups --target c -D vec=1 -D dtype=float32 --check-against gather_naive
check $f --entry gather_groups --target c -D vec=8 -D dtype=float16 -D D=128 --check-against gather_naive
check $f --entry gather_flags --target c --check-against gather_flags_naive
check $f --entry gather_flags --target c -D D=128 -D S=32 -D R=200 --check-against gather_flags_naive
check $f --entry gather_flags_branch --target c --check-against gather_flags_naive
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
TILESCALE_CUDA_ARCH=sm_90 "$tool" compile $f --entry ws_cp_async --target cuda --emit cuda >"$t/w.cu" || { echo "FAILED: CUDA source of ws_cp_async"; exit 1; }
[ "$(grep -c 'ts_cp_async<16>(ts_d, ts_s, ts_p)' "$t/w.cu")" = 2 ] || { echo "FAILED: ws_cp_async: not two 16-byte cp.async"; exit 1; }
grep -q 'ts_mbar_arrive_async_noinc(&full' "$t/w.cu" || { echo "FAILED: ws_cp_async: no noinc arrival"; exit 1; }
TILESCALE_CUDA_ARCH=sm_90 "$tool" compile $f --entry gather_groups --target cuda --emit cuda >"$t/g.cu" || { echo "FAILED: CUDA source of gather_groups"; exit 1; }
grep -q 'ts_cp_async_commit();' "$t/g.cu" && grep -q 'ts_cp_async_wait<0>();' "$t/g.cu" || { echo "FAILED: gather_groups: no commit/wait"; exit 1; }
"$tool" compile $f --entry gather_groups --target c --emit c >"$t/g.c" || { echo "FAILED: C source"; exit 1; }
if grep -q 'ts_cp_async\|cp\.async' "$t/g.c"; then echo "FAILED: cp.async in the C target's source"; exit 1; fi
if TILESCALE_CUDA_ARCH=sm_90 "$tool" compile $f --entry ws_cp_async --target cuda --emit ptx >"$t/w.ptx" 2>"$t/err"; then
  grep -q 'cp\.async\.cg\.shared\.global' "$t/w.ptx" || { echo "FAILED: no cp.async.cg in the PTX"; exit 1; }
  grep -q 'cp\.async\.mbarrier\.arrive\.noinc' "$t/w.ptx" || { echo "FAILED: no cp.async.mbarrier.arrive.noinc in the PTX"; exit 1; }
  TILESCALE_CUDA_ARCH=sm_90 "$tool" compile $f --entry ws_cp_async -D vec=4 --target cuda --emit ptx >"$t/w4.ptx" || { echo "FAILED: PTX vec=4"; exit 1; }
  grep -q 'cp\.async\.ca\.shared\.global.*8' "$t/w4.ptx" || { echo "FAILED: no 8-byte cp.async.ca in the PTX"; exit 1; }
  TILESCALE_CUDA_ARCH=sm_90 "$tool" compile $f --entry gather_groups --target cuda --emit ptx >"$t/g.ptx" || { echo "FAILED: PTX gather"; exit 1; }
  grep -q 'cp\.async\.wait_group 0' "$t/g.ptx" || grep -q 'cp\.async\.wait_all' "$t/g.ptx" || { echo "FAILED: no cp.async wait in the PTX"; exit 1; }
  echo "NVRTC: cp.async in the PTX"
elif grep -q "NVRTC not found" "$t/err"; then
  echo "NVRTC not found: PTX not checked"
else
  cat "$t/err"; echo "FAILED: PTX"; exit 1
fi
echo "cp_async: ok"
