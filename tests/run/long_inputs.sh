#!/bin/sh
# Issue 9 E/F: no fixed buffer truncates a name, a path or a message.  Each
# case below is an input that a fixed-size buffer used to cut:
#  - layout_inference's reason for keeping fragments in shared memory (a
#    512-byte buffer) naming a 600-character fragment, and the register
#    buffer's name (300 bytes) made from it;
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

echo ok
