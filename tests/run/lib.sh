# Shared by the run tests: the tool, and `check` = run an entry against its
# naive reference on fresh random inputs and require PASS.
tool="${TILESCALE:-./build/tilescale}"
check() {
  out=$("$tool" run "$@" 2>&1)
  rc=$?
  echo "$out"
  if [ $rc -ne 0 ] || ! echo "$out" | grep -q '^PASS$'; then
    echo "FAILED: tilescale run $*"
    exit 1
  fi
}
