#!/bin/sh
# Issue 9 H: every ctest test has a TIMEOUT (a hang fails in minutes), and
# every one gets the fixed TS_TEST_SEED of CI unless it was configured with
# -DTS_TEST_SEED=random.  Reads this build's test list as JSON.
build=$(dirname "${TILESCALE:-./build/tilescale}")
random=0
grep -q '^TS_TEST_SEED:STRING=random$' "$build/CMakeCache.txt" 2>/dev/null && random=1
json=$(ctest --test-dir "$build" --show-only=json-v1 2>/dev/null) || { echo "cannot list the tests"; exit 1; }
echo "$json" | RANDOM_SEEDS=$random python3 -c '
import json, os, sys
tests = json.load(sys.stdin)["tests"]
bad = 0
for t in tests:
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    env = props.get("ENVIRONMENT", [])
    if float(props.get("TIMEOUT", 0)) <= 0:
        print("no TIMEOUT:", t["name"]); bad += 1
    if os.environ["RANDOM_SEEDS"] == "0" and not any(e.startswith("TS_TEST_SEED=") for e in env):
        print("no TS_TEST_SEED:", t["name"]); bad += 1
print(len(tests), "tests,", bad, "problems")
sys.exit(1 if bad or not tests else 0)
' || exit 1
