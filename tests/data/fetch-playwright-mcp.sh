#!/usr/bin/env bash
# Install the real Playwright MCP server (npm package @playwright/mcp, pinned) into
# tests/data/cache/playwright-mcp/, the reference the parity tests read (tools/list) and drive.
# It runs with Debian's chromium (--executable-path), so no browser is downloaded.
set -euo pipefail
VERSION=0.0.83
exec bash "$(dirname "$0")/fetch-npm-tool.sh" playwright-mcp @playwright/mcp "$VERSION" cli.js
