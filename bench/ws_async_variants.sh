#!/bin/bash
# ws_async_variants.sh — which hand-over of a warp-specialised producer's
# cp.async copies does compute-sanitizer accept?  Builds
# bench/ws_async_variants.cu (the ws_matmul_ring protocol: producer warp group
# copies 32 KB slots into a 2-slot ring, consumer warp group reads them; the
# variants are described in the .cu) with nvcc -arch=sm_90a and prints one
# line per variant:
#
#   | variant | synccheck errors | racecheck hazards | data | ms (1056 blocks x 128 slots) |
#
# then the first synccheck report of every variant that has one.  Needs the
# GPU machine (nvidia-smi, nvcc, compute-sanitizer); without a GPU it says
# so and exits 77 (skipped).  About 90 s.
#
#   bash bench/ws_async_variants.sh        # from anywhere
set -u
cd "$(dirname "$0")" || exit 1
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "ws_async_variants: no GPU here: SKIPPED"
  exit 77
fi
export PATH=$PATH:/usr/local/cuda/bin
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
W=$(mktemp -d)
X=$W/wsv
nvcc -O3 -Xcompiler -O2 -arch=sm_90a -lineinfo -o "$X" ws_async_variants.cu || { echo "ws_async_variants: nvcc failed"; exit 1; }
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $("$CS" --version 2>/dev/null | grep -i version | head -1)"
echo "| variant | synccheck errors | racecheck hazards | data | ms (1056 blocks x 128 slots) |"
echo "|---|---:|---:|---|---:|"
n=$("$X" names | wc -l)
for ((v = 0; v < n; v++)); do
  name=$("$X" names | sed -n "$((v + 1))p")
  data=$("$X" $v check 2>&1 | tail -1)
  "$CS" --tool synccheck --print-limit 4 "$X" $v check >"$W/sync$v.log" 2>&1
  se=$(grep -Eo "ERROR SUMMARY: [0-9]+" "$W/sync$v.log" | head -1 | grep -Eo "[0-9]+$")
  "$CS" --tool racecheck --racecheck-report all "$X" $v check >"$W/race$v.log" 2>&1
  rh=$(grep -Eo "RACECHECK SUMMARY: [0-9]+ hazard[^)]*\)" "$W/race$v.log" | sed 's/RACECHECK SUMMARY: //')
  [ -z "$rh" ] && rh=$(grep -Eo "ERROR SUMMARY: [0-9]+ error" "$W/race$v.log")
  tm=$("$X" $v time 2>&1 | tail -1)
  echo "| $v $name | ${se:-?} | ${rh:-?} | $data | $tm |"
done
for ((v = 0; v < n; v++)); do
  if grep -q "^========= [A-Z]" "$W/sync$v.log" && ! grep -q "ERROR SUMMARY: 0 errors" "$W/sync$v.log"; then
    echo
    echo "--- synccheck, variant $v ($("$X" names | sed -n "$((v + 1))p")), first report:"
    grep -E "^=========" "$W/sync$v.log" | sed -n '2,14p'
  fi
done
rm -rf "$W"
