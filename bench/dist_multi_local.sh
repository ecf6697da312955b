#!/bin/sh
# The local backend's several-GPU path (src/comm/local_cuda.c): rank r on
# GPU r mod G, a module copy per GPU, T.barrier_all's counter and the abort
# word on rank 0's heap, peer access between the GPUs.  On a machine with
# several GPUs it runs there (G = all visible, or $TILESCALE_LOCAL_GPUS);
# on one GPU TILESCALE_LOCAL_SPREAD=1 takes the same path with G = 1, which
# is what the one-GPU machine can check of it.  Every case against its
# reference; misuse must be a clear error.
#   sh bench/dist_multi_local.sh [./build-gpu/tilescale]
tool="${1:-./build-gpu/tilescale}"
d=examples/distributed
c=$d/collectives.py
b=tests/run/dist_bad.py
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "${ngpu:-0}" -ge 2 ] || export TILESCALE_LOCAL_SPREAD=1
echo "GPUs: ${ngpu:-0}; TILESCALE_LOCAL_SPREAD=${TILESCALE_LOCAL_SPREAD:-0} TILESCALE_LOCAL_GPUS=${TILESCALE_LOCAL_GPUS:-all}"
pass=0
fail=0
ok() {
  name="$1"; shift
  out=$(timeout 120 "$tool" run "$@" --target cuda --timeout 20 2>&1)
  rc=$?
  if [ $rc -eq 0 ] && echo "$out" | grep -q '^PASS$'; then
    pass=$((pass + 1)); echo "PASS  $name"
  else
    fail=$((fail + 1)); echo "FAIL  $name (rc $rc)"; echo "$out" | grep -v ' ok$' | tail -6 | sed 's/^/      /'
  fi
}
err() {
  name="$1"; want="$2"; shift 2
  out=$(timeout 120 "$tool" run "$@" --target cuda 2>&1)
  rc=$?
  if [ $rc -ne 0 ] && [ $rc -ne 124 ] && echo "$out" | grep -qF "$want"; then
    pass=$((pass + 1)); echo "PASS  $name"
  else
    fail=$((fail + 1)); echo "FAIL  $name (rc $rc, wanted '$want')"; echo "$out" | tail -6 | sed 's/^/      /'
  fi
}
for n in 2 4; do
  ok "put_block x$n" $d/put_block.py --entry kernel_ --ranks $n -D M=65536 -D num_rank=$n -D block_M=4096 -D threads=128 --check-against put_block_ref
  ok "allreduce (signals) x$n" $d/allreduce.py --entry allreduce --ranks $n -D P=$n -D N=4000 --in round=1 --check-against allreduce_ref
  ok "T.allreduce (barriers) x$n" $c --entry allreduce --ranks $n -D rows=24 -D cols=40 --check-against allreduce_ref
  ok "T.reduce_scatter x$n" $c --entry reduce_scatter --ranks $n -D rows=64 -D cols=256 -D P=$n --check-against reduce_scatter_ref
  ok "tile copies x$n" $d/tile_copy.py --entry tile_copy --ranks $n -D M=40 -D N=48 -D BM=16 -D BN=16 --check-against tile_copy_ref
  ok "GEMM-RS overlapped x$n" $d/tp_gemm.py --entry gemm_rs_overlap --ranks $n -D M=$((128 * n)) -D N=128 -D KP=64 -D P=$n --in round=1 --check-against gemm_rs_overlap_ref
done
ok "SUMMA 2x2" $d/summa.py --entry summa --ranks 4 -D q=2 -D BM=128 -D BN=128 -D BK=128 --check-against summa_ref
ok "Cannon 2x2" $d/cannon.py --entry cannon --ranks 4 -D q=2 -D BM=128 -D BN=128 -D BK=128 --check-against cannon_ref
ok "warp primitives x2" $d/warp_prims.py --entry warp_prims --ranks 2 -D M=65536 -D block_M=4096 -D threads=128 --check-against warp_prims_ref
err "wait nobody answers" "T.wait: timed out after 2000 ms waiting for element 1" $b --entry lonely_wait -D P=2 --ranks 2 --timeout 2
err "barrier_all skipped by a rank" "T.barrier_all: timed out" $b --entry partial_barrier -D P=3 --ranks 3 --timeout 2
err "peer out of range" "is out of range (3 ranks)" $b --entry bad_peer -D P=3 --ranks 3
saved="${TILESCALE_LOCAL_GPUS:-}"
export TILESCALE_LOCAL_GPUS=99
err "more GPUs asked for than seen" "TILESCALE_LOCAL_GPUS=99: want 1 .." $c --entry allreduce --ranks 2 -D rows=24 -D cols=40
if [ -n "$saved" ]; then TILESCALE_LOCAL_GPUS="$saved"; else unset TILESCALE_LOCAL_GPUS; fi
echo "dist_multi_local: $pass passed, $fail failed"
[ $fail -eq 0 ]
