#!/usr/bin/env bash
# Builds the container image from the Dockerfile the way this machine allows, and checks
# it: no base image can be pulled here and the usual container runtime is refused, so
# the bases are made from Debian's packages with debootstrap (kept under target/ between
# runs) and tagged locally, the build base holds the release binary (the Dockerfile then
# skips its compile), buildah builds with chroot isolation in the docker format (which
# keeps the HEALTHCHECK), and `buildah run` starts the image's service against a test
# Redis and SQLite until /readyz answers 200. With --build-only, it stops after the build.
# OVATION_BINARY names a binary already built to put in the build base, stripped of its
# debug sections, instead of the release build (CI uses the test build's).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -eq 0 ]; then apt=(apt-get); else apt=(sudo apt-get); fi
missing=()
command -v buildah >/dev/null 2>&1 || missing+=(buildah)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} ..." >&2
  "${apt[@]}" update -qq
  DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq "${missing[@]}" >/dev/null
fi
fail() { echo "error: $*" >&2; exit 1; }

binary=target/release/ovation
if [ -n "${OVATION_BINARY:-}" ]; then
  binary=target/image-binary
  strip -o "$binary" "$OVATION_BINARY"
else
  cargo build --release --locked --bin ovation >&2
fi

base=target/image-base
if [ ! -f "$base/done" ]; then
  echo "making the Debian base with debootstrap ..." >&2
  rm -rf "$base"
  mkdir -p "$base"
  debootstrap --variant=minbase --include=ca-certificates,curl bookworm "$base/rootfs" \
    http://deb.debian.org/debian >"$base/debootstrap.log" 2>&1 ||
    { tail -20 "$base/debootstrap.log" >&2; fail "debootstrap failed"; }
  touch "$base/done"
fi
export BUILDAH_ISOLATION=chroot
ctr=$(buildah from scratch)
buildah copy --quiet "$ctr" "$base/rootfs" / >/dev/null
buildah commit --quiet "$ctr" localhost/ovation-base:bookworm >/dev/null
buildah rm "$ctr" >/dev/null
ctr=$(buildah from --pull=never localhost/ovation-base:bookworm)
buildah copy --quiet "$ctr" "$binary" /out/ovation >/dev/null
buildah commit --quiet "$ctr" localhost/ovation-build:local >/dev/null
buildah rm "$ctr" >/dev/null
buildah bud --quiet --isolation=chroot --format docker --pull=never \
  --build-arg BUILD_IMAGE=localhost/ovation-build:local \
  --build-arg RUNTIME_IMAGE=localhost/ovation-base:bookworm \
  -t localhost/ovation:test . >/dev/null
echo "built localhost/ovation:test" >&2
[ "${1:-}" = "--build-only" ] && exit 0

inspect() { buildah inspect --type image --format "$1" localhost/ovation:test; }
[ "$(inspect '{{.Docker.Config.User}}')" = ovation ] || fail "the image does not run as ovation"
inspect '{{.Docker.Config.Volumes}}' | grep -q '/data' || fail "the image has no /data volume"
inspect '{{.Docker.Config.Healthcheck.Test}}' | grep -q '/readyz' || fail "the image's HEALTHCHECK does not ask /readyz"
[ "$(inspect '{{.Docker.Config.StopSignal}}')" = SIGTERM ] || fail "the image does not stop with SIGTERM"

work=$(mktemp -d)
chmod 0777 "$work"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -n "${run:-}" ] && buildah rm "$run" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
redis_port=$(free_port)
http_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --loglevel warning \
  >"$work/redis.log" 2>&1 &
pids+=($!)
run=$(buildah from --pull=never localhost/ovation:test)
# The image's VOLUME /data shadows a mount there: the test's data goes to /work.
buildah config \
  --env OVATION_BIND=127.0.0.1:$http_port \
  --env OVATION_REDIS_URL=redis://127.0.0.1:$redis_port \
  --env "OVATION_DATABASE_URL=sqlite:///work/ovation.db?mode=rwc" \
  --env OVATION_ADMIN_PASSWORD=image-test-password \
  "$run"
buildah run --isolation=chroot -v "$work:/work" "$run" -- /usr/bin/ovation serve \
  >"$work/ovation.log" 2>&1 &
pids+=($!)
for _ in $(seq 150); do
  if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$http_port/readyz")" = 200 ]; then
    echo "the image's service answers /readyz 200" >&2
    exit 0
  fi
  sleep 0.2
done
cat "$work/ovation.log" >&2
fail "the image's service never answered /readyz 200"
