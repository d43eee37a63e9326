#!/usr/bin/env bash
# Runs schemathesis against the API's own OpenAPI document: a server on a free port with
# its own redis-server and a fresh SQLite file, a few boards to find, and every response
# checked (no 5xx, documented statuses, bodies matching their schemas, content types).
# Fails on any finding. schemathesis is installed, pinned, in a local virtualenv under
# target/. SCHEMATHESIS_MAX_TIME bounds the run (seconds, default 120).
set -euo pipefail
cd "$(dirname "$0")/.."

version=4.32.5
venv=target/schemathesis-venv
if [ ! -x "$venv/bin/schemathesis" ] || ! "$venv/bin/schemathesis" --version | grep -q "$version"; then
  echo "installing schemathesis $version in $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$version"
fi

key=schemathesis-master-key-0123456789
. scripts/test-server.sh

api() {
  curl -fsS -X "$1" "$base$2" -H "Authorization: Bearer $key" \
    -H 'Content-Type: application/json' -d "$3" >/dev/null
}
# Boards the generated requests can find: slugs and member ids that random strings hit
# (single letters), a public board, rules, and a vote so reads have data.
api POST /api/v1/admin/boards '{"slug": "a", "title": "A", "public_page": true, "membership": "open"}'
api POST /api/v1/admin/boards '{"slug": "0", "title": "Zero", "carry_over": 0.1, "multiplier": 2}'
api PUT /api/v1/admin/boards/0/members '{"members": [{"id": "0"}, {"id": "a"}]}'
api POST /api/v1/admin/boards/0/rules '{"name": "r", "dimensions": ["voter"], "window": "rolling:1h", "limit": 100000}'
api POST /api/v1/boards/a/votes '{"member": "0", "voter": "v"}'
api POST /api/v1/boards/0/votes '{"member": "0", "voter": "v"}'

# Deletions run last, in a pass of their own, so the boards above stay for the rest.
budget=${SCHEMATHESIS_MAX_TIME:-120}
run() {
  "$venv/bin/schemathesis" run "$base/api/v1/openapi.json" \
    --checks not_a_server_error,status_code_conformance,response_schema_conformance,content_type_conformance \
    --header "Authorization: Bearer $key" \
    --request-timeout 10 \
    --suppress-health-check all \
    --report-dir target/schemathesis-report \
    --no-color "$@"
}
status=0
run --exclude-method DELETE --max-time $((budget * 5 / 6)) || status=$?
run --include-method DELETE --max-time $((budget / 6)) || status=$?
if [ "$status" -ne 0 ]; then
  echo "== server log" >&2
  tail -n 50 "$work/server.log" >&2
fi
exit "$status"
