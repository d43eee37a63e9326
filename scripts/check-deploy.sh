#!/usr/bin/env bash
# Checks the deployment files that are not code: the Prometheus alert rules with
# promtool (taken from Debian's prometheus package without installing a server, kept
# under target/), the Grafana dashboard as JSON with the panels it must have, and
# compose.yaml against the nginx configuration it mounts and the image it builds. That
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

python3 -c 'import yaml' 2>/dev/null || python3 -m pip install --quiet --user pyyaml
python3 - <<'PY'
import re
import yaml
compose = yaml.safe_load(open("compose.yaml"))
services = compose["services"]
for name in ["ovation-1", "ovation-2", "postgres", "redis", "nginx"]:
    assert name in services, f"compose.yaml has no service {name}"
conf = open("deploy/nginx/ovation.conf").read()
upstream = re.search(r"upstream ovation \{(.*?)\}", conf, re.S).group(1)
servers = re.findall(r"server ([\w.-]+):(\d+);", upstream)
bind_port = re.search(r"OVATION_BIND=0\.0\.0\.0:(\d+)", open("Dockerfile").read()).group(1)
assert servers, "the nginx upstream names no server"
for host, port in servers:
    assert host in services, f"nginx's upstream {host} is not a compose service"
    assert port == bind_port, f"nginx reaches {host} on {port}, the image listens on {bind_port}"
    env = services[host]["environment"]
    nginx_ip = services["nginx"]["networks"]["ovation"]["ipv4_address"]
    assert env["OVATION_TRUSTED_PROXIES"] == nginx_ip, f"{host} does not trust nginx's address"
    assert "OVATION_SESSION_KEY" in env, f"{host} has no shared session key"
mounts = services["nginx"]["volumes"]
assert any(m.startswith("./deploy/nginx/ovation.conf:") for m in mounts), "nginx does not mount deploy/nginx/ovation.conf"
print(f"compose.yaml: {len(services)} services, nginx in front of {len(servers)} instances")
PY
