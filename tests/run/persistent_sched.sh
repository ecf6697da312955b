#!/bin/sh
# T.PersistentTileScheduler (tests/run/kernels/persistent_sched.py): the
# persistent blocks' while loop against a naive enumeration of the tiles in
# TileLang's order, on the C target: every tile exactly once (Y updated in
# place, Owner = block and wave), grids that do not divide into tiles,
# swizzle panels with a narrower last one, row- and column-major, more
# blocks than tiles, one block, clusters of 2 (block_id // 2 as the worker),
# the default num_workers (driver.get_num_sms()); the stateless coord()
# form; a persistent GEMM (a pipelined k loop and T.gemm inside the while)
# against a naive GEMM; a planted order bug the reference must reject.  The CUDA source
# compiles (PTX where NVRTC is found).  bench/persist_gpu_check.sh runs it
# on a GPU.
. tests/run/lib.sh
f=tests/run/kernels/persistent_sched.py
check $f --entry persist --target c --check-against persist_naive
check $f --entry persist --target c -D col=False --check-against persist_naive
check $f --entry persist --target c -D swizzle=1 --check-against persist_naive
check $f --entry persist --target c -D swizzle=8 -D blocks=4 --check-against persist_naive
check $f --entry persist --target c -D blocks=40 --check-against persist_naive
check $f --entry persist --target c -D blocks=1 --check-against persist_naive
check $f --entry persist --target c -D M=200 -D N=33 -D TM=8 -D TN=8 -D blocks=7 -D swizzle=3 --check-against persist_naive
check $f --entry persist --target c -D cluster=2 -D blocks=4 --check-against persist_naive
check $f --entry persist --target c -D cluster=2 -D blocks=6 -D M=70 -D N=50 -D col=False -D swizzle=3 --check-against persist_naive
check $f --entry persist --target c -D blocks=0 -D M=300 -D N=600 -D swizzle=4 --check-against persist_naive
check $f --entry persist_coord --target c --check-against persist_naive
check $f --entry persist_gemm --target c --check-against gemm_naive
# --check-against with --check-target (bench/persist_gpu_check.sh's form: the reference on the C target)
out=$("$tool" run $f --entry persist --target c --check-against persist_naive --check-target c 2>&1)
echo "$out" | grep -q '^check against persist_naive on target c:$' && echo "$out" | grep -q '^PASS$' ||
  { echo "$out"; echo "FAILED: --check-against with --check-target"; exit 1; }
check $f --entry persist_gemm --target c -D M=130 -D N=70 -D K=100 -D blocks=3 -D swizzle=3 --check-against gemm_naive
check $f --entry persist_coord --target c -D col=False -D swizzle=3 -D blocks=5 --check-against persist_naive
check $f --entry persist_coord --target c -D cluster=2 -D blocks=4 --check-against persist_naive
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
# control: the reference taking the other axis as the cluster row must fail
sed 's/cm = (f if col else p \* swizzle + s)/cm = (p * swizzle + s if col else f)/' $f >"$t/bug.py"
cmp -s $f "$t/bug.py" && { echo "FAILED: the planted bug was not planted"; exit 1; }
out=$("$tool" run "$t/bug.py" --entry persist --target c -D M=64 -D N=64 --check-against persist_naive 2>&1)
echo "$out" | grep -q '^FAIL$' || { echo "$out"; echo "FAILED: the planted order bug passed"; exit 1; }
for e in persist persist_coord persist_gemm; do
  "$tool" compile $f --entry $e --target cuda --emit cuda >"$t/c.cu" || { echo "FAILED: $e: CUDA source"; exit 1; }
  grep -q "while" "$t/c.cu" || [ $e = persist_coord ] || { echo "FAILED: $e: no while loop in the CUDA source"; exit 1; }
  if ! "$tool" compile $f --entry $e --target cuda --emit ptx >"$t/c.ptx" 2>"$t/err"; then
    grep -q "NVRTC not found" "$t/err" || { cat "$t/err"; echo "FAILED: $e: PTX"; exit 1; }
  fi
done
echo "persistent_sched: ok"
