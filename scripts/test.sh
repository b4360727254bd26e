#!/usr/bin/env bash
# The whole test suite: installs missing Debian packages, builds, runs `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
# Many idle WebSockets in the integration tests: raise the soft fd limit to the hard one.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
swift build --build-tests
swift test --skip-build --parallel --num-workers 2
