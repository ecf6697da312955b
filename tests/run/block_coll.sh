#!/bin/sh
# Collectives between the BLOCKS of a kernel (examples/block_coll.py:
# T.allreduce / T.allgather / T.reduce_scatter / T.all_to_all inside
# T.Scale("block"), each block with its own data) against naive references
# on the C target (blocks as coroutines, grid barriers on the launch's grid
# workspace): every collective on several grid sizes (up to 8 blocks a
# reduction folds in one expression, beyond in a loop), the reductions with
# sum, max and min, float32 and float16 (accumulated in float32), shared and
# fragment tiles; a persistent stencil with T.sync_grid() in its loop; the
# CUDA source of each (one cooperative kernel, grid barriers) and NVRTC's
# PTX where NVRTC is installed.  bench/blockcoll_gpu_check.sh runs them on
# a GPU.
. tests/run/lib.sh
e=examples/block_coll.py
for nb in 2 3 5 8; do
  for op in sum max min; do
    check $e --entry allreduce -D nb=$nb -D op=$op --check-against allreduce_ref
  done
  check $e --entry reduce_scatter -D nb=$nb -D op=max --check-against reduce_scatter_ref
  check $e --entry allgather -D nb=$nb --check-against allgather_ref
  check $e --entry all_to_all -D nb=$nb --check-against all_to_all_ref
done
check $e --entry reduce_scatter -D nb=4 -D op=sum -D R=3 -D C=7 --check-against reduce_scatter_ref
check $e --entry reduce_scatter -D nb=6 -D op=min --check-against reduce_scatter_ref
check $e --entry allreduce -D nb=4 -D scope=fragment -D R=16 -D C=32 --check-against allreduce_ref
check $e --entry allreduce -D nb=3 -D dtype=float16 -D R=3 -D C=40 --check-against allreduce_ref
check $e --entry reduce_scatter -D nb=4 -D dtype=float16 -D op=sum --check-against reduce_scatter_ref
check $e --entry allgather -D nb=16 -D R=1 -D C=8 --check-against allgather_ref
check $e --entry all_to_all -D nb=7 -D chunk=1 -D C=5 --check-against all_to_all_ref
# more than 8 blocks: reductions fold in a loop over the slots (into dst, or a float32 tile)
check $e --entry allreduce -D nb=12 -D op=max --check-against allreduce_ref
check $e --entry allreduce -D nb=9 -D dtype=float16 -D R=2 -D C=8 --check-against allreduce_ref
check $e --entry allreduce -D nb=20 -D scope=fragment -D R=16 -D C=32 --check-against allreduce_ref
check $e --entry reduce_scatter -D nb=10 -D op=sum -D R=1 --check-against reduce_scatter_ref
check $e --entry reduce_scatter -D nb=11 -D dtype=float16 -D op=min -D R=1 --check-against reduce_scatter_ref
check tests/run/kernels/block_coll_2d.py --entry ag --check-against ag_ref
check $e --entry stencil --check-against stencil_ref
check $e --entry stencil -D nb=7 -D per=33 -D steps=8 --check-against stencil_ref
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
for x in allreduce reduce_scatter allgather all_to_all stencil; do
  "$tool" compile $e --entry $x --target cuda --emit cuda >"$t/k.cu" || { echo "FAILED: $x: CUDA source"; exit 1; }
  # (stencil: its first T.sync_grid, at the top level, ends a launch; the loop's are grid barriers)
  want=1; [ $x = stencil ] && want=2
  [ "$(grep -c '__global__ void' "$t/k.cu")" = $want ] || { echo "FAILED: $x: want $want CUDA kernel(s)"; exit 1; }
  grep -q "ts_grid_sync(ts_grid_ws);" "$t/k.cu" || { echo "FAILED: $x: no grid barrier"; exit 1; }
  grep -q "atom.acq_rel.gpu.global.add.u32" "$t/k.cu" || { echo "FAILED: $x: the barrier's arrival"; exit 1; }
  if "$tool" compile $e --entry $x --target cuda --emit ptx >"$t/k.ptx" 2>"$t/err"; then
    grep -q "ld.acquire.gpu" "$t/k.ptx" || { echo "FAILED: $x: PTX lacks the barrier's acquire"; exit 1; }
  elif ! grep -q "NVRTC not found" "$t/err"; then
    cat "$t/err"; echo "FAILED: $x: PTX"; exit 1
  fi
done
# several ranks launching one cooperative module at once (sim ranks: threads
# of one process), each launch with its own grid workspace
k=tests/run/kernels/coop_ranks.py
check $k --entry fold --ranks 2 --check-against fold_ref
check $k --entry fold --ranks 4 -D nb=3 -D steps=20 --check-against fold_ref
# CUDA: the workspace is the kernel's last parameter, the launch's own
"$tool" compile $k --entry fold --target cuda --emit cuda >"$t/k.cu" || { echo "FAILED: fold: CUDA source"; exit 1; }
grep -q "unsigned char \*const ts_grid_ws) {" "$t/k.cu" || { echo "FAILED: fold: no ts_grid_ws parameter"; exit 1; }
if grep -q "__device__.*ts_grid_ws\[" "$t/k.cu"; then echo "FAILED: fold: a module-wide grid workspace"; exit 1; fi
echo "block_coll: all passed"
