#!/usr/bin/env bash
# Tests the Debian package: its contents and conffile, the unit under
# `systemd-analyze verify`, and the packaged binary, started with the packaged
# configuration (its paths pointed into a temporary directory, its own redis-server),
# answering /readyz 200. Fails on the first thing that is not so.
set -euo pipefail
cd "$(dirname "$0")/.."

pkg=$(scripts/package-deb.sh)
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "error: $*" >&2; exit 1; }

echo "== contents of $pkg" >&2
contents=$(dpkg-deb -c "$pkg" | awk '{print $1, $6}')
for want in "-rwxr-xr-x ./usr/bin/ovation" "-rw-r--r-- ./lib/systemd/system/ovation.service" \
  "-rw-r--r-- ./etc/ovation/ovation.toml" "-rw-r--r-- ./usr/share/doc/ovation/copyright"; do
  grep -qxF -- "$want" <<<"$contents" || fail "the package lacks $want"
done
dpkg-deb -x "$pkg" "$work/root"
dpkg-deb -e "$pkg" "$work/DEBIAN"
grep -qx /etc/ovation/ovation.toml "$work/DEBIAN/conffiles" || fail "ovation.toml is not a conffile"
[ "$(dpkg-deb -f "$pkg" Package)" = ovation ] || fail "the package is not named ovation"
grep -q 'adduser --system --group' "$work/DEBIAN/postinst" || fail "postinst makes no system user"

echo "== systemd-analyze verify" >&2
unit="$work/root/lib/systemd/system/ovation.service"
for want in "User=ovation" "StateDirectory=ovation" "EnvironmentFile=-/etc/ovation/ovation.env" \
  "Restart=on-failure" "NoNewPrivileges=yes" "ProtectSystem=strict" "ProtectHome=yes" \
  "PrivateTmp=yes" "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX" \
  "SystemCallFilter=@system-service"; do
  grep -qxF "$want" "$unit" || fail "the unit lacks $want"
done
# Verified on this host's systemd, with ExecStart pointing at the unpacked binary; any
# warning (an unknown key, say) fails, as an error does.
sed "s#^ExecStart=/usr/bin/ovation#ExecStart=$work/root/usr/bin/ovation#" "$unit" >"$work/ovation.service"
verified=$(systemd-analyze verify --man=no "$work/ovation.service" 2>&1) ||
  fail "systemd-analyze verify: $verified"
[ -z "$verified" ] || fail "systemd-analyze verify: $verified"

echo "== the packaged binary with the packaged configuration" >&2
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
redis_port=$(free_port)
http_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --loglevel warning \
  >"$work/redis.log" 2>&1 &
pids+=($!)
mkdir -p "$work/state"
sed -e "s#^bind = .*#bind = \"127.0.0.1:$http_port\"#" \
    -e "s#^database_url = .*#database_url = \"sqlite://$work/state/ovation.db?mode=rwc\"#" \
    -e "s#^redis_url = .*#redis_url = \"redis://127.0.0.1:$redis_port\"#" \
    "$work/root/etc/ovation/ovation.toml" >"$work/ovation.toml"
cmp -s <(grep -v '^\(bind\|database_url\|redis_url\) = ' "$work/ovation.toml") \
  <(grep -v '^\(bind\|database_url\|redis_url\) = ' "$work/root/etc/ovation/ovation.toml") ||
  fail "the test changed more of the packaged configuration than its paths"
"$work/root/usr/bin/ovation" --version | grep -q "^ovation $(dpkg-deb -f "$pkg" Version) (" ||
  fail "ovation --version does not print the package's version"
(cd "$work/state" && OVATION_CONFIG="$work/ovation.toml" OVATION_ADMIN_PASSWORD=package-test-pw \
  exec "$work/root/usr/bin/ovation" serve >"$work/ovation.log" 2>&1) &
pids+=($!)
for _ in $(seq 100); do
  if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$http_port/readyz")" = 200 ]; then
    echo "the packaged service answers /readyz 200" >&2
    exit 0
  fi
  sleep 0.2
done
cat "$work/ovation.log" >&2
fail "the packaged service never answered /readyz 200"
