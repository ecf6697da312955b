# ARGS: compile tests/golden/ir_extern.py --entry ext_demo --target cuda --emit cuda
# ENV: TILESCALE_CUDA_ARCH=sm_90
# External CUDA source (session 10): the CUDA text of tests/golden/ir_extern.py's
# kernel.  The imported text comes once, after the prelude and the names the
# sources TileLang compiles get from nvcc's host headers (uint, ...), before
# the kernel; calls are printed as written, a pointer argument as the address
# of the local element (arrays declared __align__(16)), a value call cast to
# its dtype's compute type.
