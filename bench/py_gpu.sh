#!/bin/bash
# py_gpu.sh — the Python package on the GPU, in one command (issue 8, parts B, F and the speed goal).
#
#   bash bench/py_gpu.sh fetch     # HERE, once, in the checkout the device call is made from:
#                                  # pytest's wheels into .whl-py/ (ignored; carry it)
#   bash bench/py_gpu.sh           # ON THE DEVICE (carry [".whl-py"], plus TileLang's wheels
#                                  # installed in /tmp/site for the comparison, see below)
#
# On the device: 1. builds libtilescale (Release, build dir $B); 2. installs pytest from .whl-py
# into /tmp/pyt if the image lacks it; 3. runs tests/python (the torch CUDA tests run there:
# zero-copy launches on the current stream, out_idx outputs on the GPU, dynamic shapes, device and
# dtype errors, profile) ; 4. runs bench/py_launch_overhead.py: host time per call on torch CUDA
# tensors beside torch.add, TileLang (when $TL_SITE, default /tmp/site, holds it: install it with
# shared/tools/tilelang-wheels.sh's two-call recipe first) and CuPy (when installed).
# Logs and py_launch_overhead.json go to $OUT (or /tmp).  Exit status 1 if a step failed.
set -u
cd "$(dirname "$0")/.."
if [ "${1:-}" = fetch ]; then
  ex="$(git rev-parse --git-path info/exclude)"
  grep -qx "/.whl-py/" "$ex" 2>/dev/null || echo "/.whl-py/" >>"$ex"
  python3 -m pip download -q --no-deps --only-binary=:all: -d .whl-py pytest iniconfig pluggy packaging pygments
  ls .whl-py
  exit 0
fi
B=${B:-build-gpu}
LOGDIR=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TILESCALE_CACHE_DIR=$PWD/$B/kcache
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
if ! { cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release && cmake --build "$B" -j"$(nproc)" --target tilescale tilescale_cli; } \
  >"$LOGDIR/py_gpu_build.log" 2>&1; then
  tail -40 "$LOGDIR/py_gpu_build.log"
  echo "BUILD FAILED"
  exit 1
fi
echo "build: $(($(date +%s) - t0)) s; commit $(git rev-parse --short HEAD 2>/dev/null)"
export TILESCALE_LIB=$PWD/$B/libtilescale.so
export PYTHONPATH=$PWD/python
if ! python3 -c 'import pytest' 2>/dev/null && ls .whl-py/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/pyt .whl-py/*.whl && export PYTHONPATH=$PYTHONPATH:/tmp/pyt
fi
status=0
python3 -m pytest -q -p no:cacheprovider tests/python -rs 2>&1 | tee "$LOGDIR/py_gpu_pytest.log" | tail -25
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
echo "tests: $(($(date +%s) - t0)) s"
PYTHONUNBUFFERED=1 python3 bench/py_launch_overhead.py "${@}" 2>&1 | tee "$LOGDIR/py_launch_overhead.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
echo "total: $(($(date +%s) - t0)) s"
exit $status
