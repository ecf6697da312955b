# Shared by the run tests: the tool, and `check` = run an entry against its
# naive reference on random inputs and require PASS.  The inputs come from
# TS_TEST_SEED where it is set (ctest sets it: a reproducible CI run; the
# seed is printed in the tool's first line, so a failure shows it), from
# the tool's entropy seed otherwise, or from the test's own --seed.
tool="${TILESCALE:-./build/tilescale}"
check() {
  # TS_ONLY_RANKS="4 ...": only the distributed runs with one of these --ranks (tests/run/dist_nodes.sh)
  if [ -n "${TS_ONLY_RANKS:-}" ]; then
    r=$(echo " $* " | sed -n 's/.* --ranks \([0-9]*\) .*/\1/p')
    case " $TS_ONLY_RANKS " in *" $r "*) ;; *) return 0 ;; esac
  fi
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

# np_check KIND FILE ENTRY NAME=VALUE...: the entry against a reference
# computed in NumPy (tests/run/np_ref.py: float64, outside this compiler, on
# inputs that defeat softmax/attention's max-subtraction blind spot).  The
# interpreter is $TS_PYTHON (ctest passes the one CMake found, .ci/run a
# virtual environment with NumPy), else python3.  Without NumPy the test
# ends skipped (77) at np_end, after its other checks ran.
np_missing=0
np_check() {
  py="${TS_PYTHON:-python3}"
  if ! "$py" -c 'import numpy' 2>/dev/null; then
    echo "NumPy not found ($py): skipping the NumPy reference of $2 $3"
    np_missing=1
    return 0
  fi
  if ! "$py" tests/run/np_ref.py "$tool" "$@"; then
    echo "FAILED: np_ref.py $*"
    exit 1
  fi
}
np_end() {
  if [ "$np_missing" = 1 ]; then
    echo "skipped: the NumPy references need NumPy"
    exit 77
  fi
  exit 0
}

# np_must_fail KIND FILE ENTRY NAME=VALUE...: a control: a planted bug the
# NumPy reference must reject (else its inputs or bounds prove nothing).
np_must_fail() {
  py="${TS_PYTHON:-python3}"
  "$py" -c 'import numpy' 2>/dev/null || { np_missing=1; return 0; }
  out=$("$py" tests/run/np_ref.py "$tool" "$@" 2>&1)
  rc=$?
  echo "$out" | tail -3
  if [ $rc -ne 1 ] || ! echo "$out" | grep -q '^np_ref: FAIL$'; then
    echo "FAILED: the planted bug passed the NumPy reference (exit status $rc): np_ref.py $*"
    exit 1
  fi
}
