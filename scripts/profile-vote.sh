#!/usr/bin/env bash
# Where vote.lua's own time goes on the TV-final shape (a hot board's per-vote floor),
# which INFO commandstats cannot tell: runs the release server on a fresh redis-server with the
# TV-final board (benches/tv_final.rs), sends votes with wrk (bench/tv_vote.lua) while
# MONITOR captures the calls, then runs the largest captured vote.lua call in Lua 5.1
# with a stand-in redis.call and prints µs per vote, the VM instructions a vote runs and
# each function's share of them (bench/profile/profile.lua).
#
# usage: scripts/profile-vote.sh [--lines] [--load | --watch rolling|hour] [--count REV]
#   --lines        by line too
#   --load         the load bench's board and votes in place of the TV final's (five
#                  periods, 200 members, carry-over 0.1, multiplier 3, three rules;
#                  benches/load.rs and bench/vote.lua): the shape set beside the Go peer
#   --watch W      the board has one watch (ip/24, a threshold no subject reaches) over a
#                  rolling 10 minutes or the calendar hour
#   --count REV    instead, counts what Redis executes a vote (callgrind): every captured
#                  vote.lua call replayed into a fresh redis-server with the script as
#                  committed at REV and as it is in the working tree
#                  (bench/profile/replay_count.py); counts do not drift with the host's
#                  speed, as timed figures on a shared VM do; with REPLAY_KEEP=DIR set,
#                  each replay's callgrind count is kept in DIR
# Needs wrk, lua5.1 and valgrind (scripts/install-deps.sh --bench) and builds the
# release binary.
set -euo pipefail
cd "$(dirname "$0")/.."
lines= watch= count= load=
while [ $# -gt 0 ]; do
  case "$1" in
    --lines) lines=lines; shift ;;
    --load) load=load; shift ;;
    --watch) watch=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    *) echo "usage: $0 [--lines] [--load | --watch rolling|hour] [--count REV]" >&2; exit 2 ;;
  esac
done
case "$watch" in
  '') ;;
  rolling) window=rolling:10m ;;
  hour) window=hour ;;
  *) echo "--watch takes rolling or hour" >&2; exit 2 ;;
esac
[ -z "$load" ] || [ -z "$watch" ] || { echo "--load takes no --watch" >&2; exit 2; }
[ -z "$count" ] || git rev-parse --verify -q "$count^{commit}" >/dev/null ||
  { echo "--count: no commit $count" >&2; exit 2; }
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
# `members N`: the members m1..mN, as the benches name them.
members() {
  printf '{"members": [%s]}' "$(for i in $(seq "$1"); do
    printf '{"id": "m%d", "name": "Member %d"}' "$i" "$i"; [ "$i" -lt "$1" ] && printf ,; done)"
}
if [ -n "$load" ]; then
  slug=bench votes=bench/vote.lua
  api POST boards '{"slug": "bench", "title": "Bench", "timezone": "Asia/Shanghai",
    "multiplier": 3, "carry_over": 0.1, "max_count": 10}'
  api PUT boards/bench/members "$(members 200)"
  api POST boards/bench/rules '{"name": "voter per day", "dimensions": ["voter"], "window": "day", "limit": 1000000}'
  api POST boards/bench/rules '{"name": "voter per member per hour", "dimensions": ["voter", "member"], "window": "hour", "limit": 1000000}'
  api POST boards/bench/rules '{"name": "member per minute", "dimensions": ["member"], "window": "minute", "limit": 1000000000}'
else
  slug=final votes=bench/tv_vote.lua
  api POST boards '{"slug": "final", "title": "TV final", "membership": "closed",
    "periods": ["hour", "day", "all"], "carry_over": 0.1, "ledger": true}'
  api PUT boards/final/members "$(members 10)"
  api POST boards/final/rules '{"name": "voter per day", "dimensions": ["voter"], "window": "day", "limit": 1000}'
  api POST boards/final/rules '{"name": "voter and member per day", "dimensions": ["voter", "member"], "window": "day", "limit": 100}'
  api POST boards/final/rules '{"name": "ip per minute", "dimensions": ["ip"], "window": "minute", "limit": 10000}'
  [ -z "$watch" ] || api POST boards/final/watches "{\"name\": \"a network\",
    \"dimensions\": [\"ip/24\"], \"window\": \"$window\", \"threshold\": 100000}"
fi
wrk -t2 -c64 -d3s -s "$votes" -H "Authorization: Bearer $key" \
  -H 'Content-Type: application/json' "$base/api/v1/boards/$slug/votes" >/dev/null &
wrk_pid=$!
sleep 1.5
timeout 1 redis-cli -p "$redis_port" monitor >"$work/monitor.txt" || true
wait "$wrk_pid"
s=src/store/redis
# The vote script's parts, in the order store/redis/vote.rs joins them (from its text on
# standard input).
parts() { sed -n '/VOTE_SOURCE/,/);/p' | grep -o '"[a-z_]*\.lua"' | tr -d '"'; }
if [ -n "$count" ]; then
  mkdir -p "$work/$count" "$work/working-tree"
  for part in $(parts <$s/vote.rs); do cat "$s/$part"; done >"$work/working-tree/vote.lua"
  for part in $(git show "$count:$s/vote.rs" | parts); do
    git show "$count:$s/$part"
  done >"$work/$count/vote.lua"
  served=$(sha1sum "$work/working-tree/vote.lua" | cut -d' ' -f1)
  python3 bench/profile/replay_count.py "$work/monitor.txt" "$served" \
    "$work/$count" "$work/working-tree"
  exit
fi
python3 bench/profile/monitor_call.py "$work/monitor.txt" >"$work/call.lua"
lua5.1 bench/profile/profile.lua "$work/call.lua" 1000 $lines -- \
  $(for part in $(parts <$s/vote.rs); do echo "$s/$part"; done)
