#!/bin/sh
# Issue 9 F: `cmake --install` puts the library (shared and static), both
# public headers, the CLI and a pkg-config file under a prefix chosen at
# install time; a small C program built with nothing but
# `pkg-config --cflags --libs tilescale` compiles a kernel from a string,
# runs it on random data and checks it against a plain C loop, and reports
# the library's version (ts_version) equal to the header's; the same
# program links statically (`pkg-config --static`); the installed CLI
# runs the README's first command.  Skipped (77) without pkg-config.
set -u
tool="${TILESCALE:-./build/tilescale}"
case "$tool" in /*) ;; *) tool="$PWD/$tool" ;; esac
bdir=$(dirname "$tool")
src=$PWD
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
command -v pkg-config >/dev/null || { echo "skipped: no pkg-config"; exit 77; }
[ -f "$bdir/cmake_install.cmake" ] || { echo "skipped: $bdir is not a CMake build directory"; exit 77; }

cmake --install "$bdir" --prefix "$d/prefix" >"$d/log" 2>&1 || { cat "$d/log"; fail "cmake --install"; }
P="$d/prefix"
for f in bin/tilescale include/tilescale.h include/tilescale_comm.h; do [ -f "$P/$f" ] || fail "$f not installed"; done
pc=$(find "$P" -name tilescale.pc)
[ -n "$pc" ] || fail "tilescale.pc not installed"
libdir=$(dirname "$(dirname "$pc")")
[ -f "$libdir/libtilescale.so" ] || fail "libtilescale.so not in $libdir"
[ -f "$libdir/libtilescale.a" ] || fail "libtilescale.a not in $libdir"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
[ "$(pkg-config --modversion tilescale)" = "$(sed -n 's/^#define TILESCALE_VERSION "\(.*\)"$/\1/p' "$src/include/tilescale.h")" ] ||
  fail "pkg-config --modversion: $(pkg-config --modversion tilescale)"

cat >"$d/prog.c" <<'C'
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <tilescale.h>

static const char *src =
    "import tilelang.language as T\n"
    "\n"
    "def scale_add(n, block=32):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((n,), \"float32\"), B: T.Tensor((n,), \"float32\"), C: T.Tensor((n,), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(n, block), threads=block) as bx:\n"
    "            for i in T.Parallel(block):\n"
    "                if bx * block + i < n:\n"
    "                    C[bx * block + i] = A[bx * block + i] * 3.0 + B[bx * block + i]\n"
    "    return main\n";

int main(void) {
    if (strcmp(ts_version(), TILESCALE_VERSION) || ts_version_number() != TILESCALE_VERSION_NUMBER) {
        printf("library %s, header %s\n", ts_version(), TILESCALE_VERSION);
        return 1;
    }
    TsContext *ctx;
    if (ts_context_create(&ctx)) return 1;
    TsDefine defs[] = {{"n", "100"}};
    TsKernel *k;
    if (ts_compile_source(ctx, "prog.py", src, "scale_add", defs, 1, NULL, &k)) {
        printf("%s", ts_last_error(ctx));
        return 1;
    }
    float a[100], b[100], c[100];
    uint32_t s = 12345;
    for (int i = 0; i < 100; i++) {
        s = s * 1664525u + 1013904223u;
        a[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
        s = s * 1664525u + 1013904223u;
        b[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
        c[i] = -999.0f;
    }
    int64_t shape[1] = {100};
    TsTensor args[3] = {{a, TS_FLOAT32, 1, shape, NULL}, {b, TS_FLOAT32, 1, shape, NULL}, {c, TS_FLOAT32, 1, shape, NULL}};
    if (ts_kernel_launch(k, args, 3)) {
        printf("%s", ts_last_error(ctx));
        return 1;
    }
    for (int i = 0; i < 100; i++)
        if (c[i] != a[i] * 3.0f + b[i]) {
            printf("c[%d] = %g, expected %g\n", i, c[i], a[i] * 3.0f + b[i]);
            return 1;
        }
    ts_kernel_destroy(k);
    ts_context_destroy(ctx);
    printf("ok %s\n", ts_version());
    return 0;
}
C
cc=${CC:-cc}
# shellcheck disable=SC2046
$cc -std=c11 -o "$d/prog" "$d/prog.c" $(pkg-config --cflags --libs tilescale) -Wl,-rpath,"$libdir" 2>"$d/err" ||
  { cat "$d/err"; fail "building against the installed library (pkg-config)"; }
out=$(cd "$d" && ./prog)
echo "$out" | grep -q "^ok " || fail "the program against the shared library: $out"
# shellcheck disable=SC2046
$cc -std=c11 -o "$d/prog_static" "$d/prog.c" -static-libgcc $(pkg-config --cflags tilescale) "$libdir/libtilescale.a" \
  $(pkg-config --static --libs-only-other --libs-only-l tilescale | sed 's/-ltilescale//') 2>"$d/err" ||
  { cat "$d/err"; fail "building against the static library"; }
(cd "$d" && ./prog_static) | grep -q "^ok " || fail "the program against the static library"
ldd "$d/prog_static" 2>/dev/null | grep -q libtilescale && fail "prog_static uses the shared library"

# the installed CLI
[ "$("$P/bin/tilescale" --version)" = "tilescale $(pkg-config --modversion tilescale)" ] || fail "installed CLI --version"
"$P/bin/tilescale" run examples/gemm.py --entry matmul -D M=64 -D N=64 -D K=32 -D block_M=32 -D block_N=32 -D block_K=32 \
  --target c --check-against matmul_naive >"$d/out" 2>&1 || { cat "$d/out"; fail "installed CLI run"; }
grep -q '^PASS$' "$d/out" || fail "installed CLI: no PASS"
echo ok
