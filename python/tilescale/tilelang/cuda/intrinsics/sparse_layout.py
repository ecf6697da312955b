"""`tilelang.cuda.intrinsics.sparse_layout` under the shim: 2:4 semi-structured
sparsity's metadata contract as TileLang states it (tile-ai/tilelang
tilelang/cuda/intrinsics/sparse_layout.py), for host code such as the
gemm_sp example's sparse_utils.py.  Inside a kernel factory the compiler
answers get_e_factor / get_e_replicate_factor itself (src/elab/builtins.c).

GROUP_CONFIG: dtype -> (kept elements, group size) along K.
get_e_factor(a_dtype, meta_dtype): a_dtype elements one metadata element
indexes: 4 bits per group, so (meta bits / 4) * group.
get_e_replicate_factor(a_dtype): threads sharing one metadata value.
"""
from ...language import dtype as _dtype

GROUP_CONFIG = {
    _dtype("float32"): (1, 2),
    _dtype("float16"): (2, 4),
    _dtype("bfloat16"): (2, 4),
    _dtype("int8"): (2, 4),
    _dtype("uint8"): (2, 4),
    _dtype("float8_e4m3"): (2, 4),
    _dtype("float8_e5m2"): (2, 4),
}


def get_e_factor(a_dtype, meta_dtype):
    _, group = GROUP_CONFIG[_dtype(str(a_dtype))]
    return (_dtype(str(meta_dtype)).bits // 4) * group


def get_e_replicate_factor(a_dtype):
    return 1 if _dtype(str(a_dtype)).bits <= 8 else 2
