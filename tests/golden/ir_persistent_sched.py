# ARGS: compile FILE --entry kern --target c --emit ir
# T.PersistentTileScheduler (TileLang's tile_schedule.py): four int32
# per-thread state scalars; init and next_tile store the linear index and
# its (m, n) in swizzle panels of 2 columns (column-major: m fastest, a
# narrower last panel); valid() is linear_idx < tiles; a run-time while.
# Run against a naive enumeration in tests/run/persistent_sched.sh.
import tilelang.language as T


def kern():
    @T.prim_func
    def main(A: T.Tensor((4, 5), "int32")):
        with T.Kernel(3, threads=1) as b:
            sched = T.PersistentTileScheduler(4, 5, num_workers=3, swizzle_size=2, name="sched")
            sched.init(b)
            while sched.valid():
                A[sched.m_idx, sched.n_idx] = b * 100 + sched.current_iter
                sched.next_tile()

    return main
