#!/bin/sh
# A long fuzzing campaign (issue 9 G): the sanitizer build's fuzzer on every
# mode (kernel files through the C and CUDA code generators, cc and NVRTC
# builds, .npy files, the CLI), at the lowest priority, one process at a
# time.  Findings (crashing, hanging or internal-error mutants, each with a
# .txt saying how it failed) go to the corpus folder; the summary is the
# last lines of the log.  Run from the repository root after building:
#
#   cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DTS_SANITIZE=ON && cmake --build build-asan -j2
#   sh tests/tools/fuzz_campaign.sh [SECONDS [SEED [CORPUS]]]    # default 3600 s, a fresh seed
#
# A reproducer is rerun with `build-asan/tests/fuzz --replay --cli build-asan/tilescale CORPUS/X.txt`;
# once its bug is fixed, copy it into tests/fuzz_corpus/ (ctest replays those).
set -u
secs=${1:-3600}
seed=${2:-0}
corpus=${3:-fuzz-corpus}
bin=${FUZZ_BUILD:-build-asan}
mkdir -p "$corpus"
export TILESCALE_CACHE_DIR="${TMPDIR:-/tmp}/ts-fuzz-kcache-$$"
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export LSAN_OPTIONS=suppressions="$PWD/.ci/lsan.supp":print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1
nice -n 19 "$bin/tests/fuzz" --corpus "$corpus" --seconds "$secs" --timeout 30 \
  --modes c=6,cuda=6,npy=4,cc=1,nvrtc=1,cli=2 --cli "$bin/tilescale" "$seed" 0 \
  "examples/gemm.py:matmul:M=64,N=64,K=64,block_M=32,block_N=32,block_K=32" \
  "examples/gemm.py:matmul_naive:M=33,N=17,K=9" \
  "examples/gemm.py:matmul_eager:block_M=32,block_N=32,block_K=32" \
  "examples/flash_attention.py:flashattn:batch=1,heads=1,seq_len=64,dim=32,is_causal=True" \
  "examples/flash_attention.py:attention_naive:batch=1,heads=2,seq_len=16,dim=8,is_causal=False" \
  "examples/softmax.py:softmax:M=40,N=33" \
  "examples/softmax.py:softmax_naive:M=7,N=5" \
  "examples/rms_norm.py:rms_norm:M=40,N=70" \
  "examples/splitk_gemm.py:splitk_gemm:M=96,N=80,K=256,splits=4" \
  "examples/elementwise_add.py:elementwise_add:M=100,N=200" \
  "tests/golden/ir_consts.py:kern:n=48,mode=fast" \
  "tests/golden/ir_pipeline_inject.py:colsum:N=128,bm=32,bn=64" \
  "tests/golden/ir_layout_gemm.py:matmul:M=64,N=64,K=64" \
  "tests/golden/ir_layout_warp_rows.py:softmax:M=64,N=256" \
  "tests/golden/ir_copy_cuda.py:copies:M=50,N=70" \
  "tests/golden/ir_two_kernels.py:kern:n=64" \
  "examples/distributed/allreduce.py:allreduce:P=4,N=256" \
  "examples/distributed/tp_gemm.py:gemm_allreduce:M=64,N=64,KP=32"
rc=$?
rm -rf "$TILESCALE_CACHE_DIR"
exit $rc
