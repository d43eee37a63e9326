#!/usr/bin/env bash
# Tests clients/typescript and the examples built on it: the client's types are what
# openapi-typescript makes of docs/openapi.json, it builds, and its tests and the
# examples' (Node's test runner; the voting page's in Chromium) pass against a live
# server on a free port with its own redis-server and a fresh SQLite file, which lets
# the voting page's origin read it.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v node >/dev/null 2>&1 || { echo "error: Node.js 20 or later is needed for the TypeScript client's tests" >&2; exit 1; }
key=client-test-master-key-0123456789
export OVATION_EVENTS_INTERVAL_MS=200
EXAMPLE_PAGE_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export EXAMPLE_PAGE_PORT OVATION_CORS_ORIGINS="http://127.0.0.1:$EXAMPLE_PAGE_PORT"
. scripts/test-server.sh

cd clients/typescript
npm ci --no-audit --no-fund --silent
npm run --silent check-schema
npm run --silent build
OVATION_URL="$base" OVATION_KEY="$key" npm test || { cat "$work/server.log" >&2; exit 1; }
cd ../..
OVATION_URL="$base" OVATION_KEY="$key" node --test examples/test/*.test.mjs || { cat "$work/server.log" >&2; exit 1; }
