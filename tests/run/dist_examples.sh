#!/bin/sh
# Distributed examples on sim ranks (threads of one process, C target), each
# against its reference entry (all ranks' tensors stacked, a plain kernel),
# with 2, 4 and 8 ranks.
. tests/run/lib.sh
d=examples/distributed
for n in 2 4 8; do
  check $d/put_block.py --entry kernel_ --ranks $n -D M=4096 -D num_rank=$n -D block_M=512 -D threads=128 --check-against put_block_ref
  # a put and a get inside T.ws roles (their primitives were missed by ts_comm_used before)
  check $d/put_block.py --entry put_in_roles --ranks $n -D N=3000 --check-against put_in_roles_ref
  check $d/allgather.py --entry allgather --ranks $n -D PE_num=$n -D M=$((n * 8)) -D N=48 --check-against allgather_ref
  check $d/all_to_all.py --entry all_to_all --ranks $n -D P=$n -D chunk=6 -D N=20 --check-against all_to_all_ref
  check $d/allreduce.py --entry allreduce --ranks $n -D P=$n -D N=200 --in round=1 --check-against allreduce_ref
  check $d/ag_gemm.py --entry ag_gemm --ranks $n -D P=$n -D M=64 -D N=96 -D K=64 --in round=1 --check-against ag_gemm_ref
  # MoE: routing, per-expert splits, dispatch, expert GEMMs, combine (and dispatch alone, uneven blocks)
  check $d/moe.py --entry moe --ranks $n -D P=$n -D TOK=8 -D H=32 -D E=2 -D K=2 --check-against moe_ref
  check $d/per_thread.py --entry per_thread --ranks $n -D P=$n -D N=300 --check-against per_thread_ref
  # every semantics and scope of T.st / T.ld / T.atom_add (and 1-, 2-, 8-byte elements)
  check $d/mem_model.py --entry mem_model --ranks $n -D P=$n -D N=200 --check-against mem_model_ref
  # explicit thread code (T.get_thread_binding): thread ranges run as loops over the threads (thread_loops_c)
  check $d/thread_level.py --entry thread_level --ranks $n -D N=640 --check-against thread_level_ref
  # DeepEP-style MoE dispatch/combine: thread-level code, warps per peer, counts before data, flags after
  check $d/moe_deepep.py --entry moe_deepep --ranks $n -D P=$n -D TOK=24 -D H=40 -D E=2 -D K=2 --check-against moe_deepep_ref
  check $d/tp_gemm.py --entry gemm_rs_overlap --ranks $n -D M=$((64 * n)) -D N=64 -D KP=64 -D P=$n --in round=1 --check-against gemm_rs_overlap_ref
  check $d/moe.py --entry moe --ranks $n -D P=$n -D TOK=7 -D H=16 -D E=1 -D K=1 -D full=0 -D blocks=3 --check-against moe_ref
done
# the hierarchical layer: collectives under T.Scale("device"), remote T.copy, T.Scale levels
c=$d/collectives.py
for n in 2 4 8; do
  check $c --entry allreduce --ranks $n -D rows=24 -D cols=40 --check-against allreduce_ref
  check $c --entry allreduce --ranks $n -D rows=7 -D cols=1000 -D op=max -D blocks=2 --check-against allreduce_ref
  check $c --entry allgather --ranks $n -D rows=6 -D cols=10 -D P=$n --check-against allgather_ref
  check $c --entry reduce_scatter --ranks $n -D rows=5 -D cols=12 -D P=$n --check-against reduce_scatter_ref
  check $c --entry all_to_all --ranks $n -D chunk=3 -D cols=7 -D P=$n --check-against all_to_all_ref
  check $c --entry shift --ranks $n -D rows=32 -D cols=16 --check-against shift_ref
  # remote tile copies: ranges per row, whole-row tiles as one range, partial tiles element by element
  check $d/tile_copy.py --entry tile_copy --ranks $n -D M=40 -D N=48 -D BM=16 -D BN=16 --check-against tile_copy_ref
  check $d/tile_copy.py --entry tile_copy --ranks $n -D M=40 -D N=48 -D BM=8 -D BN=48 -D dtype=float16 --check-against tile_copy_ref
  # T.Scale("warp"): copies and fills shared by the warp's lanes, a remote copy by lane 0 (partial last block)
  check $d/warp_tiles.py --entry warp_tiles --ranks $n -D rows=200 -D cols=33 --check-against warp_tiles_ref
  # ... a narrow tile (8 x 12: 96 elements, 3 per lane) dealt out flattened
  check $d/warp_tiles.py --entry warp_tiles --ranks $n -D rows=200 -D cols=12 --check-against warp_tiles_ref
  # ... inside serial loops and branches of the warp's body (all lanes run them; a partial last chunk)
  check $d/warp_tiles.py --entry warp_loops --ranks $n -D rows=200 -D cols=24 --check-against warp_loops_ref
  # T.Scale("warpgroup"): each warpgroup a role of its 128 threads, T.view of the block tiles, a remote copy
  check $d/warp_tiles.py --entry wg_tiles --ranks $n -D rows=256 -D cols=48 --check-against wg_tiles_ref
done
# sequence-parallel all-to-alls (remote tile copies) and tensor-parallel GEMMs with collectives
for n in 2 4; do
  check $d/seq_parallel_a2a.py --entry pre_attn_a2a --ranks $n -D P=$n -D B=2 -D H=8 -D S=16 -D D=8 --check-against pre_attn_a2a_ref
  check $d/seq_parallel_a2a.py --entry post_attn_a2a --ranks $n -D P=$n -D B=2 -D H=8 -D S=16 -D D=8 --check-against post_attn_a2a_ref
  check $d/tp_gemm.py --entry gemm_allreduce --ranks $n -D M=64 -D N=64 -D KP=32 --check-against gemm_allreduce_ref
  check $d/tp_gemm.py --entry gemm_rs --ranks $n -D M=64 -D N=64 -D KP=32 -D P=$n --check-against gemm_rs_ref
done
# device views (T.view FullRow/FullCol/Replica): pulled tiles, K-split GEMM + allreduce
for n in 2 4; do
  check $d/views.py --entry ag_gemm_views --ranks $n -D M=64 -D N=64 -D K=64 -D P=$n --check-against ag_gemm_views_ref
  check $d/views.py --entry tp_gemm_views --ranks $n -D M=64 -D N=64 -D KP=32 --check-against tp_gemm_views_ref
done
# T.atom_add's returned value in uniform code reaches every thread of the block
check $d/thread_level.py --entry atom_broadcast --ranks 2 --check-against atom_broadcast_ref
# TileScale's warp primitives, a range per warp from T.get_thread_binding (lane 0 of each warp on sim ranks)
for n in 2 4; do
  check $d/warp_prims.py --entry warp_prims --ranks $n -D M=8192 -D block_M=1024 -D threads=128 --check-against warp_prims_ref
done
# Cannon's GEMM on q x q ranks (skew, then q multiply-and-shift steps)
check $d/cannon.py --entry cannon --ranks 4 -D q=2 -D BM=64 -D BN=64 -D BK=64 --check-against cannon_ref
check $d/cannon.py --entry cannon --ranks 9 -D q=3 -D BM=32 -D BN=32 -D BK=32 --check-against cannon_ref
check $d/cannon.py --entry cannon --ranks 1 -D q=1 -D BM=64 -D BN=32 -D BK=32 --check-against cannon_ref
# a reference in another file (--check-against FILE:ENTRY, as TileScale's own examples are checked)
check $d/put_block.py --entry kernel_ --ranks 2 -D M=4096 -D num_rank=2 -D block_M=512 -D threads=128 --check-against tests/tools/tilescale_refs.py:put_block_ref
# SUMMA on q x q ranks (row/column broadcasts by remote tile copies, a barrier per step)
check $d/summa.py --entry summa --ranks 4 -D q=2 -D BM=64 -D BN=64 -D BK=64 --check-against summa_ref
check $d/summa.py --entry summa --ranks 9 -D q=3 -D BM=32 -D BN=64 -D BK=32 --check-against summa_ref
check $d/summa.py --entry summa --ranks 1 -D q=1 -D BM=64 -D BN=32 -D BK=32 --check-against summa_ref
