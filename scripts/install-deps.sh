#!/usr/bin/env bash
# Installs the Debian packages the project needs when they are missing: redis-server for
# running and testing; with `--browser` (what `make test` asks for), also Chromium and
# ChromeDriver for the browser tests (and a Chinese font for their screenshots), Node.js
# and npm for the TypeScript client's tests, and
# nginx for the reverse-proxy test, unpacked under target/nginx from Debian's package
# without installing it (no service starts); with `--bench`, wrk for the benchmark, and
# Lua 5.1 and valgrind for scripts/profile-vote.sh. Runs apt-get as root, or through sudo
# when available.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if [ "${1:-}" = "--bench" ]; then
  command -v wrk >/dev/null 2>&1 || missing+=(wrk)
  command -v lua5.1 >/dev/null 2>&1 || missing+=(lua5.1)
  command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
fi
if [ "${1:-}" = "--browser" ]; then
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
  # A Chinese font, so the Chinese pages' screenshots show characters, not boxes.
  [ -e /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ] || missing+=(fonts-wqy-microhei)
  # Node.js and npm for the TypeScript client's tests.
  command -v node >/dev/null 2>&1 || missing+=(nodejs)
  command -v npm >/dev/null 2>&1 || missing+=(npm)
fi
if [ "$(id -u)" -eq 0 ]; then
  apt=(apt-get)
elif command -v sudo >/dev/null 2>&1; then
  apt=(sudo apt-get)
else
  apt=()
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} ..." >&2
  if [ ${#apt[@]} -eq 0 ]; then
    echo "error: ${missing[*]} missing and no root to install it (apt-get install ${missing[*]})" >&2
    exit 1
  fi
  "${apt[@]}" update -qq
  DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq "${missing[@]}" >/dev/null
fi

if [ "${1:-}" = "--browser" ] && [ ! -x target/nginx/usr/sbin/nginx ]; then
  echo "unpacking nginx under target/nginx ..." >&2
  work=$(mktemp -d)
  (cd "$work" && "${apt[@]}" download -qq nginx 2>/dev/null ||
    { "${apt[@]}" update -qq && "${apt[@]}" download -qq nginx 2>/dev/null; })
  mkdir -p target/nginx
  dpkg -x "$work"/nginx_*.deb target/nginx
  rm -rf "$work"
fi
