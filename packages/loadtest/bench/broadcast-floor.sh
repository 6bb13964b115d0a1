#!/usr/bin/env bash
# The broadcast against the raw `ws` floor (#36: what replaces the 2 s target on this
# machine). N idle WebSocket sessions (default 19,000: one process's worth under 20,000 open
# files) on each server in turn, one process each: the raw ws floors (bench/servers/
# ws-floor.mjs, batched and frame), `bayou start` (memory engine) and `bayou start --redis`;
# the same `bayou-loadtest connections` generator, each session subscribed to one of 1,000
# channels, held HOLD, then one publish to every channel timed until every session has its
# message. ROUNDS rounds, servers interleaved. Loopback only; it stops what it started, by pid.
#
#   bash packages/loadtest/bench/broadcast-floor.sh            # OUT=broadcast-floor
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
N=${N:-19000}
HOLD=${HOLD:-20s}
ROUNDS=${ROUNDS:-2}
PORT=${PORT:-18710}
REDIS_PORT=${REDIS_PORT:-6399}
OUT=${OUT:-broadcast-floor}
mkdir -p "$OUT"

pid=''
rpid=''
stop() {
  [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  [ -n "$rpid" ] && kill -TERM "$rpid" 2>/dev/null && wait "$rpid" 2>/dev/null
  pid=''
  rpid=''
}
trap stop EXIT

# Waits until the server's output ($OUT/server.out) has $1.
listening() {
  for _ in $(seq 1 150); do
    grep -q "$1" "$OUT/server.out" && return 0
    sleep 0.1
  done
  echo "the server did not listen: $(tail -3 "$OUT/server.out")" >&2
  exit 2
}

for round in $(seq 1 "$ROUNDS"); do
  for s in ws-batched ws-frame bayou bayou-redis; do
    case $s in
      ws-batched | ws-frame)
        node "$here/servers/ws-floor.mjs" "${s#ws-}" >"$OUT/server.out" 2>&1 &
        pid=$!
        listening 'listening on'
        url=$(grep -o 'http://[^ ]*' "$OUT/server.out")
        ;;
      bayou)
        BAYOU_LOG_LEVEL=warn node "$root/packages/server/dist/cli.js" start --host 127.0.0.1 --port "$PORT" \
          --max-connections 19500 >"$OUT/server.out" 2>&1 &
        pid=$!
        listening 'Bayou listening'
        url="http://127.0.0.1:$PORT/bayeux"
        ;;
      bayou-redis)
        redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no >"$OUT/redis.out" 2>&1 &
        rpid=$!
        BAYOU_LOG_LEVEL=warn node "$root/packages/server/dist/cli.js" start --host 127.0.0.1 --port "$PORT" \
          --redis "redis://127.0.0.1:$REDIS_PORT" --max-connections 19500 >"$OUT/server.out" 2>&1 &
        pid=$!
        listening 'Bayou listening'
        url="http://127.0.0.1:$PORT/bayeux"
        ;;
    esac
    timeout 180 node "$root/packages/loadtest/dist/cli.js" connections --url "$url" --clients "$N" \
      --channels 1000 --ramp 2000 --hold "$HOLD" --broadcast --drain 30s --workers 1 \
      --local-addresses 127.0.0.2-127.0.0.3 --server-pid "$pid" --metrics-url off --no-progress \
      >"$OUT/$s-$round.txt" 2>&1
    echo "$s round $round ($(date -u +%T), load $(cut -d' ' -f1 /proc/loadavg)): $(grep '^broadcast' "$OUT/$s-$round.txt" || tail -1 "$OUT/$s-$round.txt")"
    stop
  done
done
