# Explicit thread programming in a distributed kernel, the way TileScale's
# own examples write it (T.get_thread_binding / T.thread_binding, thread 0
# alone signalling and waiting, a warp primitive per warp), with what
# thread-level code means beyond that: each thread's own registers, a let
# whose value differs between threads, shared memory written by one thread
# and read by another after T.sync_threads, a 2-D thread block.  On CUDA the
# threads are real; on the C target (sim ranks) the pass thread_loops_c
# runs the thread-dependent statements as loops over the block's threads
# (src/pass/partition_threads.c), which is what this checks there.
# Block bx of rank r, thread (x, y) with t = y * TX + x (TX = 32, TY = 4):
#   - v = 3 * X[base + t] in its own register, S[t] = v in shared memory;
#   - after T.sync_threads: Y[base + t] = S[NT - 1 - t] + v + y (a value
#     another thread wrote);
#   - warp w = y puts its 32 elements of Y (rank r) into R on rank r ^ 1
#     (T.put_warp, lane 0's range), and thread 0 adds one to sig[0] there;
#   - thread 0 waits until its own sig[0] reached the number of blocks and
#     sets done[bx] = 1;
#   - every even thread takes a ticket, T.atom_add(cnt[0], 1) (the value
#     before the add, TileScale's atom_add), and the one holding the last
#     ticket of the rank sets last[0] = 1 (the "last arriver" of
#     TileScale's GEMM-RS).
#   tilescale run examples/distributed/thread_level.py --entry thread_level --ranks 2 \
#       -D N=512 --check-against thread_level_ref
import tilelang
import tilelang.language as T


def thread_level(N, dtype="float32"):
    TX, TY = 32, 4
    NT = TX * TY
    nb = T.ceildiv(N, NT)

    @T.prim_func
    def main(
        X: T.Tensor((N,), dtype),
        Y: T.Tensor((N,), dtype),
        R: T.Tensor((N,), dtype),
        sig: T.Tensor((1,), "int32"),
        done: T.Tensor((nb,), dtype),
        cnt: T.Tensor((1,), "int32"),
        last: T.Tensor((1,), dtype),
    ):
        with T.Kernel(nb, threads=(TX, TY)) as (bx):
            x = T.get_thread_binding(0)
            y = T.thread_binding(TY, thread="threadIdx.y")
            t = y * TX + x
            base = bx * NT
            S = T.alloc_shared((NT,), dtype)
            v = T.alloc_local((1,), dtype)
            v[0] = 3.0 * X[base + t]
            S[t] = v[0]
            T.sync_threads()
            Y[base + t] = S[NT - 1 - t] + v[0] + T.cast(y, dtype)
            T.sync_threads()
            peer = T.get_rank() ^ 1
            T.put_warp(src=T.address_of(Y[base + y * TX]), dst=T.address_of(R[base + y * TX]), size=TX, dst_pe=peer)
            T.fence()
            if t == 0:
                T.signal_op(T.address_of(sig[0]), 1, T.Amo.SIGNAL_ADD, peer)
                T.signal_wait_until(T.address_of(sig[0]), T.CmpType.GE, nb)
                done[bx] = 1.0
            if t % 2 == 0:
                ticket = T.atom_add(cnt[0], 1)
                if ticket == nb * NT // 2 - 1:
                    last[0] = 1.0

    return main


def thread_level_ref(N, P, dtype="float32"):
    TX, TY = 32, 4
    NT = TX * TY
    nb = T.ceildiv(N, NT)

    @T.prim_func
    def main(
        X: T.Tensor((P, N), dtype),
        Y: T.Tensor((P, N), dtype),
        R: T.Tensor((P, N), dtype),
        sig: T.Tensor((P, 1), "int32"),
        done: T.Tensor((P, nb), dtype),
        cnt: T.Tensor((P, 1), "int32"),
        last: T.Tensor((P, 1), dtype),
    ):
        with T.Kernel(P, threads=1) as (r):
            for b in T.serial(nb):
                for t in T.serial(NT):
                    Y[r, b * NT + t] = 3.0 * X[r, b * NT + NT - 1 - t] + 3.0 * X[r, b * NT + t] + T.cast(t // TX, dtype)
                    R[r, b * NT + t] = 3.0 * X[r ^ 1, b * NT + NT - 1 - t] + 3.0 * X[r ^ 1, b * NT + t] + T.cast(t // TX, dtype)
                done[r, b] = 1.0
            last[r, 0] = 1.0

    return main


# T.atom_add's value before the add in uniform code: one add per block, and
# every thread of the block gets the value (on CUDA thread 0 adds and the
# block reads it from shared memory).  cnt is set to 41 first, so every
# thread must see 41 (and cnt ends at 42), which an unset register would not.
#   tilescale run examples/distributed/thread_level.py --entry atom_broadcast --ranks 2 \
#       --check-against atom_broadcast_ref
def atom_broadcast(NT=256):
    @T.prim_func
    def main(cnt: T.Tensor((1,), "int32"), seen: T.Tensor((NT,), "float32")):
        with T.Kernel(1, threads=NT) as (bx):
            t = T.get_thread_binding(0)
            cnt[0] = 41
            T.sync_threads()
            old = T.atom_add(cnt[0], 1)
            seen[t] = T.cast(old, "float32")

    return main


def atom_broadcast_ref(P, NT=256):
    @T.prim_func
    def main(cnt: T.Tensor((P, 1), "int32"), seen: T.Tensor((P, NT), "float32")):
        with T.Kernel(P, threads=1) as (r):
            for t in T.serial(NT):
                seen[r, t] = 41.0

    return main
