#!/usr/bin/env bash
# Makes sure a Redis answers at OVATION_REDIS_URL (default redis://127.0.0.1:6379): when
# none does, starts a local redis-server with its data under ./data/redis, append-only
# file on (fsync every second) and no eviction, so `make run` needs nothing running
# beforehand.
set -euo pipefail

# A cluster is the operator's to run: nothing is started for OVATION_REDIS_CLUSTER.
[ -n "${OVATION_REDIS_CLUSTER:-}" ] && exit 0

url="${OVATION_REDIS_URL:-redis://127.0.0.1:6379}"
hostport="${url#*://}"; hostport="${hostport##*@}"; hostport="${hostport%%/*}"
host="${hostport%%:*}"; port="${hostport##*:}"
[ "$port" = "$hostport" ] && port=6379

if redis-cli -h "$host" -p "$port" ping >/dev/null 2>&1; then
  exit 0
fi
case "$host" in
  127.0.0.1|localhost) ;;
  *) echo "error: no Redis answers at $url and it is not local, so none is started" >&2; exit 1 ;;
esac
mkdir -p data/redis
echo "starting redis-server on $host:$port (data in data/redis, append-only)" >&2
redis-server --daemonize yes --bind "$host" --port "$port" --dir "$PWD/data/redis" \
  --appendonly yes --appendfsync everysec --maxmemory-policy noeviction \
  --logfile "$PWD/data/redis/redis.log"
for _ in $(seq 50); do
  redis-cli -h "$host" -p "$port" ping >/dev/null 2>&1 && exit 0
  sleep 0.1
done
echo "error: redis-server did not start; see data/redis/redis.log" >&2
exit 1
