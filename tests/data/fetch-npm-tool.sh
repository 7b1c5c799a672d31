#!/usr/bin/env bash
# Install one pinned npm package into tests/data/cache/NAME/ (a private node_modules of its own), for the
# tests that run it: fetch-npm-tool.sh NAME PACKAGE VERSION ENTRY, ENTRY being a file inside the package
# that must exist afterwards. No browser is downloaded (PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD). Idempotent; a
# failed install leaves nothing behind.
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: fetch-npm-tool.sh NAME PACKAGE VERSION ENTRY" >&2; exit 2; }
name=$1 package=$2 version=$3 entry=$4
here=$(cd "$(dirname "$0")" && pwd)
target="$here/cache/$name"
installed="$target/node_modules/$package"
if [ -s "$installed/$entry" ] && grep -q "\"version\": \"$version\"" "$installed/package.json"; then exit 0; fi
command -v npm >/dev/null 2>&1 || { echo "fetch-npm-tool.sh: npm is needed (apt-get install npm)" >&2; exit 1; }
mkdir -p "$here/cache"
rm -rf "$target.tmp"
mkdir -p "$target.tmp"
trap 'rm -rf "$target.tmp"' EXIT
echo '{"private": true}' >"$target.tmp/package.json"
(cd "$target.tmp" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --silent --no-audit --no-fund "$package@$version" >npm.log 2>&1) \
  || { cat "$target.tmp/npm.log" >&2; exit 1; }
[ -s "$target.tmp/node_modules/$package/$entry" ] || { echo "fetch-npm-tool.sh: $entry missing from $package@$version" >&2; exit 1; }
rm -f "$target.tmp/npm.log"
rm -rf "$target"
mv "$target.tmp" "$target"
echo "installed $package@$version into $target"
