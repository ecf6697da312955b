#!/bin/sh
# Issue 9 G: the fuzzer keeps what it finds.  Planted failures: the worker
# crashes (SIGSEGV; under ASan its report and exit status 1) at mutant 3 and spins at mutant 7 (test hooks of the
# fuzzer itself), and a stand-in for the CLI crashes on every command line
# that has --entry.  Each must be saved to the corpus with a .txt saying
# how it failed, the campaign must go on after each, and --replay of a saved
# CLI reproducer must fail again.
fuzz="$(dirname "${TILESCALE:-./build/tilescale}")/tests/fuzz"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAILED: $*"; ls -l "$d/corpus" 2>/dev/null; exit 1; }
spec="examples/softmax.py:softmax:M=40,N=33"
mkdir "$d/corpus"
FUZZ_SELFTEST_CRASH=3 FUZZ_SELFTEST_HANG=7 "$fuzz" --corpus "$d/corpus" --timeout 1 --modes c=1 1 12 "$spec" >"$d/log" 2>&1
rc=$?
cat "$d/log"
[ $rc -eq 1 ] || fail "exit status $rc, wanted 1 (findings)"
grep -q "crash: " "$d/corpus/c-1-3.txt" || fail "the crash at mutant 3 was not saved"
[ -s "$d/corpus/c-1-3.py" ] || fail "no mutant file for the crash"
grep -q "hang: mutant 7" "$d/corpus/c-1-7.txt" || fail "the hang at mutant 7 was not saved"
grep -q "12 mutants" "$d/log" || fail "the campaign did not go on after the findings"
# a CLI that dies on --entry
cat >"$d/cli" <<'CLI'
#!/bin/sh
case " $* " in *" --entry "*) kill -SEGV $$ ;; esac
exit 0
CLI
chmod +x "$d/cli"
mkdir "$d/c2"
"$fuzz" --corpus "$d/c2" --modes cli=1 --cli "$d/cli" 5 20 "$spec" >"$d/log2" 2>&1
[ $? -eq 1 ] || { cat "$d/log2"; fail "the crashing CLI went unnoticed"; }
n=$(ls "$d/c2"/cli-5-*.args 2>/dev/null | wc -l)
[ "$n" -gt 0 ] || fail "no CLI reproducer saved"
one=$(ls "$d/c2"/cli-5-*.txt | head -n 1)
grep -q "killed by signal 11" "$one" || fail "$one does not say how it failed"
grep -qx -- "--entry" "${one%.txt}.args" || fail "the saved command line lacks --entry"
"$fuzz" --replay --cli "$d/cli" "$one" >"$d/log3" 2>&1 && { cat "$d/log3"; fail "the replay of a crashing command line passed"; }
echo "ok: crash, hang and CLI crash saved ($n CLI reproducers), replay fails again"
