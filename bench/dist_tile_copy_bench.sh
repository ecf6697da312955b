#!/bin/sh
# Remote tile copies on the GPU (issue 6, local backend, ranks sharing
# GPU 0): `T.copy(src, dst, dst=rank)` and `src=rank` lowered to ranges
# moved by the whole block in 16-byte vectors (src/op/comm.c) instead of
# one element per barrier.  First correctness (each against its reference
# on all ranks' inputs), then times per launch (median of --bench runs):
#   - examples/distributed/tile_copy.py at 64 MiB of fp16 per tensor: per
#     launch and rank three remote copies (push from shared, pull into
#     shared, push global -> global) and one local store, with tiles of
#     64 x 128 (a range per 256-byte row) and of 8 x 4096 (one range);
#   - the collectives built on remote copies (T.reduce_scatter,
#     T.allgather, T.allreduce) at 32 MiB per rank;
#   - GEMM then T.reduce_scatter, fp16 1024^3 per rank (17.7 ms per launch
#     before, one element per barrier), beside the overlapped GEMM-RS.
#   sh bench/dist_tile_copy_bench.sh [./build-gpu/tilescale]
tool="${1:-./build-gpu/tilescale}"
d=examples/distributed
c=$d/collectives.py
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
for n in 2 4; do
  ok "tile_copy 16x16 tiles, partial edges x$n" $d/tile_copy.py --entry tile_copy --ranks $n -D M=40 -D N=48 -D BM=16 -D BN=16 --check-against tile_copy_ref
  ok "tile_copy whole rows fp16 x$n" $d/tile_copy.py --entry tile_copy --ranks $n -D M=40 -D N=48 -D BM=8 -D BN=48 -D dtype=float16 --check-against tile_copy_ref
  ok "tile_copy 64x128 fp16 x$n" $d/tile_copy.py --entry tile_copy --ranks $n -D M=256 -D N=512 -D BM=64 -D BN=128 -D dtype=float16 --check-against tile_copy_ref
  ok "T.reduce_scatter x$n" $c --entry reduce_scatter --ranks $n -D rows=64 -D cols=256 -D P=$n --check-against reduce_scatter_ref
  ok "T.allgather x$n" $c --entry allgather --ranks $n -D rows=64 -D cols=256 -D P=$n --check-against allgather_ref
  ok "T.allreduce x$n" $c --entry allreduce --ranks $n -D rows=64 -D cols=256 --check-against allreduce_ref
  ok "GEMM-RS x$n" $d/tp_gemm.py --entry gemm_rs --ranks $n -D M=128 -D N=128 -D KP=64 -D P=$n --check-against gemm_rs_ref
done
# other kernels with remote tile copies (4-D tiles, views, pulled rows), 2 ranks
ok "pre-attention a2a x2" $d/seq_parallel_a2a.py --entry pre_attn_a2a --ranks 2 -D P=2 -D B=2 -D H=8 -D S=64 -D D=64 --check-against pre_attn_a2a_ref
ok "post-attention a2a x2" $d/seq_parallel_a2a.py --entry post_attn_a2a --ranks 2 -D P=2 -D B=2 -D H=8 -D S=64 -D D=64 --check-against post_attn_a2a_ref
ok "views: AG-GEMM by pulling x2" $d/views.py --entry ag_gemm_views --ranks 2 -D M=64 -D N=64 -D K=64 -D P=2 --check-against ag_gemm_views_ref
ok "SUMMA 2x2 ranks" $d/summa.py --entry summa --ranks 4 -D q=2 -D BM=128 -D BN=128 -D BK=128 --check-against summa_ref
ok "warp primitives, a range per warp (T.get_thread_binding) x2" $d/warp_prims.py --entry warp_prims --ranks 2 -D M=65536 -D block_M=4096 -D threads=128 --check-against warp_prims_ref
ok "MoE x2" $d/moe.py --entry moe --ranks 2 -D P=2 -D TOK=64 -D H=64 -D E=2 -D K=2 --check-against moe_ref
echo "dist_tile_copy checks: $pass passed, $fail failed"
median() { sed -n 's/^bench: median \([0-9.]*\) ms.*/\1/p'; }
t() { "$tool" run "$@" --target cuda --timeout 30 --bench 5 2>&1 | median; }
# 8192 x 4096 fp16 = 64 MiB per tensor; bytes moved per launch and rank:
# 3 remote copies + 1 local store, each read + write
tb=$((8192 * 4096 * 2 * 2 * 4 * 2))
a=$(t $d/tile_copy.py --entry tile_copy --ranks 2 -D M=8192 -D N=4096 -D BM=64 -D BN=128 -D dtype=float16)
b=$(t $d/tile_copy.py --entry tile_copy --ranks 2 -D M=8192 -D N=4096 -D BM=8 -D BN=4096 -D dtype=float16)
rs=$(t $c --entry reduce_scatter --ranks 2 -D rows=8192 -D cols=1024 -D P=2 -D blocks=132)
ag=$(t $c --entry allgather --ranks 2 -D rows=8192 -D cols=1024 -D P=2 -D blocks=132)
ar=$(t $c --entry allreduce --ranks 2 -D rows=8192 -D cols=1024 -D blocks=132)
g="-D M=1024 -D N=1024 -D KP=1024 -D P=2 -D block_M=128 -D block_N=128"
grs=$(t $d/tp_gemm.py --entry gemm_rs --ranks 2 $g)
gro=$("$tool" run $d/tp_gemm.py --entry gemm_rs_overlap --ranks 2 $g --in round=1 --target cuda --timeout 30 --bench 10 2>&1 | median)
awk -v a="$a" -v b="$b" -v tb="$tb" -v rs="$rs" -v ag="$ag" -v ar="$ar" -v grs="$grs" -v gro="$gro" 'BEGIN {
  printf "%-58s %10s %12s\n", "case (2 local ranks on GPU 0)", "ms/launch", "TB/s (r+w)"
  if (a != "") printf "%-58s %10.3f %12.2f\n", "tile_copy 64 MiB fp16, 64x128 tiles (a range per row)", a, tb / (a * 1e-3) / 1e12
  if (b != "") printf "%-58s %10.3f %12.2f\n", "tile_copy 64 MiB fp16, 8x4096 tiles (one range per tile)", b, tb / (b * 1e-3) / 1e12
  # reduce_scatter: each rank reads 2 x 16 MiB of remote/local rows, writes 16 MiB
  if (rs != "") printf "%-58s %10.3f %12.2f\n", "T.reduce_scatter fp32 8192x1024 (32 MiB per rank)", rs, 2 * 3 * 16 * 1048576 / (rs * 1e-3) / 1e12
  if (ag != "") printf "%-58s %10.3f %12.2f\n", "T.allgather fp32 8192x1024 per rank", ag, 2 * 2 * 2 * 32 * 1048576 / (ag * 1e-3) / 1e12
  if (ar != "") printf "%-58s %10.3f %12s\n", "T.allreduce fp32 8192x1024 (in place)", ar, "-"
  printf "%-58s %10s %12s\n", "GEMM 1024^3 fp16 then T.reduce_scatter (was 17.7 ms)", grs == "" ? "FAILED" : grs, ""
  printf "%-58s %10s %12s\n", "GEMM-RS overlapped (epilogue push, per-tile signals)", gro == "" ? "FAILED" : gro, ""
}'
[ $fail -eq 0 ]
