# T.atomic_add(elem, value, return_prev=True) (the element's value before
# the add: slots handed out by a counter, as TileLang's topk_selector does)
# and pass_configs={TL_DISABLE_THREAD_STORAGE_SYNC: True} (the kernel orders
# its threads itself with T.sync_threads: accesses at such slots, which
# insert_sync cannot prove apart, are trusted instead of refused).  Each
# thread takes the next slot of its key's bucket and marks it: every slot
# below the bucket's count must be marked exactly once, whatever order the
# threads ran in, so the result is checked exactly against a serial count.
# tests/run/atomic_prev.sh runs them.
import tilelang
import tilelang.language as T

cfg = {tilelang.PassConfigKey.TL_DISABLE_THREAD_STORAGE_SYNC: True}


# The counters in shared memory.
@tilelang.jit(out_idx=[1, 2], pass_configs=cfg)
def bucket_slots(N=300, NB=8, threads=128):
    @T.prim_func
    def main(keys: T.Tensor((N,), "int32"), cnt: T.Tensor((NB,), "int32"), marks: T.Tensor((NB, N), "int32")):
        with T.Kernel(1, threads=threads) as bx:
            tx = T.get_thread_binding()
            s_cnt = T.alloc_shared([NB], "int32")
            s_marks = T.alloc_shared([NB, N], "int32")
            slot = T.alloc_var("int32")
            T.fill(s_cnt, 0)
            T.fill(s_marks, 0)
            T.sync_threads()
            for s in T.serial(T.ceildiv(N, threads)):
                i = s * threads + tx
                if i < N:
                    b = (keys[i] % NB + NB) % NB
                    slot = T.atomic_add(s_cnt[b], 1, return_prev=True)
                    s_marks[b, slot] = s_marks[b, slot] + 1
            T.sync_threads()
            for b, j in T.Parallel(NB, N):
                marks[b, j] = s_marks[b, j]
            for b in T.Parallel(NB):
                cnt[b] = s_cnt[b]

    return main


# The counters in global memory, the slots' marks too; several blocks.
@tilelang.jit(out_idx=[1, 2], pass_configs={"tl.disable_thread_storage_sync": True})
def bucket_slots_global(N=300, NB=8, threads=64, chunk=100):
    @T.prim_func
    def main(keys: T.Tensor((N,), "int32"), cnt: T.Tensor((NB,), "int32"), marks: T.Tensor((NB, N), "int32")):
        with T.Kernel(1, threads=threads) as bx:
            for b, j in T.Parallel(NB, N):
                marks[b, j] = 0
            for b in T.Parallel(NB):
                cnt[b] = 0
        with T.Kernel(T.ceildiv(N, chunk), threads=threads) as bx:
            tx = T.get_thread_binding()
            for s in T.serial(T.ceildiv(chunk, threads)):
                i = bx * chunk + s * threads + tx
                if s * threads + tx < chunk and i < N:
                    b = (keys[i] % NB + NB) % NB
                    slot = T.atomic_add(cnt[b], 1, return_prev=True)
                    T.atomic_add(marks[b, slot], 1)

    return main


@tilelang.jit(out_idx=[1, 2])
def bucket_slots_naive(N=300, NB=8, threads=128, chunk=100):
    @T.prim_func
    def main(keys: T.Tensor((N,), "int32"), cnt: T.Tensor((NB,), "int32"), marks: T.Tensor((NB, N), "int32")):
        with T.Kernel(1, threads=1) as bx:
            for b in T.serial(NB):
                cnt[b] = 0
                for j in T.serial(N):
                    marks[b, j] = 0
            for i in T.serial(N):
                b = (keys[i] % NB + NB) % NB
                marks[b, cnt[b]] = 1
                cnt[b] = cnt[b] + 1

    return main
