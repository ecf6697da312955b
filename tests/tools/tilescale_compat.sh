#!/bin/sh
# Runs TileScale's own distributed example kernels (github.com/tile-ai/tilescale,
# examples/distributed) unchanged on sim ranks and prints what each gives.
# Not a CI test: their files are not part of this tree.  Usage:
#   sh tests/tools/tilescale_compat.sh /path/to/tilescale [./build/tilescale]
# Status (doc/DISTRIBUTED.md): simple_shift, primitives/put_block, get_block
# and allgather_gemm run; the rest stop at thread-level constructs
# (T.get_thread_binding, T.thread_binding) the C target does not have yet,
# or at host helpers (dtype_map[...].itemsize).
src="${1:?usage: $0 TILESCALE_CHECKOUT [TOOL]}"
tool="${2:-./build/tilescale}"
d="$src/examples/distributed"
run() {
  f=$1; shift
  echo "== $f $*"
  timeout 120 "$tool" run "$d/$f" "$@" 2>&1 | tail -6
}
run example_simple_shift.py --entry simple_shift -D M=128 -D N=128 -D block_M=128 -D block_N=128 --ranks 2
run primitives/example_put_block.py --entry kernel_ -D M=4096 -D num_rank=2 -D block_M=1024 -D threads=128 --ranks 2
run primitives/example_get_block.py --entry get_kernel -D M=4096 -D num_rank=2 -D block_M=1024 -D threads=128 --ranks 2
run primitives/example_put_warp.py --entry kernel_ -D M=4096 -D num_rank=2 -D block_M=1024 -D threads=128 --ranks 2
run primitives/example_get_warp.py --entry get_kernel -D M=4096 -D num_rank=2 -D block_M=1024 -D threads=128 --ranks 2
run example_allgather.py --entry allgather -D PE_num=2 -D M=64 -D N=32 --ranks 2
run example_allgather_gemm.py --entry allgather_gemm -D PE_num=2 -D M=64 -D N=64 -D K=64 -D block_M=64 -D block_N=64 -D block_K=64 --ranks 2
run example_all_to_all.py --entry all_to_all -D PE_num=2 -D TOKEN_NUM=8 -D TOPK=2 -D HIDDEN=64 -D EXPERT_NUM=4 --ranks 2
run example_cannon.py --entry cannon -D MESH=2 -D M=128 -D N=128 -D K=128 -D block_M=64 -D block_N=64 -D block_K=64 --ranks 4
run example_summa.py --entry summa -D MESH=2 -D M=128 -D N=128 -D K=128 -D block_M=64 -D block_N=64 -D block_K=64 --ranks 4
run example_pre_attn_all2all.py --entry sequence_parallel_all_to_all -D PE_num=2 -D BATCH_SIZE=1 -D NUM_HEADS=4 -D SEQ_LEN=16 -D HEAD_DIM=8 --ranks 2
run example_pre_attn_all2all_transpose.py --entry sequence_parallel_all_to_all_transpose -D PE_num=2 -D BATCH_SIZE=1 -D NUM_HEADS=4 -D SEQ_LEN=16 -D HEAD_DIM=8 --ranks 2
run example_post_attn_all2all_transpose.py --entry sequence_parallel_reverse_all_to_all_transpose -D PE_num=2 -D BATCH_SIZE=1 -D NUM_HEADS=4 -D SEQ_LEN=16 -D HEAD_DIM=8 --ranks 2
