# ARGS: compile tests/run/kernels/gin_signals.py --entry ring -D N=1024 -D BM=256 --target cuda --multinode --emit cuda
# ENV: TILESCALE_CUDA_ARCH=sm_90
# The printed NCCL GIN calls of adding signals across nodes (a put with
# ncclGin_SignalAdd on its last row, putValues with it on the last element,
# signal(SignalAdd), waits reading readSignal - shadow); gin_compile.sh
# builds this source with nvcc against NCCL 2.28.9's headers.
