# ARGS: compile FILE --entry wp --emit ir
# T.GemmWarpPolicy's host-side methods, as TileLang's examples call them
# (gemm_fp8/example_tilelang_gemm_amd_fp8_preshuffle.py:
# `m_warp, n_warp = policy.compute_warp_partition(block_M, block_N, num_warps)`,
# the enum imported from tilelang.tileop.base): each (m_warp, n_warp) below is
# stored as A[2i], A[2i+1].  The expected values are what TileLang's Python
# (tilelang/tileop/base.py) returns, run in CPython: Square picks the split
# whose per-warp tile ratio is nearest the tile's (64x64 on 6 warps: 2x3),
# FullRow/FullCol give every warp to one side unless the side is not a
# multiple of 16 rows (8 columns) per warp (48 rows on 4 warps: 3x1; 24
# columns on 4 warps: 1x3; 8 columns on 8 warps: 8x1).
import tilelang.language as T
from tilelang.tileop.base import GemmWarpPolicy

CASES = [
    (GemmWarpPolicy.Square, 128, 128, 4),  # 2, 2
    (GemmWarpPolicy.Square, 64, 128, 4),  # 2, 2
    (GemmWarpPolicy.Square, 128, 256, 8),  # 2, 4
    (GemmWarpPolicy.Square, 16, 256, 4),  # 1, 4
    (GemmWarpPolicy.Square, 32, 32, 8),  # 2, 4
    (GemmWarpPolicy.Square, 256, 64, 8),  # 2, 4
    (GemmWarpPolicy.Square, 64, 64, 6),  # 2, 3
    (T.GemmWarpPolicy.FullRow, 128, 64, 4),  # 4, 1
    (T.GemmWarpPolicy.FullRow, 48, 64, 4),  # 3, 1
    (T.GemmWarpPolicy.FullRow, 16, 64, 8),  # 1, 8
    (T.GemmWarpPolicy.FullCol, 64, 128, 4),  # 1, 4
    (T.GemmWarpPolicy.FullCol, 64, 24, 4),  # 1, 3
    (T.GemmWarpPolicy.FullCol, 64, 8, 8),  # 8, 1
]


def wp():
    parts = []
    for pol, m, n, w in CASES:
        m_warp, n_warp = pol.compute_warp_partition(m, n, w)
        parts.append(m_warp)
        parts.append(n_warp)
    policy = GemmWarpPolicy.Square
    assert policy.is_square() and not policy.is_full_row() and not policy.is_full_col()
    assert T.GemmWarpPolicy.FullCol.is_full_col()
    nparts = len(parts)

    @T.prim_func
    def main(A: T.Tensor((nparts,), "int32")):
        with T.Kernel(1, threads=1) as bx:
            for i, v in enumerate(parts):
                A[i] = v

    return main
