#!/bin/bash
# Retention under sustained load (docs/benchmarks.md, "Retention under sustained load"):
#   scripts/bench-retention.sh BIN LABEL [PAIRS] [DURATION] [RETENTION]
# Runs scripts/bench-signaling.sh with PAIRS pairs (default 20) for DURATION s (default 100)
# and call.tombstone_retention = RETENTION (default 10s, so that a backlog of expired rows
# builds up before the first retention round after start, at 60 s), and prints the number of
# processed events and calls in the server's database every 10 s (read-only, Python's sqlite3).
# Output in $OUT (default ./bench-out): LABEL.txt (the benchmark), LABEL.rows (the counts).
set -euo pipefail
BIN=$(realpath "$1"); LABEL=$2; PAIRS=${3:-20}; DUR=${4:-100}; RETENTION=${5:-10s}
OUT=${OUT:-$PWD/bench-out}
mkdir -p "$OUT"
: > "$OUT/$LABEL.rows"
HERE=$(dirname "$(realpath "$0")")
SWITCHBOARD_CALL_TOMBSTONE_RETENTION=$RETENTION OUT=$OUT bash "$HERE/bench-signaling.sh" "$BIN" "$LABEL" 0 "$PAIRS" "$DUR" > /dev/null 2>&1 &
BENCH=$!
sleep 4
# The newest `BIN serve` is the one bench-signaling.sh just started.
PID=$(pgrep -n -f "$BIN serve")
DB=$(readlink "/proc/$PID/cwd")/data/switchboard.sqlite
while kill -0 "$BENCH" 2>/dev/null && kill -0 "$PID" 2>/dev/null; do
  python3 - "$DB" "$SECONDS" >> "$OUT/$LABEL.rows" 2>/dev/null <<'PY' || true
import sqlite3, sys
c = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=5)
events = c.execute("SELECT count(*) FROM processed_events").fetchone()[0]
calls = c.execute("SELECT count(*) FROM calls").fetchone()[0]
print(f"t={sys.argv[2]}s events={events} calls={calls}")
PY
  sleep 10
done
wait "$BENCH" || true
cat "$OUT/$LABEL.rows"
grep -E "setups/s|CPU/setup|errors" "$OUT/$LABEL.txt"
