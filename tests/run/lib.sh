# Shared by the run tests: the tool, and `check` = run an entry against its
# naive reference on random inputs and require PASS.  The inputs come from
# TS_TEST_SEED where it is set (ctest sets it: a reproducible CI run; the
# seed is printed in the tool's first line, so a failure shows it), from
# the tool's entropy seed otherwise, or from the test's own --seed.
tool="${TILESCALE:-./build/tilescale}"
check() {
  seed_opt=""
  case " $* " in
    *" --seed "*) ;;
    *) if [ -n "${TS_TEST_SEED:-}" ]; then seed_opt="--seed $TS_TEST_SEED"; fi ;;
  esac
  out=$("$tool" run "$@" $seed_opt 2>&1)
  rc=$?
  echo "$out"
  if [ $rc -ne 0 ] || ! echo "$out" | grep -q '^PASS$'; then
    echo "FAILED: tilescale run $* $seed_opt"
    exit 1
  fi
}
