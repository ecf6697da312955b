# Threads of one block that wait for each other (issue 6, TileScale's DeepEP
# dispatch/combine shape), on the C target where such blocks run their
# threads as coroutines (target/c/threads_c.c):
#   pc       thread 0 waits (T.wait_eq) for a flag that thread 32 sets after
#            writing the data thread 0 then reads: program order (thread 0's
#            whole code first) would never end;
#   groups   groups of 64 threads, each looping its own number of rounds
#            around named barriers whose id is computed at run time
#            (T.sync_threads(g + 1, 64)), a TVM-style warp shuffle
#            (T.tvm_warp_shuffle) in the loop, a spin on shared memory (a
#            while loop polling a word another warp sets), and a group that
#            leaves with T.thread_return;
#   stuck    thread 0 waits for a flag nobody sets: the wait's timeout error;
#   staged   block-level code (a T.Parallel nest, uniform stores, a uniform
#            while loop) between thread ranges that wait for each other: pass
#            coro_sync_c gives it to thread 0 between two barriers of the
#            block, so thread 0 does not start the loop before thread 8 (still
#            spinning when thread 0 gets there) changed S[1], and no thread
#            reads T2 before the loop, which yields every iteration, filled it
#            (tests/golden/ir_coro_sync_c.py pins the IR).
import tilelang.language as T


def pc(N=64):
    @T.prim_func
    def main(D: T.Tensor((N,), "int32"), O: T.Tensor((N,), "int32"), F: T.Tensor((2,), "int32")):
        with T.Kernel(2, threads=64) as bx:
            tx = T.get_thread_binding()
            if tx == 0:
                T.wait_eq(F[bx], -12345)  # (F starts random: a value it cannot hold)
                for i in T.serial(N // 2):
                    O[bx * (N // 2) + i] = D[bx * (N // 2) + i] * 2
            elif tx == 32:
                for i in T.serial(N // 2):
                    D[bx * (N // 2) + i] = D[bx * (N // 2) + i] + 1
                T.st(F[bx], -12345, sem="release")

    return main


def pc_ref(N=64):
    @T.prim_func
    def main(D: T.Tensor((N,), "int32"), O: T.Tensor((N,), "int32"), F: T.Tensor((2,), "int32")):
        with T.Kernel(1, threads=1) as bx:
            for i in T.serial(N):
                D[i] = D[i] + 1
                O[i] = D[i] * 2
            F[0] = -12345
            F[1] = -12345

    return main


def groups(G=4):
    @T.prim_func
    def main(X: T.Tensor((G * 64,), "int32"), O: T.Tensor((G * 64,), "int32")):
        with T.Kernel(1, threads=G * 64) as bx:
            tx = T.get_thread_binding()
            g = tx // 64
            if g == G - 1:
                T.thread_return()
            sh = T.alloc_shared([G], "int32")
            ready = T.alloc_shared([G], "int32")
            acc = T.alloc_var("int32")
            acc = 0
            it = T.alloc_var("int32")
            it = 0
            while it < g + 2:
                if tx % 64 == 32:  # the group's second warp publishes ...
                    sh[g] = X[g * 64 + it]
                    T.st(ready[g], it + 1, scope="cta", sem="release")
                if tx % 64 == 0:  # ... its first warp's lane 0 spins until it did
                    flag = T.alloc_var("int32")
                    flag = 0
                    while flag != it + 1:
                        T.ld(ready[g], flag, scope="cta", sem="acquire")
                T.sync_threads(g + 1, 64)
                acc += T.tvm_warp_shuffle(-1, sh[g] + tx % 32, 5, 32, 32)
                T.sync_threads(g + 1, 64)
                it += 1
            O[tx] = acc

    return main


def groups_ref(G=4):
    @T.prim_func
    def main(X: T.Tensor((G * 64,), "int32"), O: T.Tensor((G * 64,), "int32")):
        with T.Kernel(1, threads=1) as bx:
            for t in T.serial((G - 1) * 64):
                acc = T.alloc_var("int32")
                acc = 0
                for it in T.serial(t // 64 + 2):
                    acc += X[(t // 64) * 64 + it] + 5
                O[t] = acc

    return main


def stuck():
    @T.prim_func
    def main(F: T.Tensor((4,), "int32")):
        with T.Kernel(1, threads=64) as bx:
            tx = T.get_thread_binding()
            if tx == 0:
                T.wait_eq(F[2], F[2] + 1)  # never true: nobody writes F[2]
            if tx == 32:
                F[1] = 1

    return main


def staged(N=64):
    @T.prim_func
    def main(X: T.Tensor((2 * N,), "int32"), O: T.Tensor((2 * N,), "int32")):
        with T.Kernel(2, threads=N) as bx:
            tx = T.get_thread_binding()
            S = T.alloc_shared((N,), "int32")
            T2 = T.alloc_shared((N,), "int32")
            ready = T.alloc_shared((1,), "int32")
            ready[0] = 0
            for i in T.Parallel(N):
                S[i] = X[bx * N + i] + 1
            if tx == 8:  # waits for warp 1, then changes S[1] (a round after thread 0 went on)
                flag = T.alloc_var("int32")
                flag = 0
                while flag != 1:
                    T.ld(ready[0], flag, scope="cta", sem="acquire")
                S[1] = S[1] * 5
            if tx == 32:
                S[0] = S[0] * 3
                T.st(ready[0], 1, scope="cta", sem="release")
            k = T.alloc_var("int32")
            k = 0
            while k < N:  # the block's loop: thread 0 yields in every iteration
                T2[k] = S[k] + S[0] + S[1]
                k += 1
            O[bx * N + tx] = T2[N - 1 - tx]

    return main


def staged_ref(N=64):
    @T.prim_func
    def main(X: T.Tensor((2 * N,), "int32"), O: T.Tensor((2 * N,), "int32")):
        with T.Kernel(1, threads=1) as bx:
            for b in T.serial(2):
                s0 = (X[b * N] + 1) * 3
                s1 = (X[b * N + 1] + 1) * 5
                for t in T.serial(N):
                    i = N - 1 - t
                    if i == 0:
                        O[b * N + t] = s0 + s0 + s1
                    elif i == 1:
                        O[b * N + t] = s1 + s0 + s1
                    else:
                        O[b * N + t] = X[b * N + i] + 1 + s0 + s1

    return main
