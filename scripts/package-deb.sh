#!/usr/bin/env bash
# Builds the Debian package target/deb/ovation_<version>_<arch>.deb: /usr/bin/ovation
# (the release build), the systemd unit ovation.service, /etc/ovation/ovation.toml (a
# conffile), the ovation system user made by postinst, and the docs. Prints the
# package's path. OVATION_BINARY names a binary already built to package instead (CI
# packages the test build's, which tests the packaging without a second compile).
set -euo pipefail
cd "$(dirname "$0")/.."

binary=${OVATION_BINARY:-}
if [ -z "$binary" ]; then
  cargo build --release --locked --bin ovation >&2
  binary=target/release/ovation
fi
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
arch=$(dpkg --print-architecture)
root=target/deb/ovation_${version}_${arch}
rm -rf "$root"
install -d "$root/DEBIAN" "$root/usr/bin" "$root/lib/systemd/system" "$root/etc/ovation" \
  "$root/usr/share/doc/ovation"
install -m 0755 "$binary" "$root/usr/bin/ovation"
strip "$root/usr/bin/ovation" 2>/dev/null || true
install -m 0644 deploy/debian/ovation.service "$root/lib/systemd/system/ovation.service"
install -m 0644 deploy/debian/ovation.toml "$root/etc/ovation/ovation.toml"
install -m 0644 README.md CHANGELOG.md "$root/usr/share/doc/ovation/"
cat >"$root/usr/share/doc/ovation/copyright" <<'COPYRIGHT'
Ovation, a real-time voting and leaderboard service. MIT licence.
vendor/actix-http and vendor/sqlx-core: MIT or Apache-2.0, as published upstream.
COPYRIGHT
for script in postinst prerm postrm; do
  install -m 0755 "deploy/debian/$script" "$root/DEBIAN/$script"
done
echo /etc/ovation/ovation.toml >"$root/DEBIAN/conffiles"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<CONTROL
Package: ovation
Version: $version
Architecture: $arch
Maintainer: Ovation <ovation@localhost>
Installed-Size: $size
Depends: libc6 (>= 2.36), adduser
Recommends: redis-server
Suggests: postgresql | mariadb-server
Section: net
Priority: optional
Description: real-time voting and leaderboards
 Ovation takes votes on public pages, in apps and through backends, checks rate
 limits atomically with every vote, and serves live rankings by hour, day, week,
 month, rolling window and trend, with a dashboard for operations staff. Live
 rankings are in Redis; configuration, the archive and the vote ledger in SQL.
CONTROL
dpkg-deb --root-owner-group --build "$root" "$root.deb" >&2
echo "$root.deb"
