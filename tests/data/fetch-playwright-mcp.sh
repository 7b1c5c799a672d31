#!/usr/bin/env bash
# Install the real Playwright MCP server (npm package @playwright/mcp, pinned) into
# tests/data/cache/playwright-mcp/, the reference the parity tests read (tools/list) and drive.
# It runs with Debian's chromium (--executable-path), so no browser is downloaded
# (PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD). Idempotent; a failed install leaves nothing behind.
set -euo pipefail
VERSION=0.0.83
here=$(cd "$(dirname "$0")" && pwd)
target="$here/cache/playwright-mcp"
cli="$target/node_modules/@playwright/mcp/cli.js"
if [ -s "$cli" ] && grep -q "\"version\": \"$VERSION\"" "$target/node_modules/@playwright/mcp/package.json"; then exit 0; fi
command -v npm >/dev/null 2>&1 || { echo "fetch-playwright-mcp.sh: npm is needed (apt-get install npm)" >&2; exit 1; }
mkdir -p "$here/cache"
rm -rf "$target.tmp"
mkdir -p "$target.tmp"
trap 'rm -rf "$target.tmp"' EXIT
echo '{"private": true}' >"$target.tmp/package.json"
(cd "$target.tmp" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --silent --no-audit --no-fund "@playwright/mcp@$VERSION" >npm.log 2>&1) \
  || { cat "$target.tmp/npm.log" >&2; exit 1; }
[ -s "$target.tmp/node_modules/@playwright/mcp/cli.js" ] || { echo "fetch-playwright-mcp.sh: cli.js missing from @playwright/mcp@$VERSION" >&2; exit 1; }
rm -f "$target.tmp/npm.log"
rm -rf "$target"
mv "$target.tmp" "$target"
echo "installed @playwright/mcp@$VERSION into $target"
