#!/bin/bash
# One signaling benchmark run against a fresh server (docs/benchmarks.md, "Signaling"):
#   scripts/bench-signaling.sh BIN LABEL IDLE PAIRS DURATION [SHARDS]   (SHARDS: http.shards, default 2 = the server default)
# BIN: a release build of switchboard (swift build -c release --product switchboard).
# Starts `BIN serve` in a fresh temp dir on a free loopback port, runs `BIN bench signaling`
# with IDLE idle devices and PAIRS caller/callee pairs (3 callee devices) for DURATION s
# after a 3 s warm-up, prints the key lines (setups/s, server CPU per setup, latencies, database growth) and
# stops the server. Output kept in $OUT (default ./bench-out/LABEL.txt).
# IDLE_PROCS=K (env): child processes holding the idle devices (--idle-processes K; 0 = all
# in the bench process, as before); unset = the bench's default, one child per 1,250 idle (8 for 10,000).
# PAIRS_PER_LOOP=N (env): pairs per event loop of the bench process (--pairs-per-loop N;
# unset = the bench's default). Only with a binary that knows the flag.
# CLIENT=soup|lean (env): the pairs' WebSocket client (--client; unset = the bench's
# default, lean). Only with a binary that knows the flag.
# BENCH_BIN=PATH (env): run the benchmark side from another build (default BIN), e.g. the
# current benchmark against an older server.
# IDLE_CLIENT=soup|lean (env): the idle children's WebSocket client (--idle-client; unset =
# the bench's default, lean). Only with a binary that knows the flag.
# RATE=R (env): setups/s offered over all pairs (--rate R; each pair one setup per PAIRS/R s);
# unset = each pair as fast as the server's command limit allows. Only with a binary that knows the flag.
# ALIGNED=1 (env): every pair starts its setups at once, at exact intervals
# (--aligned-setups, the schedule before 2026-11-30 15:40). Only with a binary that knows the flag.
set -euo pipefail
BIN=$(realpath "$1"); LABEL=$2; IDLE=$3; PAIRS=$4; DUR=$5; SHARDS=${6:-2}
IDLE_FLAGS=()
[ -n "${IDLE_PROCS:-}" ] && IDLE_FLAGS=(--idle-processes "$IDLE_PROCS")
[ -n "${PAIRS_PER_LOOP:-}" ] && IDLE_FLAGS+=(--pairs-per-loop "$PAIRS_PER_LOOP")
[ -n "${CLIENT:-}" ] && IDLE_FLAGS+=(--client "$CLIENT")
[ -n "${IDLE_CLIENT:-}" ] && IDLE_FLAGS+=(--idle-client "$IDLE_CLIENT")
[ -n "${ALIGNED:-}" ] && IDLE_FLAGS+=(--aligned-setups)
[ -n "${RATE:-}" ] && IDLE_FLAGS+=(--rate "$RATE")
OUT=${OUT:-$PWD/bench-out}
mkdir -p "$OUT"
DIR=$(mktemp -d)
# Stop the server and wait for it to exit: a script run right after this one would
# otherwise start its server while this one still shuts down.
SPID=""
stop_server() {
  [ -n "$SPID" ] && kill "$SPID" 2>/dev/null || return 0
  for _ in $(seq 300); do kill -0 "$SPID" 2>/dev/null || return 0; sleep 0.1; done
  echo "server $SPID still running 30 s after SIGTERM; killing it" >&2
  kill -9 "$SPID" 2>/dev/null || true
}
trap 'stop_server; rm -rf "$DIR"' EXIT
cd "$DIR"
free_port() { python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.'"$1"'); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT=$(free_port SOCK_STREAM)
# The media plane on a free loopback port too, not the default 0.0.0.0:10000, which another
# server (a run just before, a second benchmark) may hold.
MEDIA_PORT=$(free_port SOCK_DGRAM)
SWITCHBOARD_HTTP_HOST=127.0.0.1 SWITCHBOARD_HTTP_PORT=$PORT SWITCHBOARD_HTTP_SHARDS=$SHARDS \
  SWITCHBOARD_MEDIA_HOST=127.0.0.1 SWITCHBOARD_MEDIA_PORT=$MEDIA_PORT \
  SWITCHBOARD_LOG_LEVEL=warning "$BIN" serve 2>"$DIR/server.log" &
SPID=$!
UP=0
for _ in $(seq 100); do
  [ -f data/token-secret ] && curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && UP=1 && break
  sleep 0.1
done
if [ "$UP" != 1 ]; then
  # Not up after 10 s (it exited, or cannot bind the port): say why instead of running the
  # benchmark against nothing.
  echo "server did not come up on 127.0.0.1:$PORT within 10 s ($(kill -0 "$SPID" 2>/dev/null && echo running || echo exited)); its log:" >&2
  tail -20 "$DIR/server.log" >&2
  exit 1
fi
BENCH=$(realpath "${BENCH_BIN:-$BIN}")
"$BENCH" bench signaling --url "ws://127.0.0.1:$PORT/v1/ws" --secret-file ./data/token-secret \
  --idle "$IDLE" "${IDLE_FLAGS[@]}" --pairs "$PAIRS" --callee-devices 3 --duration "$DUR" --warmup 3 --server-pid "$SPID" > "$OUT/$LABEL.txt" 2>&1
echo "== $LABEL (load $(cut -d' ' -f1-3 /proc/loadavg))" >> "$OUT/$LABEL.txt"
grep -E "idle|setups/s|CPU|waiting|load|command→result|candidate relay|errors|memory|database|pair client|offered rate" "$OUT/$LABEL.txt"
