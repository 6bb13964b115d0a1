#!/usr/bin/env bash
# The idle run of #36: CLIENTS WebSocket sessions (default 512,000) on `bayou start --workers N
# --redis` (N from the 20,000 open files a process may hold), from `bayou-loadtest connections`
# spread over loopback source addresses (20,000 per address, each on its own chosen port), each
# session subscribed to one of CHANNELS channels, held HOLD with the idle heartbeat, then one
# publish to every channel timed until it reached every session. Writes OUT.html, OUT.json,
# OUT.txt (the report) and OUT.mem.log (free -m every 10 s).
#
# Bounded: the ramp stops at MAX_RAMP or when MemAvailable falls below MIN_AVAILABLE MB (the
# sessions opened so far are held and the run is marked failed); a watchdog kills the run when
# MemAvailable falls below ABORT_AVAILABLE MB; the whole run is killed after LIMIT. Loopback
# only; it stops only the processes it started (redis-server, bayou start, the load tester),
# by pid.
#
#   CLIENTS=20000 HOLD=60s bash packages/loadtest/bench/idle-run.sh     # a short check
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

CLIENTS=${CLIENTS:-512000}
CHANNELS=${CHANNELS:-1000}
HOLD=${HOLD:-10m}
RAMP=${RAMP:-2000}
MAX_RAMP=${MAX_RAMP:-9m}
MIN_AVAILABLE=${MIN_AVAILABLE:-3000}
ABORT_AVAILABLE=${ABORT_AVAILABLE:-1500}
LIMIT=${LIMIT:-30m}
# A server worker takes at most 19,500 connections (--max-connections) under ulimit -n 20,000;
# the cluster primary deals them round-robin, so aim at 17,000 each.
SERVER_WORKERS=${SERVER_WORKERS:-$(((CLIENTS + 16999) / 17000))}
# A generator worker holds at most ~19,900 sockets: 19,000 each.
GEN_WORKERS=${GEN_WORKERS:-$(((CLIENTS + 18999) / 19000))}
# 20,000 sessions per source address (of ~28,000 ephemeral ports to the one server port).
ADDRESSES=${ADDRESSES:-127.0.0.2-127.0.0.$((2 + (CLIENTS + 19999) / 20000))}
# Session i binds source port LOCAL_PORT_BASE + i / addresses: below the ephemeral range
# (32768–60999), and with the port chosen the kernel does not search for a free one.
LOCAL_PORT_BASE=${LOCAL_PORT_BASE:-10000}
PORT=${PORT:-18600}
REDIS_PORT=${REDIS_PORT:-6392}
OUT=${OUT:-idle-run}

pids=()
# Last started, first stopped (the watchdog, the server, then Redis), each given 30 s after
# two SIGTERMs.
stop_all() {
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    p=${pids[i]}
    kill -TERM "$p" 2>/dev/null || continue
    # A second SIGTERM makes bayou start end its workers at once (no graceful drain).
    sleep 1
    kill -TERM "$p" 2>/dev/null
    for _ in $(seq 1 60); do
      kill -0 "$p" 2>/dev/null || break
      sleep 0.5
    done
    kill -KILL "$p" 2>/dev/null
  done
}
trap stop_all EXIT

redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no >"$OUT.redis.log" 2>&1 &
pids+=($!)
BAYOU_LOG_LEVEL=warn node "$root/packages/server/dist/cli.js" start --host 127.0.0.1 --port "$PORT" \
  --workers "$SERVER_WORKERS" --redis "redis://127.0.0.1:$REDIS_PORT" --max-connections 19500 \
  --shutdown-timeout 5000 >"$OUT.server.log" 2>&1 &
server=$!
pids+=("$server")
for _ in $(seq 1 240); do
  grep -q 'Bayou listening' "$OUT.server.log" && break
  sleep 0.5
done
grep -q 'Bayou listening' "$OUT.server.log" || { echo "bayou start did not listen" >&2; exit 2; }

# free -m every 10 s; the run is killed when MemAvailable falls below ABORT_AVAILABLE MB.
(
  while sleep 10; do
    echo "$(date -u +%T) $(free -m | awk '/^Mem:/ {print "used " $3 " MB, available " $7 " MB"}')"
    avail=$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo)
    if ((avail < ABORT_AVAILABLE)); then
      echo "$(date -u +%T) ABORT: MemAvailable $avail MB below $ABORT_AVAILABLE MB"
      kill -TERM "$server" 2>/dev/null
    fi
  done
) >"$OUT.mem.log" 2>&1 &
pids+=($!)

echo "$(date -u +%T) server pid $server, $SERVER_WORKERS workers; generator $GEN_WORKERS workers over $ADDRESSES" |
  tee "$OUT.txt"
timeout --signal=TERM "$LIMIT" node "$root/packages/loadtest/dist/cli.js" connections \
  --url "http://127.0.0.1:$PORT/bayeux" --clients "$CLIENTS" --channels "$CHANNELS" --ramp "$RAMP" \
  --max-ramp "$MAX_RAMP" --min-available "$MIN_AVAILABLE" --hold "$HOLD" --broadcast --drain 30s \
  --workers "$GEN_WORKERS" --concurrency 100 --local-addresses "$ADDRESSES" \
  --local-port-base "$LOCAL_PORT_BASE" --server-pid "$server" \
  --metrics-url off --json "$OUT.json" --html "$OUT.html" 2>"$OUT.progress.log" | tee -a "$OUT.txt"
code=${PIPESTATUS[0]}
echo "$(date -u +%T) exit $code" | tee -a "$OUT.txt"
exit "$code"
