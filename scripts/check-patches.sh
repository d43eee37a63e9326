#!/usr/bin/env bash
# Holds the crates carried under vendor/ to what they claim to be: every
# `[patch.crates-io]` entry is used (a `cargo update` that moved past a patched version
# leaves it unused, and cargo only warns), and each vendored copy is the published crate
# with its `.patch` beside it applied, no more (so a reviewer reads the patch, not the
# crate). Fetches each published crate from crates.io.
set -euo pipefail
cd "$(dirname "$0")/.."

warnings=$(cargo metadata --format-version 1 2>&1 >/dev/null || true)
if grep -q "was not used in the crate graph" <<<"$warnings" || grep -q '^\[\[patch.unused\]\]' Cargo.lock; then
  echo "error: a [patch.crates-io] entry of Cargo.toml is not used:" >&2
  grep "was not used" <<<"$warnings" >&2 || sed -n '/^\[\[patch.unused\]\]/,/^$/p' Cargo.lock >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for patch in vendor/*.patch; do
  name=$(basename "$patch" .patch)
  version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "vendor/$name/Cargo.toml" | head -n 1)
  curl -sSfL "https://static.crates.io/crates/$name/$name-$version.crate" -o "$work/$name.crate"
  tar -xzf "$work/$name.crate" -C "$work"
  (cd "$work/$name-$version" && patch -s -E -p1 <"$OLDPWD/$patch")
  if ! diff -r "$work/$name-$version/src" "vendor/$name/src" >"$work/$name.diff" ||
     ! diff "$work/$name-$version/Cargo.toml" "vendor/$name/Cargo.toml" >>"$work/$name.diff"; then
    echo "error: vendor/$name is not $name $version with $patch applied:" >&2
    head -n 40 "$work/$name.diff" >&2
    exit 1
  fi
  echo "vendor/$name: $name $version with $patch ($(grep -c '^[-+][^-+]' "$patch") changed lines)"
done
