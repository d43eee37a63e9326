#!/usr/bin/env bash
# Builds a newer Redis than the 7.0 Debian bookworm ships, for `make bench` to measure the
# vote script on both side by side: the upstream source Debian trixie packages (checked
# against the SHA-256 in trixie's source index), built into target/redis-<version>/.
# Prints the redis-server path; builds only once. Needs gcc and make (a Rust toolchain's
# machine has them).
set -euo pipefail
cd "$(dirname "$0")/.."

version=8.0.2
sha256=caf3c0069f06fc84c5153bd2a348b204c578de80490c73857bee01d9b5d7401f
dir=target/redis-$version
bin=$dir/src/redis-server

if [ ! -x "$bin" ]; then
  mkdir -p target
  tarball=target/redis_$version.orig.tar.gz
  echo "building redis-server $version in $dir (about three minutes on two cores) ..." >&2
  curl -fsSL -o "$tarball" \
    "http://deb.debian.org/debian/pool/main/r/redis/redis_$version.orig.tar.gz"
  echo "$sha256  $tarball" | sha256sum -c --quiet
  rm -rf "$dir"
  tar -xzf "$tarball" -C target
  make -C "$dir" -j"$(nproc)" >"$dir.build.log" 2>&1 ||
    { echo "error: the build failed; see $dir.build.log" >&2; exit 1; }
fi
echo "$PWD/$bin"
