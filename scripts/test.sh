#!/usr/bin/env bash
# The whole test suite: installs missing Debian and Python packages, builds, runs `swift test`,
# then checks deploy/ (Dockerfile, systemd unit).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh --test
# Many idle WebSockets in the integration tests: raise the soft fd limit to the hard one.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
swift build --build-tests
status=0
# Two workers: CI has 2 cores; each test class runs in its own process.
swift test --skip-build --parallel --num-workers 2 --skip BrowserSimulcastCapTests --xunit-output .build/xunit.xml || status=$?
# Then, alone on the host: the Chromium downlink-cap test (issue 4) bounds freezes and layer
# switches in wall-clock seconds, and a second Chromium test on the same two cores starves it.
SWITCHBOARD_SIMULCAST_CAP=1 swift test --skip-build --parallel --num-workers 1 --filter BrowserSimulcastCapTests \
    --xunit-output .build/xunit-cap.xml || status=$?
# deploy/: the Dockerfile built and run in debootstrap chroots (no Docker engine here), then
# the systemd unit under systemd in a systemd-nspawn container with the image's binary
# (scripts/check-dockerfile.sh, scripts/check-systemd-unit.sh; ~5 min, root and network to
# deb.debian.org).
image_bin=$(mktemp -d)/switchboard
./scripts/check-dockerfile.sh --export "$image_bin" || status=$?
if [ -x "$image_bin" ]; then
  ./scripts/check-systemd-unit.sh "$image_bin" || status=$?
else
  echo "check-systemd-unit.sh not run: the Dockerfile check built no binary" >&2
fi
rm -rf "$(dirname "$image_bin")"
# A plain summary line (parallel mode prints no XCTest totals of its own).
python3 - <<'PY' || true
import os
import xml.etree.ElementTree as ET
tests = failures = errors = skipped = 0
for path in [".build/xunit.xml", ".build/xunit-cap.xml"]:
    if not os.path.exists(path):
        continue
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.iter("testsuite")
    for s in suites:
        tests += int(s.get("tests", 0)); failures += int(s.get("failures", 0))
        errors += int(s.get("errors", 0))
        skipped += sum(1 for case in s.iter("testcase") if case.find("skipped") is not None)
failed = failures + errors
print(f"tests: {tests - failed - skipped} passed, {failed} failed, {skipped} skipped")
PY
exit "$status"
