#!/bin/sh
# The ipc backend through NCCL (TILESCALE_ENGINE=nccl, src/comm/local_cuda.c):
# bootstrap with ncclCommInitRank from rank 0's ncclUniqueId, the heap from
# ncclMemAlloc registered with ncclCommWindowRegister (symmetric), every
# rank's heap base from the window's LSA slots.  NCCL refuses two ranks on
# one GPU, so on a one-GPU machine this runs worlds of 1 rank (the whole
# set-up, the window read back, the kernels on the NCCL heap) and checks
# that 2 ranks on one GPU give NCCL's refusal as a clear error, not a hang;
# with G >= 2 GPUs it runs 2 .. G ranks, one GPU each.
#   sh bench/dist_nccl_engine.sh [./build-gpu/tilescale]
tool="${1:-./build-gpu/tilescale}"
d=examples/distributed
c=$d/collectives.py
export TILESCALE_ENGINE=nccl
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
echo "GPUs: ${ngpu:-0}; NCCL: $(ls /usr/local/cuda/lib*/libnccl.so.2 2>/dev/null | head -1) TILESCALE_LIBNCCL=${TILESCALE_LIBNCCL:-}"
pass=0
fail=0
ok() {
  name="$1"; n="$2"; shift 2
  out=$(timeout 120 "$tool" launch -n "$n" --timeout 100 -- "$tool" run "$@" --target cuda --timeout 20 2>&1)
  rc=$?
  if [ $rc -eq 0 ] && [ "$(echo "$out" | grep -c '^PASS$')" -ge 1 ]; then
    pass=$((pass + 1)); echo "PASS  $name"
  else
    fail=$((fail + 1)); echo "FAIL  $name (rc $rc)"; echo "$out" | grep -v ' ok$' | tail -8 | sed 's/^/      /'
  fi
}
err() {
  name="$1"; want="$2"; n="$3"; shift 3
  out=$(timeout 120 "$tool" launch -n "$n" --timeout 100 -- "$tool" run "$@" --target cuda 2>&1)
  rc=$?
  if [ $rc -ne 0 ] && [ $rc -ne 124 ] && echo "$out" | grep -qF "$want"; then
    pass=$((pass + 1)); echo "PASS  $name"
  else
    fail=$((fail + 1)); echo "FAIL  $name (rc $rc, wanted '$want')"; echo "$out" | tail -8 | sed 's/^/      /'
  fi
}
# NCCL 2.28.3 (what the loader found on the lent H200) makes no symmetric
# window for a node of one rank (transport.cc: localRanks == 1); 2.28.7 and
# later do.  Unless TILESCALE_LIBNCCL is set, take the newest libnccl.so.2
# on the machine (pip wheels included) when it is newer than the loader's.
if [ -z "${TILESCALE_LIBNCCL:-}" ] && command -v python3 >/dev/null; then
  best=$(python3 - <<'PY'
import ctypes, glob, site, sys
# the usual places only (a recursive search of /usr takes minutes)
pats = ["/usr/lib/x86_64-linux-gnu/libnccl.so.2*", "/usr/lib64/libnccl.so.2*", "/usr/local/lib*/libnccl.so.2*",
        "/usr/local/cuda*/lib*/libnccl.so.2*", "/usr/local/nccl*/lib*/libnccl.so.2*", "/opt/*/lib*/libnccl.so.2*"]
pats += [p + "/nvidia/nccl*/lib/libnccl.so.2*" for p in site.getsitepackages()]
cands = set()
for p in pats:
    cands |= set(glob.glob(p))
best = (0, "")
for f in sorted(cands):
    try:
        v = ctypes.c_int(); ctypes.CDLL(f).ncclGetVersion(ctypes.byref(v)); print("  libnccl", v.value, f, file=sys.stderr)
        if v.value > best[0]: best = (v.value, f)
    except Exception:
        pass
print(best[1] if best[0] >= 22807 else "")
PY
)
  [ -n "$best" ] && export TILESCALE_LIBNCCL="$best" && echo "using $best (NCCL >= 2.28.7)"
fi
# which libnccl the loader finds, and NCCL's own account of the communicator
# (version, cuMem, P2P type: what decides whether it makes symmetric windows)
echo "libnccl: $(ldconfig -p 2>/dev/null | grep -o '/[^ ]*libnccl.so.2$' | head -2 | tr '\n' ' ')LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV timeout 60 "$tool" launch -n 1 --timeout 50 -- "$tool" run $c --entry allreduce \
  -D rows=24 -D cols=40 --check-against allreduce_ref --target cuda --timeout 20 2>&1 |
  grep -iE 'NCCL version|cumem|P2P Type|Symmetric|NCCL_[A-Z_]+ set|symmetric window|window descriptor|^PASS' | cut -c1-230 | head -12
ok "T.allreduce, 1 rank on the NCCL heap" 1 $c --entry allreduce -D rows=24 -D cols=40 --check-against allreduce_ref
ok "tile copies, 1 rank" 1 $d/tile_copy.py --entry tile_copy -D M=40 -D N=48 -D BM=16 -D BN=16 --check-against tile_copy_ref
ok "SUMMA 1x1" 1 $d/summa.py --entry summa -D q=1 -D BM=64 -D BN=64 -D BK=64 --check-against summa_ref
if [ "${ngpu:-0}" -ge 2 ]; then
  for n in 2 4 8; do
    [ "$n" -le "$ngpu" ] || continue
    ok "put_block x$n" $n $d/put_block.py --entry kernel_ -D M=65536 -D num_rank=$n -D block_M=4096 -D threads=128 --check-against put_block_ref
    ok "T.allreduce x$n" $n $c --entry allreduce -D rows=24 -D cols=40 --check-against allreduce_ref
    ok "T.reduce_scatter x$n" $n $c --entry reduce_scatter -D rows=64 -D cols=256 -D P=$n --check-against reduce_scatter_ref
    ok "allreduce (signals) x$n" $n $d/allreduce.py --entry allreduce -D P=$n -D N=4000 --in round=1 --check-against allreduce_ref
  done
else
  err "2 ranks on one GPU: NCCL's refusal, no hang" "ncclCommInitRank" 2 $c --entry allreduce -D rows=24 -D cols=40
fi
echo "dist_nccl_engine: $pass passed, $fail failed"
[ $fail -eq 0 ]
