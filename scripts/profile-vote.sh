#!/usr/bin/env bash
# Where vote.lua's own time goes on the TV-final shape (a hot board's per-vote floor),
# which INFO commandstats cannot tell: runs the release server on a fresh redis-server with the
# TV-final board (benches/tv_final.rs), sends votes with wrk (bench/tv_vote.lua) while
# MONITOR captures the calls, then runs the largest captured vote.lua call in Lua 5.1
# with a stand-in redis.call and prints µs per vote, the VM instructions a vote runs and
# each function's share of them (bench/profile/profile.lua). `--lines`: by line too.
# Needs wrk and lua5.1 (scripts/install-deps.sh --bench) and builds the release binary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
cargo build --release --quiet
work=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
redis_port=$(free_port)
http_port=$(free_port)
redis-server --port "$redis_port" --save "" --appendonly no --daemonize yes \
  --pidfile "$work/redis.pid" --logfile "$work/redis.log"
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  redis-cli -p "$redis_port" shutdown nosave >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
key=profile-master-key-0123456789
env -i PATH="$PATH" OVATION_CONFIG=/dev/null OVATION_BIND="127.0.0.1:$http_port" \
  OVATION_DATABASE_URL="sqlite://$work/ovation.db?mode=rwc" \
  OVATION_REDIS_URL="redis://127.0.0.1:$redis_port" OVATION_MASTER_KEY="$key" \
  OVATION_ADMIN_PASSWORD=profile-password OVATION_WORKERS=2 OVATION_LOG=error \
  target/release/ovation >"$work/server.log" 2>&1 &
server_pid=$!
base="http://127.0.0.1:$http_port"
for _ in $(seq 100); do curl -sf "$base/readyz" >/dev/null && break; sleep 0.1; done
api() {
  curl -sf -X "$1" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
    "$base/api/v1/admin/$2" -d "$3" >/dev/null
}
api POST boards '{"slug": "final", "title": "TV final", "membership": "closed",
  "periods": ["hour", "day", "all"], "carry_over": 0.1, "ledger": true}'
api PUT boards/final/members "{\"members\": [$(for i in $(seq 10); do
  printf '{"id": "m%d", "name": "Member %d"}' "$i" "$i"; [ "$i" -lt 10 ] && printf ,; done)]}"
api POST boards/final/rules '{"name": "voter per day", "dimensions": ["voter"], "window": "day", "limit": 1000}'
api POST boards/final/rules '{"name": "voter and member per day", "dimensions": ["voter", "member"], "window": "day", "limit": 100}'
api POST boards/final/rules '{"name": "ip per minute", "dimensions": ["ip"], "window": "minute", "limit": 10000}'
wrk -t2 -c64 -d3s -s bench/tv_vote.lua -H "Authorization: Bearer $key" \
  -H 'Content-Type: application/json' "$base/api/v1/boards/final/votes" >/dev/null &
wrk_pid=$!
sleep 1.5
timeout 1 redis-cli -p "$redis_port" monitor >"$work/monitor.txt" || true
wait "$wrk_pid"
python3 bench/profile/monitor_call.py "$work/monitor.txt" >"$work/call.lua"
s=src/store/redis
lua5.1 bench/profile/profile.lua "$work/call.lua" 1000 $([ "${1:-}" = --lines ] && echo lines) -- \
  $s/window.lua $s/rules.lua $s/trend.lua $s/instance.lua $s/vote.lua
