/*
 * test_interp_examples.c — every example, compiled for CUDA up to the last
 * pass, run thread by thread on the CPU and compared with the C target.
 *
 * CI has no GPU, so this is where CUDA code-generation bugs must show up:
 * each example (small -D values, partial tiles where the example allows
 * them) is elaborated twice; one copy goes through the C target's passes
 * and runs in the block-level interpreter (src/ir/interp.c: what the C
 * target computes), the other through the CUDA passes (layout inference,
 * tensor-core gemm, swizzled tiles, pipelining as they land) and runs in
 * the thread-level interpreter (src/ir/interp_thread.c) with every thread
 * of every block simulated, which also fails on shared-memory races,
 * missing async waits, fragment elements read by threads that do not own
 * them, non-bijective swizzles and deadlocked barriers.  Outputs are
 * poisoned with NaN before both runs and inputs are fresh random values
 * (multiples of 1/8, so that float16 inputs and most sums are exact).
 *
 * The CUDA passes leave nothing to the code generator: partition_threads
 * spreads the remaining T.Parallel nests over the threads and gives
 * uniform stores to one thread, insert_sync places the barriers; the IR is
 * per thread all through and runs in the interpreter's strict model, so a
 * missing barrier is a reported race, not a silent difference.
 *
 * Planted bugs (mutations of the CUDA IR after its passes: swapped block
 * indices, thread ranges and unrolled loops one short, shifted layouts,
 * dropped barriers, dropped or weaker cp.async waits) must each make a run
 * fail: that is what shows the comparison has teeth.
 */
#include "interp_test.h"

typedef struct Case {
    const char *file, *entry;
    const char *defs[10]; /* "name=value", NULL-terminated */
    double tol;           /* relative tolerance of the comparison */
    int off;              /* CUDA paths turned off (OFF_*), as the TILESCALE_CUDA_* switches do */
    int strict;           /* (every case now runs in the strict model; kept for the table's shape) */
    int adv;              /* inputs that defeat max-subtraction (issue 9 H): ADV_ROWS, ADV_QK, or 0 */
} Case;

/* ADV_ROWS: rows of the first input offset by 0, +1000, -1000 by turns, and
 * every fourth row's last column +200: exp overflows or underflows to 0/0
 * unless the true row maximum is subtracted, which with inputs in [0, 1)
 * any value would do (a warp reduction that misses lanes passes there).
 * ADV_QK: channel 0 of the first two inputs (Q, K) at 30, so raw scores
 * overflow exp2 in float32 unless the running maximum is right. */
enum { ADV_ROWS = 1, ADV_QK = 2 };

enum { OFF_LAYOUT = 1, OFF_PIPELINE = 2, OFF_VEC = 4, OFF_MMA = 8 };
/* (in Case.off too) plan_smem reuses shared bytes wherever that saves some
 * (TILESCALE_CUDA_SMEM_REUSE=1; by default only blocks over the limit do) */
enum { ON_REUSE = 16 };
/* (in Case.off too) the quick tier of a tiered CUDA build (TsCaps.quick_tier, as
 * driver/api.c sets it: no gemm split across the pipeline's barrier; pass
 * tier_plan's flags only change the printed unroll pragma and NVRTC's options,
 * so the IR run here is the quick tier's whole difference) */
enum { ON_QUICK = 32 };
/* (in Case.off too) layout inference must keep the fragments in registers
 * (the kernel's layout_note empty): the case tests a register path, not the
 * shared-memory fallback */
enum { ON_REGS = 64 };
/* (in Case.off too) a tensor-memory tile two thread roles share is kept in
 * shared memory (TsCaps.tmem_shared, TILESCALE_TMEM_SHARED=1), both targets */
enum { ON_TMEM_SHARED = 128 };

static const Case cases[] = {
    {"examples/elementwise_add.py", "elementwise_add", {"M=40", "N=70"}, 0, 0, 0, 0},
    {"examples/gemm.py", "matmul", {"M=64", "N=64", "K=64", "block_M=32", "block_N=32", "block_K=32"}, 1e-3, 0, 1, 0},
    {"examples/gemm.py", "matmul",
     {"M=128", "N=64", "K=96", "block_M=64", "block_N=64", "block_K=32", "num_stages=2"}, 1e-3, 0, 1, 0},
    {"examples/gemm.py", "matmul", {"M=80", "N=72", "K=40", "block_M=32", "block_N=32", "block_K=16"}, 1e-3, 0, 1, 0},
    /* the older paths: fragments in shared memory, synchronous copies, no tensor cores */
    {"examples/gemm.py", "matmul", {"M=64", "N=48", "K=64", "block_M=32", "block_N=16", "block_K=32"}, 1e-3,
     OFF_LAYOUT, 0, 0},
    {"examples/gemm.py", "matmul", {"M=64", "N=64", "K=64", "block_M=32", "block_N=32", "block_K=32"}, 1e-3,
     OFF_PIPELINE | OFF_VEC, 0, 0},
    {"examples/gemm.py", "matmul", {"M=32", "N=32", "K=32", "block_M=32", "block_N=32", "block_K=16"}, 1e-3, OFF_MMA, 0, 0},
    {"examples/flash_attention.py", "flashattn",
     {"batch=1", "heads=1", "seq_len=64", "dim=32", "is_causal=True", "block_M=32", "block_N=32"}, 2e-2, 0, 0, 0},
    {"examples/gemm.py", "matmul_eager", {"M=80", "N=64", "K=96", "block_M=32", "block_N=32", "block_K=32"}, 1e-3, 0, 1, 0},
    {"examples/softmax.py", "softmax", {"M=40", "N=33", "block_M=16"}, 1e-5, 0, 0, ADV_ROWS},
    {"examples/rms_norm.py", "rms_norm", {"M=40", "N=70"}, 1e-5, 0, 0, 0},
    {"examples/splitk_gemm.py", "splitk_gemm", {"M=64", "N=64", "K=128", "splits=2"}, 1e-3, 0, 0, 0},
    {"examples/flash_attention.py", "flashattn",
     {"batch=1", "heads=1", "seq_len=128", "dim=64", "is_causal=True"}, 2e-2, 0, 0, 0},
    {"examples/flash_attention.py", "flashattn",
     {"batch=1", "heads=1", "seq_len=128", "dim=64", "is_causal=False"}, 2e-2, 0, 0, 0},
    /* warp rows with 16-byte vectors per thread: rows of 8 x 32 lanes x 4 and of
     * 16 lanes x 4 (two rows per warp step), partial row tiles, vector copies
     * with the row guard as their predicate */
    {"examples/softmax.py", "softmax", {"M=40", "N=256", "block_M=16"}, 1e-5, 0, 1, ADV_ROWS},
    {"examples/softmax.py", "softmax", {"M=40", "N=64", "block_M=16"}, 1e-5, 0, 1, ADV_ROWS},
    /* RMSNorm's A_shared as a register tile (shared_to_fragment): vectors with
     * guards on partial rows and columns (136 = 2 x 64 + 8) */
    {"examples/rms_norm.py", "rms_norm", {"M=40", "N=136", "blk_k=64"}, 1e-5, 0, 1, 0},
    /* 9 column tiles: the register prefetch's prologue, rotation and guarded loads ahead */
    {"examples/rms_norm.py", "rms_norm", {"M=40", "N=520", "blk_k=64"}, 1e-5, 0, 1, 0},
    /* masks decided per tile by layout_inference (split_select): block_M !=
     * block_N, so tiles are all kept, all cut or mixed at offsets that are
     * not multiples of one block; a partial last tile for the padding mask */
    {"examples/flash_attention.py", "flashattn",
     {"batch=1", "heads=1", "seq_len=80", "dim=32", "is_causal=False", "block_M=64", "block_N=32"}, 2e-2, 0, 0, 0},
    {"examples/flash_attention.py", "flashattn",
     {"batch=1", "heads=1", "seq_len=128", "dim=32", "is_causal=True", "block_M=64", "block_N=32"}, 2e-2, 0, 0, 0},
    /* row reductions across the 4 warps of a 1 x 4 mma warp grid (shuffles, then a
     * shared scratch and one barrier), in a loop and after it */
    {"tests/golden/ir_reduce_xwarp.py", "gemm_rowstats", {"M=64", "N=128", "K=64"}, 1e-3, 0, 1, 0},
    /* register tiles for all four shared tiles, vector copies versioned per tile
     * (whole tiles without predicates, the partial ones in both dimensions with) */
    {"examples/elementwise_add.py", "elementwise_add", {"M=40", "N=136"}, 0, 0, 1, 0},
    {"examples/flash_attention.py", "flashattn",
     {"batch=1", "heads=1", "seq_len=128", "dim=32", "is_causal=True", "block_M=64", "block_N=32"}, 2e-2, 0, 0, ADV_QK},
    {"examples/flash_attention.py", "flashattn",
     {"batch=1", "heads=1", "seq_len=128", "dim=64", "is_causal=False"}, 2e-2, 0, 0, ADV_QK},
    /* score tile and output tile of different widths (block_N != dim): the row
     * statistics take one MMA_ROWS layout for both (its map ignores the width) */
    {"examples/flash_attention.py", "flashattn",
     {"batch=1", "heads=1", "seq_len=128", "dim=32", "is_causal=True", "block_M=64", "block_N=64"}, 2e-2, 0, 0, ADV_QK},
    {"examples/flash_attention.py", "flashattn",
     {"batch=1", "heads=1", "seq_len=96", "dim=64", "is_causal=False", "block_M=64", "block_N=32"}, 2e-2, 0, 0, 0},
    /* stores at an offset read from an input (varlen attention's cu_seqlens) and one
     * element stored by every thread row (split-K): insert_sync accepts both */
    {"tests/golden/ir_sync_varlen.py", "varlen_rows", {"B=3", "L=16", "N=32"}, 0, 0, 1, 0},
    {"tests/golden/ir_sync_varlen.py", "splitk_rows", {"N=48", "K=24"}, 1e-5, 0, 1, 0},
    /* RMSNorm's row form: a row over all 4 warps (W = 4, 128 lanes share it),
     * its sum by 5 shuffle steps and a shared scratch of 4 partials; two rows
     * of 2 warps each with a partial last block */
    {"examples/rms_norm.py", "rms_norm_row", {"M=3", "N=1024"}, 1e-5, 0, 1, 0},
    {"examples/rms_norm.py", "rms_norm_row", {"M=5", "N=512", "blk_m=2"}, 1e-5, 0, 1, 0},
    /* T.cumsum in registers: butterfly shuffles within a row's lanes and a carry
     * over its chunks, forward and reverse, in place and into another fragment,
     * rows of 32 lanes (2 chunks) and of 16 lanes (2 rows per warp step) */
    {"tests/golden/ir_cumsum_regs.py", "cumsum_rows", {"M=40", "N=256"}, 0, 0, 1, 0},
    {"tests/golden/ir_cumsum_regs.py", "cumsum_rows", {"M=40", "N=64", "reverse=True"}, 0, 0, 1, 0},
    {"tests/golden/ir_cumsum_regs.py", "cumsum_into", {"M=40", "N=128"}, 0, 0, 1, 0},
    {"tests/golden/ir_cumsum_regs.py", "cumsum_into", {"M=33", "N=64", "reverse=True"}, 0, 0, 1, 0},
    /* softmax's default tile: one row per warp (cases above pin block_M=16) */
    {"examples/softmax.py", "softmax", {"M=41", "N=256"}, 1e-5, 0, 1, ADV_ROWS},
    /* converting vector copies: float16 -> float32 registers -> bfloat16 with
     * partial tiles, and between shared and global memory, aligned and not */
    {"tests/golden/ir_cast_copy.py", "cast_frag", {"M=40", "N=136"}, 0, 0, 1, 0},
    {"tests/golden/ir_cast_copy.py", "cast_mem", {"M=40", "N=136"}, 0, 0, 1, 0},
    {"tests/golden/ir_cast_copy.py", "cast_mem", {"M=40", "N=90", "sdt=bfloat16", "ddt=float32"}, 0, 0, 1, 0},
    {"tests/golden/ir_cast_copy.py", "cast_mem", {"M=40", "N=90", "off=3"}, 0, 0, 1, 0},
    /* a store at a T.alloc_var offset set in uniform code, in a loop */
    {"tests/golden/ir_sync_varlen.py", "var_offset_rows", {"N=96"}, 1e-6, 0, 1, 0},
    /* the gemm split across the pipeline's barrier (K tiles of four k16 steps, a
     * partial last one), float16 stores of the accumulator in pairs */
    {"examples/gemm.py", "matmul",
     {"M=128", "N=64", "K=224", "block_M=64", "block_N=64", "block_K=64", "num_stages=3"}, 1e-3, 0, 1, 0},
    /* plan_smem's reuse of shared bytes (on by default only for blocks over the
     * limit; forced here): FlashAttention's O_shared on Q_shared's bytes, with
     * the barrier it adds (the case fails if no two buffers share bytes) */
    {"examples/flash_attention.py", "flashattn",
     {"batch=1", "heads=2", "seq_len=128", "dim=64", "is_causal=True"}, 2e-2, ON_REUSE, 0, 0},
    {"examples/flash_attention.py", "flashattn",
     {"batch=1", "heads=1", "seq_len=96", "dim=64", "is_causal=False", "block_M=64", "block_N=32"}, 2e-2, ON_REUSE,
     0, 0},
    /* buffer views (resolve_views): a gemm accumulator reduced through a
     * reshape (heads=64-like: 2 x 64 columns), global tensors copied flat with
     * a partial tile, a view of a view of a shared tile */
    {"tests/run/kernels/views.py", "reshape_reduce", {"M=96", "H=4", "Q=8"}, 1e-3, 0, 1, 0},
    {"tests/run/kernels/views.py", "reshape_reduce", {"M=64", "H=32", "Q=2", "block_N=64"}, 1e-3, 0, 1, 0},
    {"tests/run/kernels/views.py", "flat_copy", {"B=3", "R=10", "C=64"}, 0, 0, 1, 0},
    {"tests/run/kernels/views.py", "view_rows", {"N=256", "W=16"}, 1e-6, 0, 1, 0},
    {"tests/run/kernels/views.py", "pipelined_view", {"M=64", "N=200", "block_N=32"}, 1e-5, 0, 1, 0},
    /* views of another dtype: stored bits through uint16/float32 views of bfloat16
     * and float16 tiles (NaN patterns forced), a float32 tile read as halves, a
     * gemm accumulator through a float32 scratch over a bfloat16 tile */
    {"tests/run/kernels/view_dtype.py", "bits_copy", {"M=64", "N=64"}, 0, 0, 1, 0},
    {"tests/run/kernels/view_dtype.py", "narrow_read", {"M=32", "N=48"}, 0, 0, 1, 0},
    {"tests/run/kernels/view_dtype.py", "scratch_reuse", {"M=64", "K=32", "N=64"}, 1e-6, 0, 1, 0},
    /* reducers: gemv with a reduced inner level (TileLang's gemv_alloc_reducer),
     * column maxima with the outer level reduced */
    {"tests/run/kernels/reducers.py", "gemv_reducer", {"M=96", "N=200"}, 1e-4, 0, 1, 0},
    {"tests/run/kernels/reducers.py", "col_max", {"M=70", "N=48"}, 0, 0, 1, 0},
    /* T.rng_init/T.rng_rand: the per-thread Philox state in a local buffer (rand_1d
     * reads the thread index, which this harness's block-level run does not bind;
     * tests/run/rng.sh runs it on the C target) */
    {"tests/run/kernels/rng.py", "draws", {"n=12"}, 0, 0, 1, 0},
    /* T.reinterpret (IR_REINTERPRET) and TVM's tirx.const/reinterpret/Select/Cast */
    {"tests/run/kernels/reinterpret.py", "bits", {"n=300"}, 0, 0, 1, 0},
    {"tests/run/kernels/reinterpret.py", "unpack", {"R=5", "C=64"}, 0, 0, 1, 0},
    /* (T.tvm_thread_allreduce's kernels read the thread index, which this harness's
     * block-level run does not bind: tests/run/allreduce.sh, bench/gpu_covlang.sh) */
    /* T.alloc_global workspaces: a chain of two kernels passing partial sums through two */
    {"tests/run/kernels/workspace.py", "split_sum", {"M=37", "N=250", "S=7"}, 1e-6, 0, 1, 0},
    /* T.im2col with flattened global views (TileLang's examples/convolution) */
    {"tests/run/kernels/conv.py", "convolution", {"N=2", "H=9", "W=7"}, 1e-3, 0, 1, 0},
    {"tests/run/kernels/conv.py", "convolution", {"N=1", "H=11", "W=10", "S=2", "D=2", "P=2"}, 1e-3, 0, 1, 0},
    /* the quick tier (pass tier_plan) of the bench configurations whose cold build is large
     * (bench/gpu_bench.py: GEMM 128x256x128 2 stages 256 threads, FlashAttention D128 128x128
     * 2 stages); their full tier differs only by the gemm split that smaller cases run */
    {"examples/gemm.py", "matmul",
     {"M=128", "N=256", "K=256", "block_M=128", "block_N=256", "block_K=128", "num_stages=2", "threads=256"}, 1e-3,
     ON_QUICK, 1, 0},
    {"examples/flash_attention.py", "flashattn",
     {"batch=1", "heads=1", "seq_len=256", "dim=128", "is_causal=True", "block_M=128", "block_N=128", "num_stages=2",
      "threads=256"}, 2e-2, ON_QUICK, 0, 0},
    /* fragments no instruction fixes (issue 8 D, issue 5 A): a row reduction's
     * replicated result stored by its first replicas, a transposed fragment read
     * by a gemm lowered to loops (shared copies at both loops), a mask smaller
     * than the block read by columns of an mma accumulator, a fragment over the
     * register budget left in shared memory beside one in registers */
    {"tests/run/kernels/frag_free.py", "row_sums", {"M=96", "N=64", "K=3"}, 1e-5, ON_REGS, 1, 0},
    {"tests/run/kernels/frag_free.py", "row_sums", {"M=40", "N=128", "K=2", "block_M=16"}, 1e-5, ON_REGS, 1, 0},
    {"tests/run/kernels/frag_free.py", "transpose_gemm", {"S=64", "DK=32", "DV=32"}, 1e-4, ON_REGS, 1, 0},
    {"tests/run/kernels/frag_free.py", "col_mask", {"H=64", "BS=32", "D=64", "limit=3"}, 1e-3, ON_REGS, 1, 0},
    {"tests/run/kernels/frag_free.py", "col_mask", {"H=64", "BS=32", "D=64", "limit=2", "threads=256", "full_col=True"},
     1e-3, ON_REGS, 1, 0},
    {"tests/run/kernels/frag_free.py", "over_budget", {"M=32", "N=288"}, 1e-6, ON_REGS, 1, 0},
    /* plan_smem: tiles used only in a loop body, each overwritten whole first
     * in every iteration, share bytes (the case fails if none do) */
    {"tests/run/kernels/frag_free.py", "loop_tiles", {"M=32", "N=32", "K=3"}, 1e-6, ON_REUSE | ON_REGS, 1, 0},
    /* a bitonic sort: each step exchanges v[i] and v[i ^ m] in the thread with
     * i < i ^ m only (insert_sync's sync_exclusive), one barrier per step */
    {"tests/run/kernels/sync_exchange.py", "bitonic", {"N=64", "threads=32"}, 0, 0, 1, 0},
    /* FullCol gemms with a register A operand (layout MMA_A, replicated over the
     * warp columns), in a persistent wave loop whose tile is one `if` (the last
     * wave idle in part); p filled through a shared copy (reuse on: the two
     * reductions' scratch shares bytes inside the if's branch) or copied from
     * the scores' accumulator layout (a re-layout through shared memory) */
    {"tests/run/kernels/gemm_rs_fullcol.py", "decode_fullcol", {"B=2", "H=32", "S=64", "D=64"}, 2e-2,
     ON_REGS | ON_REUSE, 1, 0},
    {"tests/run/kernels/gemm_rs_fullcol.py", "decode_fullcol", {"B=2", "H=32", "S=96", "D=64", "direct=1"}, 2e-2,
     ON_REGS, 1, 0},
    {"tests/run/kernels/gemm_rs_fullcol.py", "decode_fullcol",
     {"B=1", "H=32", "S=64", "D=128", "block_H=32", "nblocks=1", "threads=256"}, 2e-2, ON_REGS, 1, 0},
    /* the accumulator over the register budget in shared memory, the float16 Q
     * tile (packed: 128 registers) and p in registers: the second gemm reads p
     * from a shared copy of its registers (ts_layout_spill) */
    {"tests/run/kernels/gemm_rs_fullcol.py", "decode_over_budget", {"B=2", "H=32", "S=64", "D=512"}, 2e-2, 0, 1, 0},
    {"tests/run/kernels/gemm_rs_fullcol.py", "decode_over_budget", {"B=2", "H=32", "S=64", "D=512", "annotate=1"}, 2e-2, 0, 1, 0},
    /* a nest reading an accumulator at its variables plus a serial loop's
     * offset (sparse MLA backward's split store), rewritten over the
     * fragment's indices: guarded (the example's form) and not */
    {"tests/run/kernels/shift_store.py", "split_store", {"M=32", "N=64", "K=32"}, 1e-4, ON_REGS, 1, 0},
    {"tests/run/kernels/shift_store.py", "split_store", {"M=64", "N=32", "K=32", "parts=4", "guarded=0"}, 1e-4, ON_REGS, 1,
     0},
    /* the same through a float32 view of a bfloat16 tile (per-row base
     * indices: insert_sync proves the halves apart), the example's 512 columns */
    {"tests/run/kernels/shift_store.py", "split_store_view", {"M=32", "N=512", "K=32"}, 1e-4, ON_REGS, 1, 0},
    {"tests/run/kernels/shift_store.py", "split_store_view", {"M=64", "N=64", "K=64", "guarded=0"}, 1e-4, ON_REGS, 1, 0},
    /* fragments indexed by a T.Parallel nest's own variables past their
     * declared extent, widened to the loop's (pass widen_fragments), in
     * registers: TileLang's attention-sink rows beside a row reduction, and
     * a [2, 8] fragment used over 16 x 32 */
    {"tests/run/kernels/widen_frag.py", "sink_rows", {"heads=4", "block_M=64", "N=32"}, 1e-5, ON_REGS, 1, 0},
    {"tests/run/kernels/widen_frag.py", "sink_rows", {"heads=2", "block_M=32", "N=16", "threads=64"}, 1e-5, ON_REGS, 1,
     0},
    {"tests/run/kernels/widen_frag.py", "grid2", {"M=16", "N=32"}, 0, ON_REGS, 1, 0},
    /* T.gemm_sp (2:4 sparse A, natural metadata): the dense tile expanded in
     * shared memory, then a tensor-core gemm, pipelined; int16 and int8
     * metadata, B transposed */
    {"tests/run/kernels/gemm_sp.py", "gemm_sp", {"M=128", "N=64", "K=128"}, 1e-4, ON_REGS, 1, 0},
    {"tests/run/kernels/gemm_sp.py", "gemm_sp", {"M=64", "N=64", "K=128", "e_dtype=int8", "trans_b=True"}, 1e-4,
     ON_REGS, 1, 0},
    /* the example's configuration: 128 x 128 x 64 tiles, 128 threads, C through shared memory */
    {"tests/run/kernels/gemm_sp.py", "gemm_sp",
     {"M=256", "N=128", "K=128", "block_M=128", "block_N=128", "block_K=64", "stage_c=True"}, 1e-4, ON_REGS, 1, 0},
    /* T.copy / T.clear of per-thread registers (T.alloc_local): each thread's
     * own loops (TileLang's gemm_sp compressor; they were spread over the
     * block, each thread filling one element of its own array), and a tuple
     * swap of two elements */
    {"tests/run/kernels/local_copy.py", "local_reverse", {"N=128"}, 0, ON_REGS, 1, 0},
    {"tests/run/kernels/local_copy.py", "swap_pairs", {"N=64"}, 0, ON_REGS, 1, 0},
    /* T.int4 storage: packed bytes copied whole, nibbles sign-extended by the
     * gemm's loops (TileLang's gemm_int4), a T.Parallel store giving each
     * thread both halves of a byte */
    {"tests/run/kernels/int4.py", "gemm_nt", {"M=64", "N=32", "K=96", "block_M=32", "block_N=32", "block_K=64"}, 0,
     ON_REGS, 1, 0},
    {"tests/run/kernels/int4.py", "quant", {"M=32", "N=64"}, 0, ON_REGS, 1, 0},
    /* Blackwell tensor memory (pass lower_tmem): tmem tiles as register
     * fragments, T.tcgen05_gemm as T.gemm and one thread's arrive on its
     * mbarrier, awaited by every thread at the loop's parity; P through
     * shared ("ss") or tensor memory as a register A operand ("ts") */
    {"tests/run/kernels/tmem.py", "tc_gemm", {"M=96", "N=80", "K=104", "block_M=64", "block_N=64", "block_K=32"}, 1e-4,
     ON_REGS, 1, 0},
    {"tests/run/kernels/tmem.py", "tc_gemm", {"M=64", "N=64", "K=64", "trans_B=False", "num_stages=1"}, 1e-4, ON_REGS, 1,
     0},
    {"tests/run/kernels/tmem.py", "tc_gemm_two", {"M=64", "N=64", "K=128"}, 1e-4, ON_REGS, 1, 0},
    {"tests/run/kernels/tmem.py", "tc_attn",
     {"batch=1", "heads=1", "seq_len=96", "dim=32", "is_causal=True", "block_M=32", "block_N=32"}, 2e-2, 0, 1, ADV_QK},
    {"tests/run/kernels/tmem.py", "tc_attn",
     {"batch=1", "heads=1", "seq_len=64", "dim=32", "is_causal=False", "block_M=32", "block_N=32", "variant=ts"}, 2e-2,
     0, 1, ADV_QK},
    {"tests/run/kernels/tmem.py", "tc_chain", {"M=64", "N=64", "D=32", "block_M=32", "block_N=32"}, 1e-4, ON_REGS, 1, 0},
    /* T.float4_e2m1fn: conversions into a packed shared tile and through a
     * fragment of codes (its copy into the packed tensor re-laid out so that
     * each thread stores both halves of a byte), the block-wise quantizer,
     * and the block-scaled gemm's loops */
    {"tests/run/kernels/fp4.py", "to_fp4", {"N=128", "src=bfloat16"}, 0, ON_REGS, 1, 0},
    {"tests/run/kernels/fp4.py", "to_fp4_frag", {"M=32", "N=32", "src=float32"}, 0, ON_REGS, 1, 0},
    {"tests/run/kernels/fp4.py", "from_fp4", {"N=128", "dst=float32"}, 0, ON_REGS, 1, 0},
    {"tests/run/kernels/fp4.py", "quant", {"M=32", "N=64"}, 0, ON_REGS, 1, 0},
    {"tests/run/kernels/fp4.py", "gemm_bs", {"M=64", "N=32", "K=128", "block_M=32", "block_N=32", "block_K=64"}, 0,
     ON_REGS, 1, 0},
    /* T.gemm into tensor memory with an mbar and no wait of the program's */
    {"tests/run/kernels/tmem.py", "tg_gemm", {"M=96", "N=64", "K=96"}, 1e-4, ON_REGS, 1, 0},
    /* tiles shared by two T.ws roles (written by one, multiplied by a one-warp
     * role whose lanes each arrive, read back by the first): fragments kept in
     * shared memory */
    {"tests/run/kernels/tmem.py", "tc_roles", {"M=128", "N=64", "K=32"}, 1e-4, ON_TMEM_SHARED, 1, 0},
    {"tests/run/kernels/tmem.py", "tc_roles", {"M=200", "N=72", "K=32", "block_N=32"}, 1e-4, ON_TMEM_SHARED, 1, 0},
};

/* The index of the case of this entry (planted bugs name newer cases so:
 * cases inserted in the table shift the indices), or the table's size. */
static size_t case_of(const char *entry) {
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        if (!strcmp(cases[i].entry, entry)) return i;
    return sizeof cases / sizeof *cases;
}

/* Bugs planted in the CUDA kernel after its passes, to show that they are
 * caught: each must make the run fail or the results differ. */
typedef enum Mutation {
    MUT_NONE,
    MUT_SWAP_BLOCKS,     /* blockIdx.x and blockIdx.y swapped */
    MUT_SHORT_THREADS,   /* every thread-range loop drops its last thread */
    MUT_SHORT_UNROLL,    /* every unrolled loop drops its last iteration */
    MUT_LAYOUT_SHIFT,    /* layouts give each element to the next thread */
    MUT_NO_BARRIERS,     /* the passes' barriers dropped */
    MUT_ONE_BARRIER,     /* the first barrier of the kernel dropped */
    MUT_NO_WAITS,        /* the cp.async waits dropped */
    MUT_WEAK_WAITS,      /* each wait leaves one more group in flight */
    MUT_SKIP_PREFETCH,   /* the guarded loads ahead of a prefetched loop dropped */
    MUT_NO_RED_BARRIER,  /* the barrier after a cross-warp reduction's scratch writes dropped */
} Mutation;

/* A thread range whose body stores to a reduction scratch (red_smem). */
static bool writes_red_smem(const IrStmt *s) {
    if (!s) return false;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++)
            if (writes_red_smem(s->seq.v[i])) return true;
        return false;
    case IR_S_FOR: return writes_red_smem(s->for_.body);
    case IR_S_IF: return writes_red_smem(s->if_.then) || writes_red_smem(s->if_.else_);
    case IR_S_STORE: return strncmp(s->store.buf->name, "red_smem", 8) == 0;
    default: return false;
    }
}

static void mutate_stmt(TsArena *a, IrStmt *s, Mutation mut);

/* Drop the first barrier met (pre-order); true once done. */
static bool drop_first_barrier(IrStmt *s) {
    if (!s) return false;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->seq.n; i++) {
            if (s->seq.v[i]->kind == IR_S_BARRIER) {
                memmove(&s->seq.v[i], &s->seq.v[i + 1], sizeof *s->seq.v * (size_t)(s->seq.n - i - 1));
                s->seq.n--;
                return true;
            }
            if (drop_first_barrier(s->seq.v[i])) return true;
        }
        return false;
    case IR_S_FOR: return drop_first_barrier(s->for_.body);
    case IR_S_IF: return drop_first_barrier(s->if_.then) || drop_first_barrier(s->if_.else_);
    case IR_S_WHILE: return drop_first_barrier(s->while_.body);
    default: return false;
    }
}

static void mutate_stmt(TsArena *a, IrStmt *s, Mutation mut) {
    if (!s) return;
    int64_t n;
    switch (s->kind) {
    case IR_S_SEQ: {
        int n2 = 0;
        for (int i = 0; i < s->seq.n; i++) {
            IrStmt *c = s->seq.v[i];
            if ((mut == MUT_NO_BARRIERS && c->kind == IR_S_BARRIER) ||
                (mut == MUT_NO_WAITS && c->kind == IR_S_ASYNC_WAIT) ||
                (mut == MUT_NO_RED_BARRIER && c->kind == IR_S_BARRIER && i > 0 &&
                 writes_red_smem(s->seq.v[i - 1])))
                continue;
            if (mut == MUT_WEAK_WAITS && c->kind == IR_S_ASYNC_WAIT) c->async_wait.pending++;
            mutate_stmt(a, c, mut);
            s->seq.v[n2++] = c;
        }
        s->seq.n = n2;
        return;
    }
    case IR_S_FOR:
        if (((mut == MUT_SHORT_THREADS && s->for_.kind == IR_FOR_THREAD) ||
             (mut == MUT_SHORT_UNROLL && s->for_.kind == IR_FOR_UNROLL)) &&
            ir_is_const_int(s->for_.extent, &n) && n > 1)
            s->for_.extent = ir_i32(a, n - 1);
        mutate_stmt(a, s->for_.body, mut);
        return;
    case IR_S_IF:
        if (mut == MUT_SKIP_PREFETCH && s->if_.then && s->if_.then->kind == IR_S_FOR &&
            s->if_.then->for_.kind == IR_FOR_THREAD && s->if_.cond->kind == IR_E_BIN &&
            s->if_.cond->bin.a->kind == IR_E_BIN && s->if_.cond->bin.a->bin.a->kind == IR_E_VAR) {
            s->if_.cond = ir_i32(a, 0); /* `if k + S-1 < n: load ahead` never loads */
            return;
        }
        mutate_stmt(a, s->if_.then, mut);
        mutate_stmt(a, s->if_.else_, mut);
        return;
    case IR_S_WHILE: mutate_stmt(a, s->while_.body, mut); return;
    default: return;
    }
}

static void mutate(TsArena *a, IrKernel *k, Mutation mut) {
    for (; k; k = k->next) {
        if (mut == MUT_SWAP_BLOCKS) {
            IrVar *x = k->block_idx[0];
            k->block_idx[0] = k->block_idx[1];
            k->block_idx[1] = x;
        }
        if (mut == MUT_LAYOUT_SHIFT)
            for (int i = 0; i < k->buffers.n; i++) {
                IrLayout *l = k->buffers.v[i]->layout;
                if (l) l->thread = ir_bin(a, IR_FLOORMOD, ir_bin(a, IR_ADD, l->thread, ir_i32(a, 1)),
                                          ir_i32(a, ir_kernel_nthreads(k)));
            }
        if (mut == MUT_ONE_BARRIER) drop_first_barrier(k->body);
        else mutate_stmt(a, k->body, mut);
    }
}

/* Do two shared buffers of k share bytes (plan_smem's reuse)? */
static bool shares_bytes(const IrKernel *k) {
    for (int i = 0; i < k->buffers.n; i++)
        for (int j = i + 1; j < k->buffers.n; j++) {
            const IrBuffer *x = k->buffers.v[i], *y = k->buffers.v[j];
            if (x->smem_bytes && y->smem_bytes && x->smem_offset < y->smem_offset + y->smem_bytes &&
                y->smem_offset < x->smem_offset + x->smem_bytes)
                return true;
        }
    return false;
}

/* The case's inputs: multiples of 1/8 in [-1, 1) (integers: -8 .. 7; the
 * int8 bytes of T.int4 kernels: -128 .. 127, every pair of nibbles), made
 * adversarial where the case says so (ADV_*). */
static double input(const void *ctx, const IrBuffer *b, int i, int64_t j, int64_t last) {
    const Case *c = ctx;
    double v = ts_dtype_is_float(b->dt) ? floor(it_frand() * 8) / 8 : floor(it_frand() * 8);
    if (b->dt == TS_INT8 && strstr(c->file, "int4")) v = floor(it_frand() * 128);
    if (c->adv == ADV_ROWS && i == 0 && last > 0) {
        int64_t r = j / last;
        v += r % 3 == 1 ? 1000 : r % 3 == 2 ? -1000 : 0;
        if (r % 4 == 3 && j % last == last - 1) v += 200;
    }
    if (c->adv == ADV_QK && i < 2 && last > 0 && j % last == 0) v += 30;
    return v;
}

static bool run_case(const Case *c, bool strict, Mutation mut) {
    (void)strict;
    ItCase t;
    if (!it_open(&t, c->file)) return false;
    TsCaps cu;
    it_caps_sm80(&cu);
    cu.mma = !(c->off & OFF_MMA);
    cu.vec = cu.vec_cast = !(c->off & OFF_VEC);
    cu.layout = !(c->off & OFF_LAYOUT);
    cu.pipeline = !(c->off & OFF_PIPELINE);
    cu.mma_prefetch = !(c->off & OFF_PIPELINE);
    cu.smem_reuse = c->off & ON_REUSE ? TS_SMEM_REUSE_ALWAYS : TS_SMEM_REUSE_OFF;
    if (c->off & ON_QUICK) {
        cu.quick_tier = true;
        cu.mma_prefetch = 0;
    }
    TsCaps cc;
    memset(&cc, 0, sizeof cc);
    cu.tmem_shared = cc.tmem_shared = (c->off & ON_TMEM_SHARED) != 0;
    TsDefine defs[10];
    int nd = it_defines(&t.a, c->defs, defs, 10);
    char label[256];
    snprintf(label, sizeof label, "%s:%s %s", c->file, c->entry, c->defs[0] ? c->defs[0] : "");
    IrKernel *kc = it_compile(&t.a, &t.d, &t.src, c->entry, defs, nd, false, TS_TARGET_C, &cc, label);
    IrKernel *kg = it_compile(&t.a, &t.d, &t.src, c->entry, defs, nd, false, TS_TARGET_CUDA, &cu, label);
    if (kg) mutate(&t.a, kg, mut);
    bool ok = kc && kg && kc->params.n == kg->params.n;
    if (ok && (c->off & ON_QUICK) && !(kg->gemm_k_rolled && kg->nvrtc_fast_compile)) {
        fprintf(stderr, "%s: the quick tier's flags are not set\n", c->entry);
        ok = false;
    }
    if (ok && (c->off & ON_REGS) && kg->layout_note) {
        fprintf(stderr, "%s: fragments left in shared memory: %s\n", c->entry, kg->layout_note);
        ok = false;
    }
    if (ok && (c->off & ON_REUSE) && !shares_bytes(kg)) {
        fprintf(stderr, "%s: plan_smem reused no shared bytes\n", c->entry);
        ok = false;
    }
    ItCompare cmp = {label, c->tol, mut != MUT_NONE, input, c};
    ok = ok && it_against_c(&t.a, &t.d, kc, kg, &cmp);
    it_close(&t);
    return ok;
}

int main(void) {
    it_rng = 0x853c49e6748fea9bull;
    /* TS_ONLY=ENTRY: only the cases (and planted bugs) of that entry, while iterating */
    const char *only = getenv("TS_ONLY");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const Case *c = &cases[i];
        if (only && strcmp(only, c->entry)) continue;
        double t0 = ts_now_ms();
        bool ok = run_case(c, true, MUT_NONE);
        if (!ok) fprintf(stderr, "FAILED: %s %s %s %s %s\n", c->file, c->entry, c->defs[0], c->defs[1],
                         c->defs[2] ? c->defs[2] : "");
        if (getenv("TS_VERBOSE")) fprintf(stderr, "%s %s: %.0f ms\n", c->file, c->entry, ts_now_ms() - t0);
        CHECK(ok);
    }
    /* planted bugs, in the tensor-core gemm (registers, swizzled tiles) and
     * FlashAttention (register P operand, warp-shuffle reductions) */
    static const char *const mut_names[] = {"",
                                            "swapped block indices",
                                            "short thread ranges",
                                            "short unrolled loops",
                                            "shifted layouts",
                                            "dropped barriers",
                                            "one dropped barrier",
                                            "dropped async waits",
                                            "weaker async waits",
                                            "dropped register prefetch",
                                            "dropped cross-warp reduction barrier"};
    static const struct {
        size_t c;      /* index in cases[] */
        Mutation m[8]; /* MUT_NONE-terminated */
    } planted[] = {
        /* the pipelined gemm: cp.async, waits and barriers come from inject_pipeline */
        {2, {MUT_SWAP_BLOCKS, MUT_SHORT_THREADS, MUT_SHORT_UNROLL, MUT_LAYOUT_SHIFT, MUT_NO_BARRIERS, MUT_NO_WAITS,
             MUT_WEAK_WAITS}},
        {13, {MUT_SWAP_BLOCKS, MUT_SHORT_THREADS, MUT_SHORT_UNROLL, MUT_LAYOUT_SHIFT, MUT_NO_BARRIERS,
              MUT_ONE_BARRIER}},
        /* insert_sync's barriers: each example that has any races without
         * them (elementwise_add and RMSNorm now keep their tiles in
         * registers: no shared memory, no barrier) */
        {9, {MUT_NO_BARRIERS, MUT_ONE_BARRIER}},
        {11, {MUT_NO_BARRIERS, MUT_ONE_BARRIER}},
        {4, {MUT_NO_BARRIERS, MUT_ONE_BARRIER}},
        /* softmax on vector warp rows: vector copies, shuffle reductions over 16 lanes */
        {15, {MUT_SWAP_BLOCKS, MUT_SHORT_THREADS, MUT_SHORT_UNROLL, MUT_LAYOUT_SHIFT}},
        {16, {MUT_SWAP_BLOCKS, MUT_SHORT_THREADS, MUT_SHORT_UNROLL, MUT_LAYOUT_SHIFT}},
        {17, {MUT_SHORT_UNROLL, MUT_SKIP_PREFETCH}},
        {20, {MUT_NO_RED_BARRIER, MUT_LAYOUT_SHIFT, MUT_SHORT_UNROLL}},
        {21, {MUT_SWAP_BLOCKS, MUT_SHORT_THREADS, MUT_SHORT_UNROLL}},
        /* the row statistics shared by tiles of two widths; the varlen store's barrier */
        {25, {MUT_LAYOUT_SHIFT, MUT_SHORT_UNROLL}},
        {26, {MUT_NO_BARRIERS, MUT_SWAP_BLOCKS}},
        {40, {MUT_NO_BARRIERS, MUT_ONE_BARRIER, MUT_NO_WAITS, MUT_WEAK_WAITS, MUT_LAYOUT_SHIFT, MUT_SHORT_UNROLL}},
        /* (newer cases by entry name: see planted_named below) */
    };
    /* planted bugs in cases named by their entry (case_of: the table's indices shift
     * as cases are inserted) */
    static const struct {
        const char *entry; /* the first case of this entry */
        Mutation m[4];     /* MUT_NONE-terminated */
    } planted_named[] = {
        {"var_offset_rows", {MUT_NO_BARRIERS, MUT_ONE_BARRIER, MUT_SHORT_THREADS}},
        {"bitonic", {MUT_NO_BARRIERS, MUT_SHORT_THREADS}},
        /* the layouts (the replicated register A operand among them) shifted; the barriers */
        {"decode_fullcol", {MUT_LAYOUT_SHIFT, MUT_NO_BARRIERS}},
        {"decode_over_budget", {MUT_LAYOUT_SHIFT, MUT_NO_BARRIERS}},
        {"split_store", {MUT_LAYOUT_SHIFT, MUT_SHORT_UNROLL, MUT_NO_BARRIERS}},
    };
    for (size_t t = 0; t < sizeof planted_named / sizeof *planted_named; t++)
        for (size_t m = 0; planted_named[t].m[m]; m++) {
            if (only && strcmp(only, planted_named[t].entry)) break;
            size_t ci = case_of(planted_named[t].entry);
            CHECK(ci < sizeof cases / sizeof *cases);
            if (ci >= sizeof cases / sizeof *cases) break;
            bool ok = run_case(&cases[ci], true, planted_named[t].m[m]);
            if (ok) fprintf(stderr, "NOT CAUGHT: %s in %s\n", mut_names[planted_named[t].m[m]], cases[ci].entry);
            CHECK(!ok);
        }
    for (size_t t = 0; t < sizeof planted / sizeof *planted && !only; t++)
        for (size_t m = 0; planted[t].m[m]; m++) {
            CHECK(planted[t].c < sizeof cases / sizeof *cases); /* (a missing case would "catch" every bug) */
            if (planted[t].c >= sizeof cases / sizeof *cases) break;
            const Case *c = &cases[planted[t].c];
            bool ok = run_case(c, true, planted[t].m[m]);
            if (ok) fprintf(stderr, "NOT CAUGHT: %s in %s %s\n", mut_names[planted[t].m[m]], c->file, c->entry);
            CHECK(!ok);
        }
    return test_done();
}
