#!/usr/bin/env bash
# Installs missing Debian packages, builds a release binary and runs `switchboard serve`
# on the embedded default: SQLite file under ./data, HTTP/WebSocket on port 8080.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
swift build -c release --product switchboard
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
exec .build/release/switchboard serve "$@"
