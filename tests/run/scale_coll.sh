#!/bin/sh
# Collectives between the units of one block (examples/scale_coll.py:
# T.allreduce / T.allgather / T.reduce_scatter / T.all_to_all inside
# T.Scale("warp") and T.Scale("warpgroup"), each unit with its own data)
# against naive references on the C target: every collective x scale, the
# reductions with sum, max and min, float32 and float16 (accumulated in
# float32), shared and fragment tiles, 2 and 4 warpgroups, 4 and 8 warps;
# and TileScale's README case: warpgroups splitting K, T.allreduce of their
# accumulators.  NVRTC builds the CUDA forms in test_comm_nvrtc.
. tests/run/lib.sh
e=examples/scale_coll.py
for lv in "warp -D threads=128" "warp -D threads=256" "warpgroup -D threads=256" "warpgroup -D threads=512"; do
  for op in sum max min; do
    check $e --entry allreduce -D level=$lv -D op=$op --check-against allreduce_ref
    check $e --entry reduce_scatter -D level=$lv -D op=$op --check-against reduce_scatter_ref
  done
  check $e --entry allgather -D level=$lv --check-against allgather_ref
  check $e --entry all_to_all -D level=$lv --check-against all_to_all_ref
done
check $e --entry allreduce -D level=warpgroup -D scope=fragment -D R=16 -D C=32 --check-against allreduce_ref
check $e --entry allreduce -D level=warp -D scope=fragment -D R=4 -D C=8 --check-against allreduce_ref
check $e --entry allreduce -D level=warp -D dtype=float16 -D R=3 -D C=40 --check-against allreduce_ref
check $e --entry reduce_scatter -D level=warpgroup -D dtype=float16 -D op=max --check-against reduce_scatter_ref
check $e --entry all_to_all -D level=warp -D threads=256 -D chunk=3 -D C=5 --check-against all_to_all_ref
check $e --entry wg_gemm_allreduce --check-against wg_gemm_allreduce_ref
