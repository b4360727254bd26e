#!/bin/bash
# Samples a running server every INTERVAL s (default 60) until it exits (docs/benchmarks.md,
# "10,000 idle devices held for 20 minutes"):
#   scripts/sample-server.sh PID PORT [INTERVAL] >> FILE
# One line per sample: time, VmRSS (KB), CPU ticks (utime+stime, 1/100 s), load average, and
# the connection, device and ping figures from GET /metrics.
set -uo pipefail
PID=$1; PORT=$2; INTERVAL=${3:-60}
while kill -0 "$PID" 2>/dev/null; do
  rss=$(awk '/VmRSS/ {print $2}' "/proc/$PID/status" 2>/dev/null)
  cpu=$(awk '{print $14+$15}' "/proc/$PID/stat" 2>/dev/null)
  metrics=$(curl -s --max-time 5 "http://127.0.0.1:$PORT/metrics" \
    | grep -E "^switchboard_(ws_connections|devices_live|auth_failures_total|hub_pings_per_pass_count|hub_tick_lateness_microseconds_max) " | tr '\n' ' ')
  echo "$(date +%H:%M:%S) rss_kb=$rss cpu_ticks=$cpu load=$(cut -d' ' -f1 /proc/loadavg) $metrics"
  sleep "$INTERVAL"
done
