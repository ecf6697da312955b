#!/bin/sh
# Runs TileScale's own distributed example kernels (github.com/tile-ai/tilescale,
# examples/distributed) unchanged on sim ranks and prints what each gives.
# Not a CI test: their files are not part of this tree.  Usage:
#   sh tests/tools/tilescale_compat.sh /path/to/tilescale [./build/tilescale]
# Status: doc/DISTRIBUTED.md, part F.
src="${1:?usage: $0 TILESCALE_CHECKOUT [TOOL]}"
tool="${2:-./build/tilescale}"
d="$src/examples/distributed"
# Runs on sim ranks; with a reference (tests/tools/tilescale_refs.py, written from
# the example's host code), prints PASS/FAIL; without, what it gives.
refs="$(dirname "$0")/tilescale_refs.py"
run() {
  f=$1; shift
  echo "== $f $*"
  timeout 120 "$tool" run "$d/$f" "$@" 2>&1 | grep -v ' ok$' | tail -6
}
# Compiled for CUDA (sm_90) unchanged.
cuda() {
  f=$1; shift
  printf "== %s (CUDA compile): " "$f"
  TILESCALE_CUDA_ARCH=sm_90 timeout 120 "$tool" compile "$d/$f" "$@" --target cuda --emit ptx >/dev/null 2>/tmp/tilescale_compat.$$ &&
    echo OK || head -3 /tmp/tilescale_compat.$$
  rm -f /tmp/tilescale_compat.$$
}
for n in 2 4 8; do
  run example_simple_shift.py --entry simple_shift -D M=128 -D N=128 -D block_M=128 -D block_N=128 --ranks $n --check-against "$refs:simple_shift_ref"
  run example_allgather.py --entry allgather -D PE_num=$n -D M=$((n * 16)) -D N=32 --ranks $n --check-against "$refs:allgather_ref"
done
for n in 2 4; do
  run example_allgather_gemm.py --entry allgather_gemm -D PE_num=$n -D M=64 -D N=64 -D K=64 -D block_M=64 -D block_N=64 -D block_K=64 --ranks $n --check-against "$refs:allgather_gemm_ref"
done
run primitives/example_put_block.py --entry kernel_ -D M=4096 -D num_rank=2 -D block_M=1024 -D threads=128 --ranks 2 --check-against "$refs:put_block_ref"
run primitives/example_get_block.py --entry get_kernel -D M=4096 -D num_rank=2 -D block_M=1024 -D threads=128 --ranks 2 --check-against "$refs:get_block_ref"
# Thread-level kernels (T.get_thread_binding, T.thread_binding): on sim ranks the
# pass thread_loops_c runs their per-thread code as loops over the threads.
run primitives/example_put_warp.py --entry kernel_ -D M=4096 -D num_rank=2 -D block_M=1024 -D threads=128 --ranks 2 --check-against "$refs:put_warp_ref"
run primitives/example_get_warp.py --entry get_kernel -D M=4096 -D num_rank=2 -D block_M=1024 -D threads=128 --ranks 2 --check-against "$refs:get_block_ref"
for n in 2 4; do
  a="-D PE_num=$n -D BATCH_SIZE=2 -D NUM_HEADS=8 -D SEQ_LEN=16 -D HEAD_DIM=8 --ranks $n"
  run example_pre_attn_all2all.py --entry sequence_parallel_all_to_all $a --check-against "$refs:pre_attn_all2all_ref"
  run example_pre_attn_all2all_transpose.py --entry sequence_parallel_all_to_all_transpose $a --check-against "$refs:pre_attn_all2all_transpose_ref"
  run example_post_attn_all2all_transpose.py --entry sequence_parallel_reverse_all_to_all_transpose $a --check-against "$refs:post_attn_all2all_transpose_ref"
done
# example_all_to_all: every source block puts its rows at row 0 of the peer's
# data_dst, so rows several sources cover depend on the order of the puts;
# tilescale_a2a_check.py draws splits the host's way and checks what is
# determinate (rows one source covers, rows none covers, the signals) and that
# every other element is one of its writers'.
for n in 2 4 8; do
  echo "== example_all_to_all.py P=$n (tilescale_a2a_check.py)"
  python3 "$(dirname "$0")/tilescale_a2a_check.py" "$d/example_all_to_all.py" "$tool" $n 8 4 64 16 $n 2>&1 | tail -3
done
# Cannon on 2 x 2 ranks against its host code's math (one tile, and 4 tiles
# with 32 rows per block's send).  SUMMA does not compute its host's A @ B.T
# (doc/DISTRIBUTED.md, part F, with line numbers): checked against the data
# flow its kernel has (summa_dataflow_ref) on 1 and 2 x 2 ranks; on 3 x 3 its
# step-2 owner waits for more signals than anyone sends (a clear timeout here).
run example_cannon.py --entry cannon -D MESH=2 -D M=128 -D N=128 -D K=128 -D block_M=64 -D block_N=64 -D block_K=64 --ranks 4 --check-against "$refs:cannon_ref"
run example_cannon.py --entry cannon -D MESH=2 -D M=256 -D N=256 -D K=128 -D block_M=64 -D block_N=64 -D block_K=64 --ranks 4 --check-against "$refs:cannon_ref"
run example_summa.py --entry summa -D MESH=1 -D M=64 -D N=64 -D K=64 -D block_M=64 -D block_N=64 -D block_K=64 --ranks 1 --check-against "$refs:summa_dataflow_ref"
run example_summa.py --entry summa -D MESH=2 -D M=128 -D N=128 -D K=128 -D block_M=64 -D block_N=64 -D block_K=64 --ranks 4 --check-against "$refs:summa_dataflow_ref"
run example_summa.py --entry summa -D MESH=2 -D M=256 -D N=256 -D K=128 -D block_M=64 -D block_N=64 -D block_K=64 --ranks 4 --check-against "$refs:summa_dataflow_ref"
run example_summa.py --entry summa -D MESH=3 -D M=192 -D N=192 -D K=96 -D block_M=64 -D block_N=64 -D block_K=64 --ranks 9 --timeout 2

# The overlapped examples, whose collectives are host code (torch copies on the
# copy engine): their tile kernels run on the C target with
# tilescale_overlap_check.py doing the host's collective in numpy between them,
# against the host's own torch reference (GEMM-RS: gemm_kernel, its segment
# counters and flags, the scatter, kernel_ring_reduce_tma of reduce_scatter.py;
# AG-GEMM: set_signal_kernel, the pull all-gather with its flags, gemm_kernel;
# SP all-gather attention: barrier_all_blocks_sys_kernel on sim ranks, the K/V
# all-gather, flashattn zig-zag or not, causal or not).
# (sp_attn_ws: the warp-specialized flashattn, enable_specialized=True; its
# consumer role, first in program order, waits for the producer: the C target
# runs such roles as coroutines.)
for w in gemm_rs ag_gemm sp_attn sp_attn_ws; do
  for n in 2 4; do
    echo "== overlapped $w P=$n (tilescale_overlap_check.py)"
    python3 "$(dirname "$0")/tilescale_overlap_check.py" "$d" "$tool" $w $n 2>&1 | grep -v ': ok$' | tail -4
  done
done
# and each compiles for CUDA (sm_90) unchanged
cuda example_gemm_rs_overlapped.py --entry gemm_kernel -D M=1024 -D N=1024 -D K=512 -D local_rank=0 -D num_local_rank=2 -D block_M=128 -D block_N=128 -D block_K=64 -D threads=128
cuda example_allgather_gemm_overlapped.py --entry gemm_kernel -D M=1024 -D N=1024 -D K=512 -D local_rank=0 -D num_local_rank=2 -D block_M=128 -D block_N=128 -D block_K=64 -D threads=128
cuda sp_ag_attention_intra_node.py --entry flashattn -D batch_size=1 -D groups=1 -D UQ=512 -D UKV=1024 -D heads=8 -D dim=64 -D is_causal=True -D enable_zig_zag=True -D enable_specialized=False -D rank=0 -D num_ranks=2
cuda sp_ag_attention_intra_node.py --entry flashattn -D batch_size=2 -D groups=2 -D UQ=768 -D UKV=4096 -D heads=2 -D dim=64 -D is_causal=True -D enable_zig_zag=True -D enable_specialized=True -D rank=0 -D num_ranks=2 -D block_M=128 -D block_N=128 -D num_stages=2 -D threads=256
cuda primitives/example_put_warp.py --entry kernel_ -D M=4096 -D num_rank=2 -D block_M=1024 -D threads=128
cuda primitives/example_get_warp.py --entry get_kernel -D M=4096 -D num_rank=2 -D block_M=1024 -D threads=128
cuda example_all_to_all.py --entry all_to_all -D PE_num=2 -D TOKEN_NUM=8 -D TOPK=2 -D HIDDEN=64 -D EXPERT_NUM=4
cuda example_cannon.py --entry cannon -D MESH=2 -D M=128 -D N=128 -D K=128 -D block_M=64 -D block_N=64 -D block_K=64
cuda example_summa.py --entry summa -D MESH=2 -D M=128 -D N=128 -D K=128 -D block_M=64 -D block_N=64 -D block_K=64
cuda example_pre_attn_all2all.py --entry sequence_parallel_all_to_all -D PE_num=2 -D BATCH_SIZE=1 -D NUM_HEADS=4 -D SEQ_LEN=16 -D HEAD_DIM=8
cuda example_pre_attn_all2all_transpose.py --entry sequence_parallel_all_to_all_transpose -D PE_num=2 -D BATCH_SIZE=1 -D NUM_HEADS=4 -D SEQ_LEN=16 -D HEAD_DIM=8
cuda example_post_attn_all2all_transpose.py --entry sequence_parallel_reverse_all_to_all_transpose -D PE_num=2 -D BATCH_SIZE=1 -D NUM_HEADS=4 -D SEQ_LEN=16 -D HEAD_DIM=8
# DeepEP's intranode port: every kernel runs against DeepEP's semantics
# (tilescale_deepep_check.py: the dispatch layout, the cached notify and
# the notify/dispatch/combine round trip on sim ranks); each kernel
# compiled for C and for CUDA, or the first thing missing (doc/DISTRIBUTED.md, part F).
e=deepseek_deepep/intranode
echo "== DeepEP (tilescale_deepep_check.py)"
python3 "$(dirname "$0")/tilescale_deepep_check.py" "$d/$e" "$tool" 2>&1 | grep -v ': ok$' | tail -4
for tgt in c cuda; do
  for k in "get_dispatch_layout.py --entry get_dispatch_layout_kernel -D num_topk=2 -D num_experts=8 -D num_ranks=2" \
           "dispatch.py --entry notify_dispatch_kernel -D num_ranks=2 -D num_experts=8 -D num_channels=2 -D expert_alignment=1" \
           "dispatch.py --entry cached_notify_dispatch_kernel -D num_ranks=2 -D num_channels=2" \
           "dispatch.py --entry dispatch_kernel -D num_ranks=2 -D num_max_send_tokens=6 -D num_recv_buffer_tokens=64 -D hidden=128 -D num_topk=2 -D num_experts=8 -D num_sms=4" \
           "dispatch.py --entry cached_dispatch_kernel -D num_ranks=2 -D num_tokens=32 -D num_max_send_tokens=6 -D num_recv_buffer_tokens=64 -D hidden=128 -D num_sms=4" \
           "combine.py --entry cached_notify_combine_kernel -D num_ranks=2 -D num_sms=4" \
           "combine.py --entry combine_kernel -D num_ranks=2 -D num_max_send_tokens=6 -D num_recv_buffer_tokens=64 -D hidden=128 -D num_topk=2 -D num_sms=4"; do
    set -- $k
    f=$1; shift
    printf "== DeepEP %s %s (%s compile): " "$f" "$2" "$tgt"
    TILESCALE_CUDA_ARCH=sm_90 timeout 120 "$tool" compile "$d/$e/$f" "$@" --target $tgt --emit $([ $tgt = c ] && echo c || echo cuda) \
      >/dev/null 2>/tmp/tilescale_compat.$$ && echo OK || head -1 /tmp/tilescale_compat.$$
    rm -f /tmp/tilescale_compat.$$
  done
done
