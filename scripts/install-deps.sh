#!/usr/bin/env bash
# Installs the Debian packages the project needs when they are missing: redis-server for
# running and testing; with `--browser`, also Chromium and ChromeDriver for the browser
# tests (and a Chinese font for their screenshots); with `--bench`, wrk for the benchmark
# and Lua 5.1 for scripts/profile-vote.sh. Runs apt-get as root, or through sudo
# when available.
set -euo pipefail

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if [ "${1:-}" = "--bench" ]; then
  command -v wrk >/dev/null 2>&1 || missing+=(wrk)
  command -v lua5.1 >/dev/null 2>&1 || missing+=(lua5.1)
fi
if [ "${1:-}" = "--browser" ]; then
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
  # A Chinese font, so the Chinese pages' screenshots show characters, not boxes.
  [ -e /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ] || missing+=(fonts-wqy-microhei)
fi
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing ${missing[*]} ..." >&2
if [ "$(id -u)" -eq 0 ]; then
  apt=(apt-get)
elif command -v sudo >/dev/null 2>&1; then
  apt=(sudo apt-get)
else
  echo "error: ${missing[*]} missing and no root to install it (apt-get install ${missing[*]})" >&2
  exit 1
fi
"${apt[@]}" update -qq
DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq "${missing[@]}" >/dev/null
