#!/bin/sh
# The architecture's two rules that a grep can check (doc/ARCHITECTURE.md,
# "The pipeline"; issue 5 part 0):
#  - folders are layered: each folder of src/ includes only folders listed
#    before it (and itself), so none includes one that includes it back;
#  - environment variables are read at the API boundary (src/driver/api.c)
#    into TsCaps and the compile options, never by a pass, the IR, the ops,
#    the front end or a code generator; getenv appears elsewhere only in
#    the runtime pieces named below (cache, loaders, launch-time switches,
#    the C build's compiler search, the CUDA build's nvcc and NCCL search
#    (nvcc.c), the distributed layer, the CLI).
set -u
fail() { echo "FAILED: $*"; exit 1; }
order="base front ir op elab runtime target pass comm driver cli"
allowed=""
for d in $order; do
  allowed="$allowed $d"
  [ -d "src/$d" ] || fail "no folder src/$d (update the order here and in doc/ARCHITECTURE.md)"
  for inc in $(grep -rhoE '#include "[a-z_]+/' "src/$d" | sed 's/#include "//;s/\///' | sort -u); do
    case " $allowed " in
      *" $inc "*) ;;
      *) fail "src/$d includes $inc/, which comes after it: $(grep -rlE "#include \"$inc/" "src/$d" | tr '\n' ' ')" ;;
    esac
  done
done
for d in src/*/; do
  d=${d#src/}; d=${d%/}
  case " $order " in *" $d "*) ;; *) fail "src/$d is not in the layering order" ;; esac
done
# core.h (src/ itself) is below runtime: it may include base and ir only
for inc in $(grep -hoE '#include "[a-z_]+/' src/core.h | sed 's/#include "//;s/\///' | sort -u); do
  case "$inc" in base|ir) ;; *) fail "src/core.h includes $inc/" ;; esac
done

bad=$(grep -rlE '\bgetenv *\(' src | grep -vE '^src/(driver/api\.c|runtime/cache\.c|target/cuda/(nvrtc|nvcc|cuda_drv)\.c|target/c/build_c\.c|comm/|cli/)')
[ -z "$bad" ] || fail "getenv outside the API boundary and the runtime pieces: $bad"
echo "layering and environment: ok"
