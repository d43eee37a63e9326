# Sourced by the scripts that test a running server (schemathesis.sh, test-clients.sh):
# builds the debug binary, starts its own redis-server and the server on free ports with
# a fresh SQLite file and the master key $key (extra OVATION_* settings may be exported
# before sourcing), waits until it is ready, and stops both on exit. Sets $base (the
# server's address) and $work (its temporary directory, with server.log).
cargo build --quiet --bin ovation

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
work=$(mktemp -d)
redis_port=$(free_port)
http_port=$(free_port)
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
OVATION_ADMIN_PASSWORD=test-server-admin \
OVATION_COOKIE_SECURE=false \
OVATION_LOG=error \
  target/debug/ovation serve >"$work/server.log" 2>&1 &
pids+=($!)

base="http://127.0.0.1:$http_port"
for _ in $(seq 150); do
  curl -fs "$base/readyz" >/dev/null 2>&1 && break
  sleep 0.2
done
