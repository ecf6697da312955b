#!/bin/sh
# Issue 9 E/F: no fixed buffer truncates a name, a path or a message.  Each
# case below is an input that a fixed-size buffer used to cut:
#  - layout_inference's reason for keeping fragments in shared memory (a
#    512-byte buffer) naming a 600-character fragment, and the register
#    buffer's name (300 bytes) made from it;
#  - a distributed run's -D names (an 8 KB pool: a 9000-character name was
#    "expects NAME=VALUE") and more than 64 -D/--shape options (fixed arrays);
#  - the generated C's message of a failed distributed primitive (1 KB)
#    naming a buffer of 2000 characters;
#  - `--emit sass`'s temporary file name (4 KB) in a TMPDIR whose name
#    leaves no room: the OS's own error, not a cut template's EINVAL;
#  - `launch ... -- tilescale`, which starts this very executable, from a
#    path of 1500 characters (readlink into 1 KB cut it: "cannot run");
#  - the rendezvous directory of a distributed run 1500 characters long:
#    `launch --rdzv DIR` ("path too long" over 480), TILESCALE_RDZV in
#    src/comm (a 512-byte name: "too long"; ctl and heap paths in 600), and
#    the MASTER_PORT form under such a TMPDIR (over 400 it silently became
#    /tmp); the ranks meet there, pass, and leave nothing behind;
#  - NVRTC named by a 1500-character TILESCALE_NVRTC (512 bytes cut it:
#    "NVRTC not found" for a name nobody gave), where NVRTC is here.
set -u
tool="${TILESCALE:-./build/tilescale}"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
n=$(printf 'f%.0s' $(seq 1 600))

# -- layout_inference: the give-up reason and the register buffer's name --
cat >"$d/frag.py" <<PY
import tilelang.language as T


def softmax(M=64, N=40, block_M=16):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            ${n} = T.alloc_fragment((block_M, N), "float32")
            row_max = T.alloc_fragment((block_M,), "float32")
            T.copy(X[bx * block_M, 0], ${n})
            T.reduce_max(${n}, row_max, dim=1)
            for i, j in T.Parallel(block_M, N):
                ${n}[i, j] = ${n}[i, j] - row_max[i]
            T.copy(${n}, Y[bx * block_M, 0])

    return main
PY
"$tool" compile "$d/frag.py" --entry softmax --target cuda --dump-after layout_inference >"$d/ir" 2>&1 ||
  { cat "$d/ir"; fail "compile (fallback)"; }
grep -q "# fragments stay in shared memory: T.reduce_max of ${n} along dim 1: .*not done in registers yet\$" "$d/ir" ||
  fail "layout_inference's reason cut"
sed "s/N=40/N=64/; s/threads=128/threads=32/" "$d/frag.py" >"$d/frag2.py"
"$tool" compile "$d/frag2.py" --entry softmax --target cuda --dump-after layout_inference >"$d/ir2" 2>&1 ||
  { cat "$d/ir2"; fail "compile (registers)"; }
grep -q "^ *${n}_reg = alloc_local" "$d/ir2" || { head -20 "$d/ir2" | cut -c1-200; fail "register buffer's name cut"; }

# -- the CLI's options: long names, many of them --
long=$(printf 'D%.0s' $(seq 1 9000))
"$tool" run tests/run/dist_bad.py --entry bad_peer -D P=2 -D "$long=1" --ranks 2 >"$d/out" 2>&1 &&
  fail "an unknown 9000-character -D accepted"
grep -q "has no parameter named '$long'" "$d/out" || { cut -c1-300 "$d/out"; fail "dist -D name cut"; }
shapes=""
for i in $(seq 1 100); do shapes="$shapes --shape v$i=$i"; done
"$tool" run examples/elementwise_add.py --entry elementwise_add -D M=8 -D N=8 --seed 1 $shapes >"$d/out" 2>&1 ||
  { cat "$d/out"; fail "100 --shape options"; }

# -- generated C: a failed primitive's message names a 2000-character buffer --
b=$(printf 'b%.0s' $(seq 1 2000))
cat >"$d/peer.py" <<PY
import tilelang.language as T


def bad_peer(P):
    @T.prim_func
    def main(${b}: T.Tensor((P,), "float32")):
        with T.Kernel(1, threads=32) as (bx):
            T.st(${b}[0], 1.0, dst_pe=T.get_rank() + P)

    return main
PY
timeout 60 "$tool" run "$d/peer.py" --entry bad_peer -D P=2 --ranks 2 >"$d/out" 2>&1 && fail "bad peer accepted"
grep -q "is out of range (2 ranks) for '${b}'" "$d/out" || { cut -c1-300 "$d/out"; fail "comm message cut"; }

# -- --emit sass: a temporary directory name that leaves no room --
t=$(printf 't%.0s' $(seq 1 4080))
mkdir -p "$d/fake/bin"
printf '#!/bin/sh\necho fake\n' >"$d/fake/bin/cuobjdump"
chmod +x "$d/fake/bin/cuobjdump"
if "$tool" compile examples/elementwise_add.py --entry elementwise_add -D M=64 -D N=64 --emit ptx >/dev/null 2>&1; then
  CUDA_HOME="$d/fake" TMPDIR="/$t" "$tool" compile examples/elementwise_add.py --entry elementwise_add -D M=64 -D N=64 \
    --emit sass >"$d/out" 2>&1 && fail "--emit sass with an impossible TMPDIR"
  grep -q "File name too long" "$d/out" || { cut -c1-200 "$d/out"; fail "--emit sass: not the OS's error"; }
fi
# -- launch: this executable from a long path --
deep="$d"
while [ ${#deep} -lt 1500 ]; do deep="$deep/$(printf 'p%.0s' $(seq 1 100))"; done
mkdir -p "$deep"
cp "$tool" "$deep/tilescale"
out=$("$deep/tilescale" launch -n 1 -- tilescale --version 2>&1) || { echo "$out" | cut -c1-300; fail "launch from a long path"; }
echo "$out" | grep -q "^tilescale [0-9]" || { echo "$out" | cut -c1-300; fail "launch from a long path: no version"; }
# -- the rendezvous directory: 1500 characters --
ag="examples/distributed/allgather.py --entry allgather -D PE_num=2 -D M=16 -D N=48 --check-against allgather_ref --seed 3"
rz="$deep/rz"
out=$(timeout 120 "$tool" launch -n 2 --rdzv "$rz" -- tilescale run $ag 2>&1)
[ $? -eq 0 ] && [ "$(echo "$out" | grep -c '^PASS$')" = 2 ] || { echo "$out" | cut -c1-300; fail "launch --rdzv with a long path"; }
[ ! -e "$rz" ] || { ls -la "$rz" | head; fail "launch --rdzv left its directory"; }
mkdir -p "$rz"
for r in 0 1; do
  TILESCALE_WORLD_SIZE=2 TILESCALE_RANK=$r TILESCALE_RDZV="$rz" timeout 120 "$tool" run $ag >"$d/rz.$r" 2>&1 &
done
wait
for r in 0 1; do grep -q '^PASS$' "$d/rz.$r" || { cut -c1-300 "$d/rz.$r"; fail "TILESCALE_RDZV with a long path (rank $r)"; }; done
[ -z "$(ls -A "$rz")" ] || { ls -A "$rz"; fail "TILESCALE_RDZV: files left behind"; }
port=$(( 20000 + $$ % 20000 ))
for r in 0 1; do
  env -u TILESCALE_RDZV TMPDIR="$deep" MASTER_PORT=$port TILESCALE_WORLD_SIZE=2 TILESCALE_RANK=$r \
    timeout 120 "$tool" run $ag >"$d/mp.$r" 2>&1 &
done
wait
for r in 0 1; do grep -q '^PASS$' "$d/mp.$r" || { cut -c1-300 "$d/mp.$r"; fail "MASTER_PORT under a long TMPDIR (rank $r)"; }; done
# ... and it is TMPDIR's: a file where its directory would be is reported, naming the long path
: >"$deep/tilescale-rdzv-$(id -u)-$port"
env -u TILESCALE_RDZV TMPDIR="$deep" MASTER_PORT=$port TILESCALE_WORLD_SIZE=1 TILESCALE_RANK=0 \
  timeout 60 "$tool" run $ag >"$d/mp.x" 2>&1 && fail "a rendezvous directory that is a file accepted"
grep -q "rendezvous: cannot open $deep/tilescale-rdzv-$(id -u)-$port/ctl: Not a directory" "$d/mp.x" ||
  { cut -c1-300 "$d/mp.x"; fail "MASTER_PORT: not TMPDIR's directory"; }
# -- NVRTC through a long TILESCALE_NVRTC (a link to the one the loader finds) --
ea="examples/elementwise_add.py --entry elementwise_add -D M=64 -D N=64 --emit ptx"
lib=""
for c in ${CUDA_HOME:-/usr/local/cuda}/lib64/libnvrtc.so /usr/local/cuda/lib64/libnvrtc.so; do [ -f "$c" ] && lib=$c && break; done
if [ -n "$lib" ] && "$tool" compile $ea >/dev/null 2>&1; then
  ln -s "$lib" "$deep/libnvrtc.so"
  TILESCALE_NVRTC="$deep/libnvrtc.so" TILESCALE_CACHE_DIR="$d/kc" "$tool" compile $ea >"$d/ptx" 2>&1 ||
    { cut -c1-300 "$d/ptx"; fail "TILESCALE_NVRTC with a long path"; }
  grep -q "^.entry tsk_kernel\|\.entry" "$d/ptx" || { head -5 "$d/ptx" | cut -c1-200; fail "TILESCALE_NVRTC with a long path: no PTX"; }
  TILESCALE_NVRTC="$deep/nope.so" "$tool" compile $ea >"$d/ptx" 2>&1 && fail "a missing TILESCALE_NVRTC accepted"
  grep -q "NVRTC not found (tried $deep/nope.so;" "$d/ptx" || { cut -c1-300 "$d/ptx"; fail "missing TILESCALE_NVRTC: name cut"; }
  # an architecture name longer than its field is refused, never built for a cut copy (sm_90 + 40 zeros)
  TILESCALE_CUDA_ARCH="sm_90$(printf '0%.0s' $(seq 40))" "$tool" compile $ea >"$d/ptx" 2>&1 && fail "a 45-character architecture accepted"
  grep -q "not a CUDA architecture" "$d/ptx" || { cut -c1-300 "$d/ptx"; fail "long TILESCALE_CUDA_ARCH: no clear error"; }
fi
echo ok
