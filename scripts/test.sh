#!/usr/bin/env bash
# The whole test suite: installs missing Debian and Python packages, builds, runs `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh --test
# Many idle WebSockets in the integration tests: raise the soft fd limit to the hard one.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
swift build --build-tests
status=0
# Two workers: CI has 2 cores; each test class runs in its own process.
swift test --skip-build --parallel --num-workers 2 --xunit-output .build/xunit.xml || status=$?
# A plain summary line (parallel mode prints no XCTest totals of its own).
python3 - <<'PY' || true
import xml.etree.ElementTree as ET
root = ET.parse(".build/xunit.xml").getroot()
suites = [root] if root.tag == "testsuite" else root.iter("testsuite")
tests = failures = errors = skipped = 0
for s in suites:
    tests += int(s.get("tests", 0)); failures += int(s.get("failures", 0))
    errors += int(s.get("errors", 0))
    skipped += sum(1 for case in s.iter("testcase") if case.find("skipped") is not None)
failed = failures + errors
print(f"tests: {tests - failed - skipped} passed, {failed} failed, {skipped} skipped")
PY
exit "$status"
