#!/usr/bin/env bash
# Tests clients/typescript and the examples built on it: the client's types are what
# openapi-typescript makes of docs/openapi.json, it builds, and its tests and the
# examples' (Node's test runner) pass against a live server on a free port with its own
# redis-server and a fresh SQLite file.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v node >/dev/null 2>&1 || { echo "error: Node.js 20 or later is needed for the TypeScript client's tests" >&2; exit 1; }
cargo build --quiet --bin ovation

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
work=$(mktemp -d)
redis_port=$(free_port)
http_port=$(free_port)
key=client-test-master-key-0123456789
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no \
  --loglevel warning >"$work/redis.log" 2>&1 &
pids+=($!)
OVATION_BIND="127.0.0.1:$http_port" \
OVATION_DATABASE_URL="sqlite://$work/ovation.db?mode=rwc" \
OVATION_REDIS_URL="redis://127.0.0.1:$redis_port" \
OVATION_MASTER_KEY="$key" \
OVATION_ADMIN_PASSWORD=client-test-admin \
OVATION_EVENTS_INTERVAL_MS=200 \
OVATION_LOG=error \
  target/debug/ovation serve >"$work/server.log" 2>&1 &
pids+=($!)
base="http://127.0.0.1:$http_port"
for _ in $(seq 150); do
  curl -fs "$base/readyz" >/dev/null 2>&1 && break
  sleep 0.2
done

cd clients/typescript
npm ci --no-audit --no-fund --silent
npm run --silent check-schema
npm run --silent build
OVATION_URL="$base" OVATION_KEY="$key" npm test || { cat "$work/server.log" >&2; exit 1; }
cd ../..
OVATION_URL="$base" OVATION_KEY="$key" node --test examples/test/ || { cat "$work/server.log" >&2; exit 1; }
