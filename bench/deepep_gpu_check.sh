#!/bin/sh
# TileScale's DeepEP intranode port (tile-ai/tilescale, examples/distributed/
# deepseek_deepep/intranode) on the CUDA target with local ranks sharing one
# GPU (2 and 4 ranks): get_dispatch_layout, cached_notify_dispatch,
# notify_dispatch, dispatch, cached_notify_combine and combine, each stage
# fed with the previous stage's outputs and checked against the numpy
# reference of tests/tools/tilescale_deepep_check.py (the same checks the
# C target passes on sim ranks).
#   sh bench/deepep_gpu_check.sh [INTRANODE_DIR]
# Without INTRANODE_DIR the files come from the tilescale mirror
# (/work/.mirror/tile-ai+tilescale/repo).  Exit 77 (skipped) without a GPU,
# NumPy or the files.
set -u
tool="${TILESCALE:-./build/tilescale}"
py="${TS_PYTHON:-python3}"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
"$py" -c 'import numpy' 2>/dev/null || { echo "no NumPy: skipped"; exit 77; }
dir="${1:-}"
if [ -z "$dir" ]; then
  mirror=/work/.mirror/tile-ai+tilescale/repo
  [ -d "$mirror" ] || { echo "no DeepEP files (give INTRANODE_DIR): skipped"; exit 77; }
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  git -C "$mirror" archive HEAD examples/distributed | tar x -C "$tmp"
  dir="$tmp/examples/distributed/deepseek_deepep/intranode"
fi
echo "== DeepEP intranode on CUDA, local ranks on one GPU ($dir)"
TILESCALE_DEEPEP_TARGET=cuda "$py" tests/tools/tilescale_deepep_check.py "$dir" "$tool"
