#!/usr/bin/env bash
# Checks the deployment files that are not code: the Prometheus alert rules with
# promtool (taken from Debian's prometheus package without installing a server, kept
# under target/), and the Grafana dashboard as JSON with the panels it must have. That
# every metric they name exists is a test of the integration suite (docs::deploy_…).
set -euo pipefail
cd "$(dirname "$0")/.."

promtool=target/promtool/usr/bin/promtool
if [ ! -x "$promtool" ]; then
  echo "fetching promtool from Debian's prometheus package" >&2
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  if [ "$(id -u)" -eq 0 ]; then apt=(apt-get); else apt=(sudo apt-get); fi
  (cd "$work" && "${apt[@]}" download -qq prometheus 2>/dev/null || { "${apt[@]}" update -qq && "${apt[@]}" download -qq prometheus; })
  mkdir -p target/promtool
  dpkg -x "$work"/prometheus_*.deb target/promtool
fi
"$promtool" check rules deploy/prometheus/alerts.yml

python3 - <<'PY'
import json
dash = json.load(open("deploy/grafana/ovation.json"))
titles = [p["title"] for p in dash["panels"]]
for wanted in ["Writes per second", "Refusals by rule", "latency", "Redis and SQL",
               "Ledger", "Live streams", "Jobs"]:
    assert any(wanted in t for t in titles), f"no panel about {wanted!r}: {titles}"
for p in dash["panels"]:
    assert p["targets"], f"panel {p['title']!r} has no query"
print(f"deploy/grafana/ovation.json: {len(titles)} panels")
PY
