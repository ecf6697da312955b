# ARGS: compile tests/run/kernels/gemm_rs_fullcol.py --entry decode_fullcol -D B=2 -D H=32 -D S=64 -D D=64 --target cuda --emit cuda
# ENV: TILESCALE_CUDA_ARCH=sm_90
# The CUDA of a FullCol gemm whose A operand is a register fragment replicated
# over the warp columns (layout MMA_A): the gemm function reads A's registers
# at the same indices in every warp (q = (i * NK8 + k0 / 8) * 4), its warp's
# columns of B by ldmatrix.  TileLang's persistent MLA decode has this shape.
