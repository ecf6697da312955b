#!/bin/sh
# `tilescale compile --emit ptx|sass` (needs NVRTC, not a GPU; exits 77,
# reported as skipped, where NVRTC is missing).
#  - PTX: for TILESCALE_CUDA_ARCH=sm_80, the GEMM's PTX targets sm_80,
#    has the tsk_kernel entry and mma.sync; elementwise add has no mma.
#  - SASS through a stand-in cuobjdump in $CUDA_HOME/bin that checks its
#    arguments (-sass, a file holding an ELF cubin) and answers with a
#    marker: the marker is printed, once per kernel of a chain, and the
#    temporary cubin is gone afterwards.
#  - no disassembler anywhere: a clear error, exit status 1 (only where
#    /usr/local/cuda/bin has none either).
#  - a real cuobjdump/nvdisasm where the toolkit has one: HMMA in the SASS.
set -u
tool="${TILESCALE:-./build/tilescale}"
case "$tool" in /*) ;; *) tool="$PWD/$tool" ;; esac
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
export TILESCALE_CUDA_ARCH=sm_80
G="examples/gemm.py --entry matmul -D M=96 -D N=80 -D K=64 -D block_M=32 -D block_N=32 -D block_K=32"

if ! $tool compile $G --emit ptx >$d/ptx 2>$d/err; then
    if grep -q "NVRTC not found" $d/err; then echo "skipped: NVRTC not found"; exit 77; fi
    cat $d/err
    fail "--emit ptx"
fi
grep -q '^\.target sm_80' $d/ptx || fail "PTX does not target sm_80"
grep -q '\.entry tsk_kernel' $d/ptx || fail "PTX has no tsk_kernel entry"
grep -q 'mma\.sync\.aligned\.m16n8k16' $d/ptx || fail "GEMM PTX has no mma.sync"
$tool compile examples/elementwise_add.py --entry elementwise_add -D M=64 -D N=64 --emit ptx >$d/ptx2 || fail "add --emit ptx"
grep -q '\.entry tsk_kernel' $d/ptx2 || fail "add PTX has no entry"
grep -q 'mma\.sync' $d/ptx2 && fail "elementwise add PTX has mma.sync"

# a stand-in cuobjdump
mkdir -p $d/fake/bin $d/tmp
cat >$d/fake/bin/cuobjdump <<'EOS'
#!/bin/sh
[ "$1" = "-sass" ] || { echo "stand-in: first argument '$1' is not -sass" >&2; exit 3; }
[ -f "$2" ] || { echo "stand-in: no file '$2'" >&2; exit 3; }
head -c 4 "$2" | od -c | head -1 | grep -q '177   E   L   F' || { echo "stand-in: '$2' is not ELF" >&2; exit 3; }
echo "STAND-IN SASS of $(wc -c <"$2") bytes"
EOS
chmod +x $d/fake/bin/cuobjdump
CUDA_HOME=$d/fake TMPDIR=$d/tmp $tool compile $G --emit sass >$d/sass 2>$d/err || { cat $d/err; fail "--emit sass (stand-in)"; }
grep -q '^STAND-IN SASS of [1-9][0-9]* bytes' $d/sass || { cat $d/sass; fail "stand-in output not printed"; }
[ -z "$(ls $d/tmp)" ] || fail "temporary cubin left behind: $(ls $d/tmp)"
CUDA_HOME=$d/fake $tool compile examples/splitk_gemm.py --entry splitk_gemm -D M=96 -D N=80 -D K=256 -D splits=4 \
    --emit sass >$d/sass2 || fail "--emit sass of a chain"
[ "$(grep -c '^STAND-IN SASS' $d/sass2)" -eq 2 ] || fail "--emit sass of a two-kernel chain: not two kernels"

# no disassembler at all
if [ ! -x /usr/local/cuda/bin/cuobjdump ] && [ ! -x /usr/local/cuda/bin/nvdisasm ]; then
    CUDA_HOME= CUDA_PATH= PATH=/usr/bin:/bin $tool compile $G --emit sass >$d/out 2>&1
    [ $? -eq 1 ] || fail "no disassembler: exit status not 1"
    grep -q "needs cuobjdump or nvdisasm" $d/out || { cat $d/out; fail "no disassembler: message"; }
fi

# the real thing, where the toolkit has it
real=""
for t in "${CUDA_HOME:-/nonexistent}/bin" /usr/local/cuda/bin $(command -v cuobjdump nvdisasm 2>/dev/null | xargs -r -n1 dirname); do
    if [ -x "$t/nvdisasm" ]; then real=yes; fi
done
if [ -n "$real" ]; then
    $tool compile $G --emit sass >$d/real 2>$d/err || { cat $d/err; fail "--emit sass with the toolkit's disassembler"; }
    grep -q 'HMMA' $d/real || fail "the GEMM's SASS has no HMMA"
fi
echo "ok"
